// expect: IMGC0005 line 14
// exit: 1
// Removing /opt/tools removes everything below it, /opt/tools/bin too: the
// file written into /opt/tools/bin later has no directory to go to.
import { debian12, image } from 'imgc';

export default image('write-below-removed')
  .base(debian12())
  .customize((p) =>
    p.directory('/opt/tools').directory('/opt/tools/bin'),
  )
  .provision((p) =>
    p.command('rm -rf /opt/tools', { removes: { path: ['/opt/tools'] } })
      .file('/opt/tools/bin/run', { content: '#!/bin/sh\n' }),
  );
