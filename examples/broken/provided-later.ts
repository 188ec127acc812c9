// expect: IMGC0002 line 12 (also a type error)
// exit: 1
// One mistake, one diagnostic: the contract checker's, saying TypeScript saw it too.
// The file is owned by 'kube', but 'kube' is only created in provision,
// which runs after customize. (The types catch this too.)
import { debian12, image } from 'imgc';

export default image('provided-later')
  .base(debian12())
  .customize((p) =>
    p
      .file('/etc/kube.conf', { owner: 'kube', mode: '0640', content: 'x\n' }),
  )
  .provision((p) => p.user('kube', { system: true }));
