// The reference node as a matrix (docs/variants.md): two Kubernetes minors × where its packages come from ×
// two architectures, one image per combination. Debian's packages have one version per release, so the older
// minor has no Debian variant. `npx imgc variants examples/node-matrix.ts --format json` lists them for a CI matrix.
import { variants } from 'imgc';
import { nodeImage } from './node-image.js';

export default variants(
  { k8s: ['1.30', '1.31'], source: ['upstream', 'debian'], arch: ['amd64', 'arm64'] },
  (v) => nodeImage(`k8s-node-${v.k8s}-${v.source}-${v.arch}`, v.source === 'upstream' ? { source: 'upstream', minor: v.k8s } : { source: 'debian' }, '4G', v.arch),
  { exclude: [{ k8s: '1.30', source: 'debian' }] },
);
