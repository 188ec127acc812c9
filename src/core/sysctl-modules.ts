// Sysctl keys that exist only while a kernel module is loaded. systemd-sysctl
// runs after systemd-modules-load at boot, so a key under one of these
// prefixes is there when the module is listed in modules-load.d before it,
// and otherwise fails to apply ("No such file or directory"): the sysctl
// step requires the module (IMGC0001/0002 when no step lists it in time).
// Prefixes of modules Debian's kernel builds in (net.ipv4.*, vm.*) are not here.

export interface SysctlModule {
  /** The key, or the prefix of keys ending in "." (dotted form). */
  readonly prefix: string;
  readonly module: string;
  /** Why the keys come with the module. */
  readonly why: string;
}

export const sysctlModules: readonly SysctlModule[] = [
  { prefix: 'net.bridge.', module: 'br_netfilter', why: 'net.bridge.bridge-nf-call-* are br_netfilter\'s; the bridge module alone has none' },
  { prefix: 'net.netfilter.', module: 'nf_conntrack', why: 'net.netfilter.nf_conntrack_* are the connection tracker\'s (a module in Debian\'s kernel)' },
  { prefix: 'net.nf_conntrack_max', module: 'nf_conntrack', why: 'the connection tracker\'s table size, registered by nf_conntrack' },
];

/** The module a sysctl key needs loaded (keys may be written with "/" as sysctl(8) takes them), if any. */
export const sysctlModule = (key: string): SysctlModule | undefined => {
  const dotted = key.replace(/\//g, '.');
  return sysctlModules.find((m) => (m.prefix.endsWith('.') ? dotted.startsWith(m.prefix) : dotted === m.prefix));
};
