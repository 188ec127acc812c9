// expect: IMGC1001 line 12
// expect: IMGC0003 line 12
// exit: 1
// The types reject an owner no earlier step created; the contract checker
// reports the same mistake (IMGC0003) with a suggestion.
import { debian12, image } from 'imgc';

export default image('type-error')
  .base(debian12())
  .customize((p) =>
    p.user('kube')
      .file('/etc/kube.conf', { owner: 'kueb', content: '' }),
  );
