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
      .file('/etc/containerd/config.toml', { content: 'version = 2\n' })
      .file('/etc/kubelet.yaml', { content: 'kind: KubeletConfiguration\n' })
      .tomlKey('/etc/containerd/config.toml', 'plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc.options.SystemdCgroup', { value: true })
      .yamlKey('/etc/kubelet.yaml', 'cgroupDriver', { value: 'systemd' }),
  );
