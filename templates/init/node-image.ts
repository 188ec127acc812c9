// A Kubernetes node image. `npx imgc check` proves its contracts;
// `npx imgc compile --target packer|ansible|shell` emits it.
import { containerd, debian12, image, kubernetes, kubernetesNetworking, sshHardening } from 'imgc';

export default image('k8s-node')
  .base(debian12({ include: ['systemd', 'systemd-sysv', 'kmod', 'procps', 'sudo'] }))
  .customize((p) =>
    p
      .user('ops', { groups: ['sudo'], shell: '/bin/bash' })
      .use(sshHardening()),
  )
  .provision((p) =>
    p
      .use(kubernetesNetworking())
      .swapOff()
      .use(containerd())
      .use(kubernetes({ source: 'upstream', minor: '1.30' })),
  )
  .artifact((a) => a.tar('rootfs.tar.zst').qcow2('disk.qcow2', { size: '8G' }))
  .verify((v) => v.facts().checksums().manifest());
