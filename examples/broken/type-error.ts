// expect: IMGC0003 line 12 (also a type error)
// exit: 1
// One mistake, one diagnostic: the contract checker's, saying TypeScript saw it too.
// The types reject an owner no earlier step created; the contract checker
// reports the same mistake (IMGC0003) with a suggestion.
import { debian12, image } from 'imgc';

export default image('type-error')
  .base(debian12())
  .customize((p) =>
    p.user('kube')
      .file('/etc/kube.conf', { owner: 'kueb', content: '' }),
  );
