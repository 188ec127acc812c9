// expect: IMGC0012 line 12
// expect: IMGC0012 line 13
// exit: 1
// /etc/kubelet is made a directory, then written as a file; and a file is
// then written below the file /etc/node-id, as if it were a directory.
import { debian12, image } from 'imgc';

export default image('path-kind-conflict')
  .base(debian12())
  .customize((p) => p.directory('/etc/kubelet').file('/etc/node-id', { content: 'n1\n' }))
  .provision((p) =>
    p.file('/etc/kubelet', { content: 'x\n' })
      .file('/etc/node-id/name', { content: 'n1\n' }),
  );
