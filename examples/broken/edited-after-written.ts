// expect: IMGC0015 line 14
// exit: 0
// A file written whole, then edited by a later step: the image is right after
// one run, but every run writes the file back and edits it again, so a second
// run (build.sh on the same root, the runtime outputs on a live host) is never
// unchanged. A warning: put the line in the content.
import { debian12, image } from 'imgc';

export default image('edited-after-written')
  .base(debian12())
  .customize((p) => p.file('/etc/kubelet.env', { content: 'KUBELET_EXTRA_ARGS=\n' }))
  .provision((p) =>
    p
      .lineInFile('/etc/kubelet.env', { line: 'KUBELET_EXTRA_ARGS=--node-ip=10.0.0.2', regexp: '^KUBELET_EXTRA_ARGS=' }),
  );
