// expect: IMGC0002 line 14 (also a type error)
// exit: 1
// One mistake, one diagnostic: the contract checker's, saying TypeScript saw it too.
// The image's provision phase uses a user that only the bootstrap phase
// creates. Bootstrap runs on existing hosts only, after every phase of the
// image, wherever it is declared: the image never has that user.
import { debian12, image } from 'imgc';

export default image('needs-bootstrap')
  .base(debian12())
  .bootstrap((p) => p.user('joiner', { system: true }))
  .provision((p) =>
    p
      .file('/etc/joined.conf', { owner: 'joiner', mode: '0640', content: 'x\n' }),
  );
