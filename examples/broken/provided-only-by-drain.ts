// expect: IMGC0002 line 14
// exit: 1
// The image's provision phase reads a file that only the drain phase writes.
// Drain runs on existing hosts only, when the node leaves (from the
// decommission outputs), wherever it is declared: the image never has it.
import { debian12, image } from 'imgc';

export default image('needs-drain')
  .base(debian12())
  .drain((p) => p.command('touch /var/lib/drained', { provides: { path: ['/var/lib/drained'] } }))
  .provision((p) =>
    p
      // Declared facts are not in the types (a string list): the checker finds it.
      .command('cat /var/lib/drained', {
        requires: { path: ['/var/lib/drained'] },
      }),
  );
