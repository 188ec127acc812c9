// The reference node image with Debian's own Kubernetes packages only
// (kubectl from kubernetes-client; no kubelet/kubeadm): it builds on machines
// that reach nothing but the Debian mirror, as CI's do.
import { nodeImage } from './node-image.js';

export default nodeImage('k8s-node-debian', { source: 'debian' });
