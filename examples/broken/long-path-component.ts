// expect: IMGC2003 line 9
// exit: 2
// A file name is at most 255 bytes on Linux: refused when checked, not by
// mktemp halfway through a build.
import { debian12, image } from 'imgc';

export default image('long-path-component')
  .base(debian12())
  .customize((p) => p.file(`/etc/${'x'.repeat(300)}`, { content: 'x\n' }));
