// The packages whose facts the builder's types know (stdlib/archive/debian-12.ts's
// typed catalog): every package a stdlib module or an example installs (a test
// holds this list to that), and a few the docs and tests name (nginx, prometheus-node-exporter: test/stdlib/archive-facts.test.ts
// compares ten packages with a real install, all of them typed). Any other archive package
// is known to the checker only; after it the types accept any fact of the kinds
// it may bring (src/dsl/types.ts, Listed).
export const typedPackages = [
  'apt', 'apt-transport-https', 'auditd', 'ca-certificates', 'chrony', 'cloud-guest-utils', 'cloud-init', 'cloud-initramfs-growroot', 'conntrack',
  'containerd', 'containernetworking-plugins', 'curl', 'dbus', 'e2fsprogs', 'ebtables', 'ethtool', 'gnupg', 'initramfs-tools', 'iproute2', 'iptables',
  'jq', 'kmod', 'kubernetes-client', 'libnetfilter-acct1', 'libnetfilter-cttimeout1', 'libnetfilter-log1', 'libseccomp2', 'linux-image-amd64',
  'nginx', 'nginx-common', 'openssh-server', 'procps', 'prometheus-node-exporter', 'puppet', 'python3', 'python3-netifaces', 'python3-pip', 'python3-ruamel.yaml', 'python3-tomlkit', 'runc', 'socat', 'sudo', 'systemd', 'systemd-boot-efi', 'systemd-sysv', 'systemd-timesyncd', 'udev', 'xz-utils',
] as const;
