// expect: IMGC0004 line 13
// exit: 1
// containerd is enabled, but its package is never installed.
import { debian12, image } from 'imgc';

const unit: string = 'containerd';

export default image('service-without-package')
  .base(debian12({ include: ['systemd'] }))
  .provision((p) =>
    p
      .packages(['runc'])
      .enableService(unit),
  );
