// expect: IMGC0014 line 13
// exit: 1
// Nine independent switches make 512 combinations of values, more than the
// checker walks (256). Decide some in TypeScript, or fold them into one
// z.enum variable.
import { debian12, image, variable, z } from 'imgc';

const flags = ['a', 'b', 'c', 'd', 'e', 'f', 'g', 'h', 'i'].map((n) => variable(`with_${n}`, z.boolean(), { default: false }));

export default image('too-many-conditions')
  .base(debian12())
  .provision((p) =>
    flags.reduce((q, flag, i) => q.when(flag, (q) => q.file(`/etc/flag-${i}`, { mode: '0644', content: '' })), p),
  );
