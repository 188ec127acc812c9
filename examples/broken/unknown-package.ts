// expect: IMGC0017 line 12
// exit: 1
// A typo in a package name: Debian's archive has no 'promethues-node-exporter'
// (the checker reads the archive's own index, and names the closest package).
import { debian12, image } from 'imgc';

export default image('unknown-package')
  .base(debian12({ include: ['systemd'] }))
  .provision((p) =>
    p
      // a transposed pair of letters
      .packages(['promethues-node-exporter']),
  );
