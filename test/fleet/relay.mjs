// ssh's ProxyCommand for the SSH test bed (./sshbed.ts): run inside a test
// host's network namespace (nsenter --net), it joins stdin/stdout to the
// host's sshd on 127.0.0.1 there. Exits when either side closes.
import net from 'node:net';

const [host = '127.0.0.1', port = '22'] = process.argv.slice(2);
const socket = net.connect(Number(port), host);
socket.on('error', (e) => {
  process.stderr.write(`relay: ${host}:${port}: ${e.message}\n`);
  process.exit(1);
});
process.stdin.pipe(socket);
socket.pipe(process.stdout);
socket.on('close', () => process.exit(0));
process.stdin.on('end', () => socket.end());
