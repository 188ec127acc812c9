// expect: IMGC0001 line 13
// expect: IMGC0001 line 13
// expect: IMGC0001 line 13
// exit: 1
// A bootable disk is made from the root's kernel, initramfs and systemd-boot;
// no step installs them (the fix: .provision((p) => p.use(bootable()))).
import { debian12, image } from 'imgc';

export default image('unbootable-disk')
  .base(debian12({ include: ['systemd'] }))
  .artifact((a) =>
    a
      .qcow2('disk.qcow2', { bootable: true }),
  );
