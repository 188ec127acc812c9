// Fleets over real SSH (./sshbed.ts): the runtime outputs against several
// hosts, each a Debian root with its own sshd in namespaces of its own.
// node1..node4 have what phase 1 gives (user ops, /etc/demo); node5 lacks
// user ops, so its preflight fails there and only there. The phase's pre
// webhook reaches a server on 127.0.0.1 that first answers retryAfterSeconds.
// The last test takes the same hosts through bootstrap, drain and decommission
// (test/fixtures/fleet/lifecycle.ts), with every edge's webhooks, through
// Ansible on all of them and through the shell output on one.
import { readFileSync, statSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { execa } from 'execa';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ansibleCompiler } from '../../src/compilers/ansible/index.js';
import { shellCompiler } from '../../src/compilers/shell/index.js';
import type { Image } from '../../src/ir/schema.js';
import { run as ansibleRun, workspace, writeFiles } from '../compilers/ansible-support.js';
import { irOf } from '../helpers/cli.js';
import { diffListings, listing } from '../runtime-support.js';
import { cannotBed, SshBed, type BedHost } from './sshbed.js';
import { localAptRepo } from './local-repo.js';

const fixture = 'test/fixtures/fleet/fleet.ts';
const names = ['node1', 'node2', 'node3', 'node4', 'node5'];

/** A hook's request, as a controller receives it (docs/hooks.md). */
interface Request {
  phase: string;
  edge?: { from: string; to: string };
  hosts?: string[];
  when: string;
  result: string;
}

/** What sshd itself changes in a root by logging a session in (docs/fleet.md): not the outputs' doing. */
const sessionNoise = /^[-+~] (var\/log\/(wtmp|btmp|lastlog)|run\/(utmp|sshd\.pid)|var\/cache\/ldconfig)/;
const changes = (before: Map<string, string>, root: string) => diffListings(before, listing(root)).filter((l) => !sessionNoise.test(l));

/**
 * What docs/fleet.md ("What decommission restores") lists as left changed on
 * purpose by installing and purging packages: apt's lists, caches and logs,
 * dpkg's status file (its packages are compared exactly below) with its
 * backups and locks, the account files' backups, the linker cache.
 */
const leftByDesign = /^[-+~] (var\/log\/|var\/cache\/|var\/lib\/apt\/(lists|extended_states)|var\/lib\/dpkg\/(status|status-old|diversions-old|statoverride-old|lock|lock-frontend|triggers\/Lock)( |$)|etc\/(passwd|group|shadow|gshadow|subuid|subgid)-( |$)|etc\/ld\.so\.cache( |$))/;

