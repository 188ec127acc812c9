// expect: IMGC0006 line 11
// exit: 1
// Two steps write /etc/hostname with different contents.
import { debian12, image } from 'imgc';

export default image('conflicting-file')
  .base(debian12())
  .customize((p) => p.file('/etc/hostname', { content: 'node\n' }))
  .provision((p) =>
    p
      .file('/etc/hostname', { content: 'worker\n' }),
  );
