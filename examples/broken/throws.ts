// expect: IMGC1002 line 8
// exit: 2
// The definition itself throws while it runs.
import { debian12, image } from 'imgc';

const versions: Record<string, string> = {};
const pick = (minor: string): string => {
  if (!versions[minor]) throw new Error(`no Kubernetes version for ${minor}`);
  return versions[minor];
};

export default image('throws')
  .base(debian12())
  .provision((p) => p.command(`echo ${pick('1.30')}`));
