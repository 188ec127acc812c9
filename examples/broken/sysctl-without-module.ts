// expect: IMGC0001 line 12
// exit: 1
// net.bridge.* exists only once br_netfilter is loaded: without
// kernelModule('br_netfilter') before it, the sysctl fails at boot.
import { debian12, image } from 'imgc';

export default image('sysctl-without-module')
  .base(debian12())
  .provision((p) =>
    p
      .kernelModule('overlay')
      .sysctl('net.bridge.bridge-nf-call-iptables', 1),
  );