describe.skipIf(cannotBed !== undefined)(`fleet over SSH${cannotBed ? ` (skipped: ${cannotBed})` : ''}`, () => {
  let bed: SshBed;
  let ir: Image;
  const host = (name: string): BedHost => bed.hosts.find((h) => h.name === name)!;
  const forwarding = async (h: BedHost) => (await bed.ssh(h, 'cat /proc/sys/net/ipv4/ip_forward')).stdout.trim();
  const ownForwarding = readFileSync('/proc/sys/net/ipv4/ip_forward', 'utf8').trim();

  beforeAll(async () => {
    ir = await irOf(fixture);
    bed = await SshBed.start(ir, names);
    // What phase 1 gives: node5 lacks the user.
    for (const h of bed.hosts) {
      const r = await bed.ssh(h, h.name === 'node5' ? 'mkdir -p /etc/demo' : 'useradd -m -s /bin/bash ops && mkdir -p /etc/demo');
      expect(r.exitCode, r.stderr).toBe(0);
    }
  }, 900_000);
  afterAll(async () => {
    if (bed) {
      await bed.stop();
      expect(bed.leftovers()).toEqual([]);
    }
  });

  it('reaches every host over SSH, each with its own hostname and network namespace', async () => {
    const seen = await Promise.all(bed.hosts.map((h) => bed.ssh(h, 'hostname; readlink /proc/self/ns/net')));
    expect(seen.map((r) => r.exitCode)).toEqual(names.map(() => 0));
    expect(seen.map((r) => r.stdout.split('\n')[0])).toEqual(names);
    expect(new Set(seen.map((r) => r.stdout.split('\n')[1])).size).toBe(names.length);
  });

  it('shell: provision.sh over `ssh host sh -s` converges, runs its handlers, changes nothing the second time; decommission.sh undoes it', async () => {
    const files = shellCompiler.compile(ir, { runtime: true, decommission: true });
    const h = host('node1');
    const before = listing(h.root);
    expect(await forwarding(h)).toBe('0');
    const first = await bed.ssh(h, 'IMGC_HANDLERS=always sh -s', files['provision.sh']);
    expect(first.exitCode, first.stderr).toBe(0);
    expect(first.stdout).toContain('imgc-phase provision done changed=6');
    // The sysctl handler applied the file in the host's own network namespace, not this machine's.
    expect(first.stdout).toContain('imgc-handler sysctl --system ran');
    expect(await forwarding(h)).toBe('1');
    expect(readFileSync('/proc/sys/net/ipv4/ip_forward', 'utf8').trim()).toBe(ownForwarding);
    // No running systemd in a chroot, no loadable modules in this kernel: said, not pretended.
    expect(first.stdout).toContain('imgc-handler systemctl daemon-reload skipped');
    expect(first.stdout).toContain('imgc-handler systemctl try-restart imgc-demo.service skipped');
    expect(first.stdout).toContain('imgc-handler modprobe br_netfilter skipped');
    expect(first.stderr).toContain('systemd is not running here');

    const second = await bed.ssh(h, 'IMGC_HANDLERS=always sh -s', files['provision.sh']);
    expect(second.exitCode, second.stderr).toBe(0);
    expect(second.stdout).toContain('imgc-phase provision done changed=0');
    expect(second.stdout).not.toContain('imgc-handler');

    const undo = await bed.ssh(h, 'sh -s', files['decommission.sh']);
    expect(undo.exitCode, undo.stderr).toBe(0);
    // What a raw command made stays (decommission.sh says so); the kernel keeps the value until the next boot.
    expect(changes(before, h.root)).toEqual(['+ etc/demo/imgc-demo.d']);
    expect(await forwarding(h)).toBe('1');
    expect((await bed.ssh(h, 'rmdir /etc/demo/imgc-demo.d && sysctl -q -w net.ipv4.ip_forward=0')).exitCode).toBe(0);
  }, 300_000);

  it('shell: the default (IMGC_HANDLERS=auto) runs no handler outside a booted host, and says the change waits for the boot', async () => {
    const files = shellCompiler.compile(ir, { runtime: true, decommission: true });
    const h = host('node1');
    const r = await bed.ssh(h, 'sh -s', files['provision.sh']);
    expect(r.exitCode, r.stderr).toBe(0);
    expect(r.stdout).toContain('imgc-handler sysctl --system skipped');
    expect(r.stderr).toContain('the change applies at the next boot');
    expect(await forwarding(h)).toBe('0');
    expect((await bed.ssh(h, 'sh -s', files['decommission.sh'])).exitCode).toBe(0);
  }, 300_000);

  it('shell: a host without a phase-1 fact stops at the preflight, naming it, and is left untouched', async () => {
    const files = shellCompiler.compile(ir, { runtime: true });
    const h = host('node5');
    const before = listing(h.root);
    const r = await bed.ssh(h, 'sh -s', files['provision.sh']);
    expect(r.exitCode).toBe(3);
    expect(r.stderr).toContain("imgc: preflight: missing user 'ops'");
    expect(changes(before, h.root)).toEqual([]);
  }, 120_000);

  it('ansible: one inventory of 5, batches of 2: the host missing a fact is named and untouched, the others converge; a second run changes nothing; decommission undoes it; a run stopped by max_fail_percentage still ends with every host', async () => {
    const fleet = names.map(host);
    const files = ansibleCompiler.compile(ir, { runtime: true, decommission: true, serial: '2' });
    const ws = workspace('fleet');
    // The controller's first answer: not yet, ask again in 2 s; then Success.
    const asked: number[] = [];
    const controller = createServer((req, res) => {
      req.resume().on('end', () => {
        asked.push(Date.now());
        res.writeHead(200, { 'content-type': 'application/json' }).end(asked.length === 1 ? '{"status":"Success","message":"cluster busy","retryAfterSeconds":2}' : '{"status":"Success"}');
      });
    });
    await new Promise<void>((resolve) => controller.listen(0, '127.0.0.1', resolve));
    const hookUrl = `hook_url=http://127.0.0.1:${(controller.address() as AddressInfo).port}/hook`;
    try {
      writeFiles(ws.out, files);
      writeFileSync(path.join(ws.out, 'inventory.json'), bed.inventory());
      const befores = new Map(fleet.map((h) => [h.name, listing(h.root)]));
      const play = (book: string, ...extra: string[]) =>
        ansibleRun('ansible-playbook', ['-i', 'inventory.json', book, ...extra], ws.out, ws.home, { ANSIBLE_HOST_KEY_CHECKING: 'False', ANSIBLE_SSH_CONTROL_PATH_DIR: path.join(ws.home, 'cp') });

      const first = await play('runtime.yml', '-e', 'imgc_handlers=always', '-e', hookUrl);
      if (process.env['IMGC_FLEET_LOG']) writeFileSync(process.env['IMGC_FLEET_LOG'], first.all);
      expect(first.exitCode, first.all).toBe(2);
      // Once per batch with a host left (node1-2, node3-4; node5 failed its preflight), the first asking again after the 2 s the controller said.
      expect(asked).toHaveLength(3);
      expect(asked[1]! - asked[0]!).toBeGreaterThanOrEqual(2000);
      // Preflight names what node5 lacks; the phase runs on the others, in batches of 2 (ceil(5 / 2) plays).
      expect(first.all).toMatch(/node5[^\n]*imgc: preflight: missing user 'ops'; nothing was changed/);
      expect(first.all.match(/PLAY \[Phase provision \(runtime\)\]/g)).toHaveLength(3);
      for (const n of ['node1', 'node2', 'node3', 'node4']) expect(first.all).toContain(`imgc: ${n}: converged`);
      expect(first.all).toContain("imgc: node5: preflight failed, untouched: missing user 'ops'");
      expect(first.all).toMatch(/RUNNING HANDLER \[Handler: sysctl --system\]/);
      for (const h of fleet.slice(0, 4)) expect(await forwarding(h)).toBe('1');
      expect(await forwarding(host('node5'))).toBe('0');
      expect(changes(befores.get('node5')!, host('node5').root)).toEqual([]);

      const second = await play('runtime.yml', '-e', 'imgc_handlers=always', '-e', hookUrl);
      expect(second.exitCode, second.all).toBe(2);
      for (const n of ['node1', 'node2', 'node3', 'node4']) expect(second.all).toMatch(new RegExp(`${n}\\s+: ok=\\d+\\s+changed=0 `));
      expect(second.all).not.toContain('RUNNING HANDLER');

      const undo = await play('decommission.yml', '--limit', 'node1,node2,node3,node4');
      expect(undo.exitCode, undo.all).toBe(0);
      // Every host as it was, but for what the raw command made (kept by design; node1 had it already from the shell tests).
      const left = Object.fromEntries(fleet.map((h) => [h.name, changes(befores.get(h.name)!, h.root).filter((l) => l !== '+ etc/demo/imgc-demo.d')]));
      expect(left).toEqual(Object.fromEntries(names.map((n) => [n, []])));
      expect(changes(befores.get('node5')!, host('node5').root)).toEqual([]);

      // max_fail_percentage exceeded: the pre hook's default URL has no server, so the first batch (node1) fails
      // and Ansible ends the run before the next; the summary still names every host of the inventory.
      const stopped = await play('runtime.yml', '-e', 'imgc_serial=1', '-e', 'imgc_max_fail=0');
      expect(stopped.exitCode, stopped.all).toBe(2);
      expect(stopped.all.match(/PLAY \[Phase provision \(runtime\)\]/g)).toHaveLength(1);
      expect(stopped.all).toContain('imgc: node1: failed after: nothing');
      for (const n of ['node2', 'node3', 'node4']) expect(stopped.all).toContain(`imgc: ${n}: not reached: the run stopped before this host`);
      expect(stopped.all).toContain("imgc: node5: preflight failed, untouched: missing user 'ops'");
      for (const h of fleet) expect(changes(befores.get(h.name)!, h.root).filter((l) => l !== '+ etc/demo/imgc-demo.d'), h.name).toEqual([]);
    } finally {
      controller.close();
      ws.remove();
    }
  }, 1_500_000);
  it('ansible: bootstrap over SSH on every host (the token in a 0600 file, in no log line), drain and decommission with their webhooks; the hosts as they were', async () => {
    const lc = await irOf('test/fixtures/fleet/lifecycle.ts');
    // Batches of 2 for both playbooks, as `compile --serial 2 --max-fail 50` writes them.
    const files = ansibleCompiler.compile(lc, { runtime: true, decommission: true, serial: '2', maxFail: 50 });
    const fleet = names.map(host);
    const ws = workspace('fleet-lifecycle');
    const token = 'abcdef.0123456789abcdef';
    // Every request's JSON; drain's first pre request is told to ask again in 1 s.
    const asked: (Request & { at: number })[] = [];
    const controller = createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        const body = JSON.parse(Buffer.concat(chunks).toString('utf8')) as Request;
        const retry = body.phase === 'drain' && body.when === 'pre' && !asked.some((a) => a.phase === 'drain');
        asked.push({ ...body, at: Date.now() });
        res.writeHead(200, { 'content-type': 'application/json' }).end(retry ? '{"status":"Success","message":"still draining","retryAfterSeconds":1}' : '{"status":"Success"}');
      });
    });
    await new Promise<void>((resolve) => controller.listen(0, '127.0.0.1', resolve));
    const hookUrl = `hook_url=http://127.0.0.1:${(controller.address() as AddressInfo).port}/hook`;
    const calls = () => asked.map((a) => `${a.phase} ${a.when} ${a.result}`);
    try {
      writeFiles(ws.out, files);
      writeFileSync(path.join(ws.out, 'inventory.json'), bed.inventory());
      const befores = new Map(fleet.map((h) => [h.name, listing(h.root)]));
      const play = (book: string, ...extra: string[]) =>
        ansibleRun('ansible-playbook', ['-i', 'inventory.json', book, '-e', hookUrl, ...extra], ws.out, ws.home, { ANSIBLE_HOST_KEY_CHECKING: 'False', ANSIBLE_SSH_CONTROL_PATH_DIR: path.join(ws.home, 'cp') });

      // -v prints every task's result: the token's task is censored, and the token is nowhere.
      const up = await play('runtime.yml', '-v', '-e', `join_token=${token}`);
      expect(up.exitCode, up.all).toBe(0);
      expect(up.all).not.toContain(token);
      expect(up.all).toMatch(/TASK \[File \/etc\/kubernetes\/bootstrap-kubelet\.conf[^]*?"censored"/);
      for (const n of names) expect(up.all).toContain(`imgc: ${n}: converged`);
      for (const h of fleet) {
        const conf = path.join(h.root, 'etc/kubernetes/bootstrap-kubelet.conf');
        expect(statSync(conf).mode & 0o777, h.name).toBe(0o600);
        expect(readFileSync(conf, 'utf8'), h.name).toBe(`token: ${token}\n`);
      }
      // Bootstrap's hooks once per batch (node1-2, node3-4, node5), on the controller, each naming its batch and the edge.
      expect(calls()).toEqual([...Array(3).fill(['bootstrap pre starting', 'bootstrap post ok']).flat()]);
      expect(asked.map((a) => a.hosts)).toEqual([['node1', 'node2'], ['node1', 'node2'], ['node3', 'node4'], ['node3', 'node4'], ['node5'], ['node5']]);
      for (const a of asked) expect(a.edge).toEqual({ from: 'provisioned', to: 'bootstrapped' });

      asked.length = 0;
      // node3's drain fails (its kubeconfig emptied): one host of its batch of 2 is 50 %, not more than --max-fail 50, so the run goes on.
      expect((await bed.ssh(host('node3'), ': > /etc/kubernetes/bootstrap-kubelet.conf')).exitCode).toBe(0);
      const down = await play('decommission.yml');
      expect(down.exitCode, down.all).toBe(2);
      expect(down.all.match(/PLAY \[Decommission lifecycle-demo\]/g)).toHaveLength(3);
      // Drain first (its pre webhook asked again after the 1 s the controller said), then the decommission edge; once per batch.
      expect(asked[1]!.at - asked[0]!.at).toBeGreaterThanOrEqual(1000);
      expect(asked.filter((a) => a.phase === 'drain' && a.when === 'pre').map((a) => a.hosts)).toEqual([['node1', 'node2'], ['node1', 'node2'], ['node3', 'node4'], ['node5']]);
      expect(asked.filter((a) => a.phase === 'decommission' && a.when === 'post').map((a) => a.hosts)).toEqual([['node1', 'node2'], ['node4'], ['node5']]);
      expect(asked.filter((a) => a.result === 'failed').map((a) => [a.phase, a.hosts])).toEqual([['drain', ['node3']]]);
      for (const a of asked) expect(`${a.edge?.from} ${a.edge?.to}`).toBe(a.phase === 'drain' ? 'ready draining' : 'draining decommissioned');
      expect(down.all).toContain('TASK [Command: drain the node');
      // The summary: each host's real outcome.
      for (const n of ['node1', 'node2', 'node4', 'node5']) expect(down.all).toMatch(new RegExp(`imgc: ${n}: decommissioned \\(undone 2 recorded\\)`));
      expect(down.all).toMatch(/imgc: node3: failed, the record kept: Phase drain: failed on this host: imgc: phase drain failed at Command: drain the node/);
      expect(down.all).not.toContain('unreachable, or failed before its checks');
      // node3 as its operator would go on: the kubeconfig back, decommission again, that host only.
      expect((await bed.ssh(host('node3'), `printf 'token: ${token}\\n' > /etc/kubernetes/bootstrap-kubelet.conf`)).exitCode).toBe(0);
      const retried = await play('decommission.yml', '--limit', 'node3');
      expect(retried.exitCode, retried.all).toBe(0);
      expect(retried.all).toMatch(/imgc: node3: decommissioned \(undone 2 recorded\)/);
      // Only the hosts of --limit are summed up.
      expect(retried.all).not.toContain('imgc: node1:');
      for (const h of fleet) expect(changes(befores.get(h.name)!, h.root), h.name).toEqual([]);
    } finally {
      controller.close();
      ws.remove();
    }
  }, 600_000);

  it('shell: decommission.sh over `ssh host sudo sh -s` drains first, its hook files (run here) tell a server the edge and the host; the host as it was', async () => {
    const started = Date.now();
    const lc = await irOf('test/fixtures/fleet/lifecycle.ts');
    const files = shellCompiler.compile(lc, { runtime: true, decommission: true });
    const h = host('node2');
    const ws = workspace('fleet-shell-drain');
    const out = writeFiles(ws.out, files);
    const asked: Request[] = [];
    const controller = createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        asked.push(JSON.parse(Buffer.concat(chunks).toString('utf8')) as Request);
        res.writeHead(200, { 'content-type': 'application/json' }).end('{"status":"Success"}');
      });
    });
    await new Promise<void>((resolve) => controller.listen(0, '127.0.0.1', resolve));
    try {
      // The host's own name, as docs/hooks.md says to give it to the hook files.
      const name = (await bed.ssh(h, 'hostname')).stdout.trim();
      expect(name).toBe('node2');
      const env = { IMGC_HOST: name, IMGC_VAR_HOOK_URL: `http://127.0.0.1:${(controller.address() as AddressInfo).port}/hook` };
      const hookFile = (file: string) => execa('sh', [path.join(out, 'hooks', file)], { env, reject: false });
      const before = listing(h.root);
      const up = await bed.ssh(h, 'sudo IMGC_VAR_JOIN_TOKEN=abcdef.0123456789abcdef sh -s', files['provision.sh']);
      expect(up.exitCode, up.stderr).toBe(0);
      expect(up.stdout).toContain('imgc-phase bootstrap done changed=1');

      // As docs/fleet.md says: the pre files of drain and decommission, decommission.sh on the host, then the post files.
      for (const f of ['03-drain-pre.sh', '04-decommission-pre.sh']) expect((await hookFile(f)).exitCode, f).toBe(0);
      const down = await bed.ssh(h, 'sudo sh -s', files['decommission.sh']);
      expect(down.exitCode, down.stderr).toBe(0);
      for (const f of ['03-drain-post.sh', '04-decommission-post.sh']) expect((await hookFile(f)).exitCode, f).toBe(0);

      // The drain ran first, before anything was undone (the undo removes what bootstrap wrote, which drain needs).
      const lines = down.stdout.split('\n');
      const drained = lines.indexOf('imgc-phase drain done changed=1');
      expect(drained, down.stdout).toBeGreaterThan(lines.indexOf('imgc-step drain.1.command changed'));
      expect(lines.indexOf('imgc-step drain.1.command start'), down.stdout).toBe(0);
      expect(lines.indexOf('imgc-step bootstrap.1.file changed'), down.stdout).toBeGreaterThan(drained);
      expect(asked.map((a) => [a.phase, a.when, a.result, `${a.edge?.from}>${a.edge?.to}`])).toEqual([
        ['drain', 'pre', 'starting', 'ready>draining'],
        ['decommission', 'pre', 'starting', 'draining>decommissioned'],
        ['drain', 'post', 'ok', 'ready>draining'],
        ['decommission', 'post', 'ok', 'draining>decommissioned'],
      ]);
      for (const a of asked) expect(a.hosts).toEqual(['node2']);
      expect(changes(before, h.root)).toEqual([]);
    } finally {
      controller.close();
      ws.remove();
    }
    console.log(`shell drain over SSH: ${Date.now() - started} ms`);
  }, 300_000);
  it('decommission restores the host: provisioned and decommissioned through Ansible (node4) and shell (node3), its files, packages, users, groups and enabled units are as before', async () => {
    const started = Date.now();
    const rs = await irOf('test/fixtures/fleet/restore.ts');
    const ws = workspace('fleet-restore');
    /** Everything decommission must put back, as text: packages, accounts, enabled units (the files are compared as listings). */
    const state = async (h: BedHost) => {
      const r = await bed.ssh(h, "dpkg-query -W -f='${Package} ${Version} ${Status}\\n'; echo; getent passwd; echo; getent group; echo; systemctl list-unit-files --state=enabled --no-legend --no-pager");
      expect(r.exitCode, r.stderr).toBe(0);
      return r.stdout;
    };
    const files = (before: Map<string, string>, h: BedHost) => diffListings(before, listing(h.root)).filter((l) => !sessionNoise.test(l) && !leftByDesign.test(l));
    const repos: { restore: () => void }[] = [];
    try {
      const ansible = ansibleCompiler.compile(rs, { runtime: true, decommission: true });
      const shell = shellCompiler.compile(rs, { runtime: true, decommission: true });
      writeFiles(ws.out, ansible);
      writeFileSync(path.join(ws.out, 'inventory.json'), bed.inventory());
      const play = (book: string) =>
        ansibleRun('ansible-playbook', ['-i', 'inventory.json', '--limit', 'node4', book], ws.out, ws.home, { ANSIBLE_HOST_KEY_CHECKING: 'False', ANSIBLE_SSH_CONTROL_PATH_DIR: path.join(ws.home, 'cp') });
      for (const h of [host('node3'), host('node4')]) {
        repos.push(await localAptRepo(h.root, path.join(ws.home, `debs-${h.name}`)));
        // The host's admin refreshed apt's lists after adding the source (runtime.yml refreshes them only when older than an hour).
        const u = await bed.ssh(h, 'apt-get update -q');
        expect(u.exitCode, u.stderr).toBe(0);
      }

      // Ansible on node4.
      const a = host('node4');
      const [filesA, stateA] = [listing(a.root), await state(a)];
      const up = await play('runtime.yml');
      expect(up.exitCode, up.all).toBe(0);
      expect(up.all).toContain('imgc: node4: converged');
      expect(await state(a)).toMatch(/^imgc-demo-lib 1\.0 install ok installed$/m);
      const again = await play('runtime.yml');
      expect(again.all).toMatch(/node4\s+: ok=\d+\s+changed=0 /);
      const down = await play('decommission.yml');
      expect(down.exitCode, down.all).toBe(0);
      expect(down.all).toMatch(/imgc: node4: decommissioned \(undone \d+ recorded\)/);
      expect(await state(a)).toBe(stateA);
      expect(files(filesA, a)).toEqual([]);

      // Shell on node3.
      const b = host('node3');
      const [filesB, stateB] = [listing(b.root), await state(b)];
      const provision = await bed.ssh(b, 'sh -s', shell['provision.sh']);
      expect(provision.exitCode, provision.stderr).toBe(0);
      expect(provision.stdout).toContain('imgc-step provision.1.packages changed');
      const undo = await bed.ssh(b, 'sh -s', shell['decommission.sh']);
      expect(undo.exitCode, undo.stderr).toBe(0);
      expect(await state(b)).toBe(stateB);
      expect(files(filesB, b)).toEqual([]);
    } finally {
      for (const r of repos) r.restore();
      ws.remove();
    }
    console.log(`decommission restores the host, ansible and shell over SSH: ${Date.now() - started} ms`);
  }, 600_000);
});
