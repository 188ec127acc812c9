// expect: IMGC1001 line 8
// exit: 1
// A plain TypeScript mistake with no contract behind it: only the types see
// it, and the image itself is sound.
import { debian12, image } from 'imgc';

// A number where the code around it expects one; the string is never used by a step.
const replicas: number = 'three';

export default image('type-only')
  .base(debian12())
  .customize((p) => p.directory('/srv/data', { mode: '0750' }).file('/srv/data/replicas', { content: `${replicas}\n` }));
