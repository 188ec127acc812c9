// expect: IMGC2001 line 9
// exit: 1
// A NUL byte cannot be carried by any backend: refused, not mangled.
import { debian12, image } from 'imgc';

export default image('nul-in-file')
  .base(debian12())
  .customize((p) =>
    p.file('/etc/binary', { content: 'a\u0000b' }),
  );
