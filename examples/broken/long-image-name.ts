// expect: IMGC2003
// exit: 2
// An image name becomes part of file names (the build's work directory, the
// Packer template): 5,000 characters are refused before anything runs, and
// `imgc build` writes nothing.
import { debian12, image } from 'imgc';

export default image('n'.repeat(5000))
  .base(debian12())
  .customize((p) => p.file('/etc/motd', { content: 'hello\n' }));
