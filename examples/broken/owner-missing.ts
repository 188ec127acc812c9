// expect: IMGC0003 line 15
// exit: 1
// A typo in the owner: the checker suggests the user that exists.
import { debian12, image } from 'imgc';

// A non-literal name: the types cannot see it, the contract checker can.
const owner: string = ['kubelt'][0]!;

export default image('owner-missing')
  .base(debian12())
  .customize((p) =>
    p
      .user('kubelet', { system: true })
      .directory('/var/lib/kubelet-data', { owner: 'kubelet', mode: '0750' })
      .file('/var/lib/kubelet-data/config', { owner, content: '{}\n' }),
  );
