// expect: IMGC0007 line 12
// expect: IMGC0008 line 13
// expect: IMGC0009 line 14
// expect: IMGC0010 line 16
// exit: 0
// Only warnings: the image still checks, exit code 0.
import { debian12, image } from 'imgc';

export default image('warnings')
  .base(debian12())
  .customize((p) => p.file('/etc/motd', { content: 'hi\n' }).group('ops').packages(['curl'])
    .file('/etc/motd', { content: 'hi\n' })
    .group('ops')
    .packages(['curl']))
  .artifact((a) => a.tar('root.tar.gz')
    .tar('root.tar.gz'));
