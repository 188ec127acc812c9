// expect: IMGC0001 line 10
// exit: 1
// /etc/kubernetes is never created, so nothing can be written into it.
import { debian12, image } from 'imgc';

export default image('never-provided')
  .base(debian12({ include: ['systemd'] }))
  .provision((p) =>
    p
      .file('/etc/kubernetes/kubelet-env', { mode: '0644', content: 'KUBELET_EXTRA_ARGS=\n' }),
  );
