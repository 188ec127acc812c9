export { debian12, ubuntu2204, ubuntu2404, type AptBaseOptions } from './bases.js';
export { aptCatalog, type AptCatalog } from './catalog.js';
export {
  bootable,
  containerd,
  journald,
  kubernetes,
  kubernetesKernelModules,
  kubernetesNetworking,
  kubernetesSysctls,
  sshHardening,
  type KubernetesSource,
} from './modules.js';
