// expect: IMGC0005 line 14 (also a type error)
// exit: 1
// One mistake, one diagnostic: the contract checker's, saying TypeScript saw it too.
// systemctl refuses to enable a masked unit: the types and the checker both
// say so at the enable.
import { debian12, image } from 'imgc';

export default image('masked-then-enabled')
  .base(debian12({ include: ['systemd'] }))
  .provision((p) =>
    p
      .packages(['openssh-server'])
      .maskService('ssh')
      .enableService('ssh'),
  );
