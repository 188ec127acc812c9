// expect: IMGC2003 line 10
// exit: 2
// '/tmp/a/../f' is '/tmp/f': refused with the spelling it resolves to, so the
// second writer of /tmp/f below cannot hide behind another spelling (IMGC0006).
import { debian12, image } from 'imgc';

export default image('path-with-dot-dot')
  .base(debian12())
  .customize((p) =>
    p.file('/tmp/a/../f', { content: 'A\n' })
      .file('/tmp/f', { content: 'B\n' }),
  );
