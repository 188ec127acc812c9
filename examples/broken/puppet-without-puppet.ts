// expect: IMGC0001 line 13
// exit: 1
// puppetApply runs `puppet apply` inside the root, so the root needs the
// puppet package from an earlier step: nothing here installs it (the fix,
// before the manifest: .packages(['puppet'])).
import { debian12, image } from 'imgc';

export default image('puppet-without-puppet')
  .base(debian12())
  .customize((p) =>
    p
      .packages(['sudo'])
      .puppetApply('./puppet/site.pp', { provides: { user: ['deploy'] } })
      .file('/etc/sudoers.d/deploy', { mode: '0440', content: 'deploy ALL=(ALL) NOPASSWD: ALL\n' }),
  );
