export { debian12, ubuntu2204, ubuntu2404, type AptBaseOptions } from './bases.js';
export { aptCatalog, type AptCatalog } from './catalog.js';
export {
  bootable,
  cloudInit,
  containerd,
  containerdConfig,
  containerdDropIns,
  crictl,
  journald,
  kubernetes,
  kubernetesKernelModules,
  kubernetesNetworking,
  kubernetesSysctls,
  nodeTuningSysctls,
  sshHardening,
  sysprep,
  type ContainerdConfigOptions,
  type KubernetesSource,
} from './modules.js';
