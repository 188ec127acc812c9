// expect: IMGC0001 line 16
// expect: IMGC0001 line 17
// exit: 1
// A TOML key is edited by python3-tomlkit in the root, a YAML key by
// python3-ruamel.yaml (parsers that keep the file's comments): nothing here
// installs them (the fix, before the edits: .packages(['python3-tomlkit', 'python3-ruamel.yaml'])).
import { debian12, image } from 'imgc';

export default image('toml-key-without-parser')
  .base(debian12())
  .provision((p) =>
    p
      .packages(['containerd'])
      .command('containerd config default > /etc/containerd/config.toml', { creates: '/etc/containerd/config.toml', provides: { path: ['/etc/containerd/config.toml'] } })
      .command("printf 'kind: KubeletConfiguration\\n' > /etc/kubelet.yaml", { creates: '/etc/kubelet.yaml', provides: { path: ['/etc/kubelet.yaml'] } })
      .tomlKey('/etc/containerd/config.toml', 'plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc.options.SystemdCgroup', { value: true })
      .yamlKey('/etc/kubelet.yaml', 'cgroupDriver', { value: 'systemd' }),
  );
