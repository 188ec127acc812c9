#!/usr/bin/env node
// npm run bench: whole-process timings, each paired with a peer measured in
// the same run, printed as a table and as JSON (also written to
// out/bench.json). Peers that are not installed are reported missing.
// Usage: node bench/run.mjs [--runs N] [--quick] [--only check,compile,scale,build,fleet]
import { spawn, spawnSync } from 'node:child_process';
import { appendFileSync, copyFileSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { parseArgs } from 'node:util';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const imgcBin = path.join(root, 'bin', 'imgc.js');
const { values: args } = parseArgs({ options: { runs: { type: 'string' }, quick: { type: 'boolean' }, only: { type: 'string' } } });
const runs = Number(args.runs ?? (args.quick ? 3 : 7));
const only = new Set((args.only ?? 'check,compile,scale,build,fleet').split(','));
const work = mkdtempSync(path.join(os.tmpdir(), 'imgc-bench-'));
const hasGnuTime = existsSync('/usr/bin/time');

const which = (cmd) => spawnSync('sh', ['-c', `command -v ${cmd}`], { encoding: 'utf8' }).stdout.trim() || undefined;

/** cmd under GNU time when it is installed: its last stderr line is then "peak-KB user-s system-s". */
const timed = (cmd, argv) => (hasGnuTime ? ['/usr/bin/time', ['-f', '%M %U %S', cmd, ...argv]] : [cmd, argv]);
const gnuTimeOf = (stderr) => {
  const [kb, user, sys] = (stderr.trim().split('\n').pop() ?? '').split(' ').map(Number);
  return { kb: kb || 0, cpu: ((user || 0) + (sys || 0)) * 1000 };
};
/** median, min, max of the wall times; the largest peak RSS; the median CPU time. */
const summary = (times, cpus, peak, n) => {
  times.sort((a, b) => a - b);
  cpus.sort((a, b) => a - b);
  return { median: times[Math.floor(times.length / 2)], min: times[0], max: times[times.length - 1], peakKB: hasGnuTime ? peak : undefined, cpu: hasGnuTime ? cpus[Math.floor(cpus.length / 2)] : undefined, runs: n };
};

/**
 * Runs each spec ({ cmd, argv, env, cwd }) `n` times, in turn (the first spec's first run, the
 * second's, …, then the second round), so that a figure and its peer meet the same moments of a
 * shared machine. Per spec: wall time in ms, and with GNU time the peak RSS in KB (of the largest
 * process) and the CPU time (user + system, of the command and every process it waited for); or
 * `error` if its first run failed. `env` may be a function, called per run.
 */
const measureInTurn = (specs, n = runs) => {
  const acc = specs.map(() => ({ times: [], cpus: [], peak: 0 }));
  for (let i = 0; i < n; i++) {
    specs.forEach(({ cmd, argv, env = {}, cwd = root }, k) => {
      const a = acc[k];
      if (a.error) return;
      const runEnv = typeof env === 'function' ? env() : env;
      const full = timed(cmd, argv);
      const t0 = process.hrtime.bigint();
      const r = spawnSync(full[0], full[1], { cwd, env: { ...process.env, ...runEnv }, encoding: 'utf8', maxBuffer: 1 << 28 });
      a.times.push(Number(process.hrtime.bigint() - t0) / 1e6);
      if (hasGnuTime) {
        const { kb, cpu } = gnuTimeOf(r.stderr);
        a.peak = Math.max(a.peak, kb);
        a.cpus.push(cpu);
      }
      if ((r.status ?? 1) !== 0 && i === 0) a.error = `${cmd} ${argv.join(' ')} exited ${r.status ?? 1}: ${(r.stderr || r.stdout).slice(-400)}`;
    });
  }
  return acc.map((a) => (a.error ? { error: a.error } : summary(a.times, a.cpus, a.peak, n)));
};

/** One command's figures: {@link measureInTurn} of it alone. The CPU time says more than wall time on a machine shared with other work. */
const measure = (cmd, argv, { env = {}, cwd = root, n = runs } = {}) => measureInTurn([{ cmd, argv, env, cwd }], n)[0];

const results = [];
// The targets: each figure's most, as a ratio to its peer in the same run (a time alone says as much
// about the day's machine as about imgc). Where each comes from: docs/performance.md, "Targets".
const targets = { emptyCache: 1.0, edited: 0.8, unchanged: 0.3, tenThousandSteps: 0.4 };
const fmt = (ms) => (ms === undefined ? '—' : ms >= 1000 ? `${(ms / 1000).toFixed(2)} s` : `${ms.toFixed(0)} ms`);
/** A figure, with its peer's and, when it has one, its target (the most its ratio to the peer may be). */
const row = (group, name, m, peer, most) => {
  const entry = { group, name, ...m };
  if (peer) {
    entry.peer = peer.name;
    entry.peerMedian = peer.m?.median;
    entry.ratio = peer.m?.median && m.median ? m.median / peer.m.median : undefined;
    entry.peerCpu = peer.m?.cpu;
    entry.cpuRatio = peer.m?.cpu && m.cpu ? m.cpu / peer.m.cpu : undefined;
    entry.peerNote = peer.m?.error ?? peer.missing;
    // Without a ratio (a peer missing or failed) the target is unjudged, not met.
    if (most !== undefined) Object.assign(entry, { target: most, met: entry.ratio === undefined ? undefined : entry.ratio <= most });
  }
  results.push(entry);
};

const imgc = (...a) => [process.execPath, [imgcBin, ...a]];
let edits = 0;
/** An edit of `file` before each run (not timed): one more comment line, saved as a person saves before running the check; returns `env`. */
const editing = (file, env) => () => {
  appendFileSync(file, `// edit ${++edits}\n`);
  return env;
};

/** An empty cache, as on a CI machine (CI=true). */
const freshCache = () => {
  const dir = mkdtempSync(path.join(work, 'cache-'));
  return { IMGC_CACHE: dir, CI: 'true' };
};

const compileTo = (target, file, ...extra) => {
  const out = path.join(work, `out-${target}-${path.basename(file, '.ts')}`);
  const r = spawnSync(process.execPath, [imgcBin, 'compile', file, '--target', target, '--out', out, ...extra], { cwd: root, encoding: 'utf8' });
  return r.status === 0 ? out : undefined;
};

const peerCmd = (name, cmd, argv, opts) => {
  const bin = which(cmd);
  if (!bin) return { name, missing: `${cmd} not installed` };
  return { name, m: measure(bin, argv, opts) };
};

/**
 * imgc's specs and a peer's measured in turn ({@link measureInTurn}): imgc's figures, and the peer
 * as peerCmd gives it (`missing` without its tool, then imgc's are measured alone).
 */
const inTurnWithPeer = (specs, peer, n = runs) => {
  const bin = peer && which(peer.cmd);
  const all = measureInTurn(bin ? [...specs, { ...peer, cmd: bin }] : specs, n);
  const theirs = !peer ? undefined : bin ? { name: peer.name, m: all.at(-1) } : { name: peer.name, missing: `${peer.cmd} not installed` };
  return { ours: all.slice(0, specs.length), peer: theirs };
};

const example = 'examples/node-image.ts';
/** Ansible's own files in the bench's directory, not the user's home. */
const ansibleFiles = { ANSIBLE_LOCAL_TEMP: path.join(work, 'ansible-tmp'), ANSIBLE_HOME: path.join(work, 'ansible-home') };

if (only.has('check')) {
  const warmEnv = freshCache();
  spawnSync(...imgc('check', example), { cwd: root, env: { ...process.env, ...warmEnv } });
  // The example is a matrix, and imgc check checks every image of it: so do the peers, one playbook
  // per image (compile --all: out/<image>/site.yml), all in one run of each tool.
  const playbooks = compileTo('ansible', example, '--all');
  const sites = playbooks ? readdirSync(playbooks).sort().map((image) => path.join(image, 'site.yml')) : [];
  const same = `same ${sites.length === 1 ? 'image' : `${sites.length} images`}`;
  const lint = playbooks
    ? peerCmd(`ansible-lint (${same})`, 'ansible-lint', ['--offline', '-q', ...sites], { cwd: playbooks, env: ansibleFiles, n: Math.min(runs, 3) })
    : { name: 'ansible-lint', missing: 'imgc could not compile the playbooks' };
  // Edited: a copy of the example, saved again before each check.
  const copy = path.join(work, 'node-image.ts');
  copyFileSync(path.join(root, example), copy);
  const spec = ([cmd, argv], env) => ({ cmd, argv, env });
  const { ours, peer } = inTurnWithPeer(
    [spec(imgc('check', example), freshCache), spec(imgc('check', copy), editing(copy, warmEnv)), spec(imgc('check', example), warmEnv)],
    playbooks ? { name: `ansible-playbook --syntax-check (${same})`, cmd: 'ansible-playbook', argv: ['--syntax-check', '-i', 'localhost,', ...sites], cwd: playbooks, env: ansibleFiles } : undefined,
  );
  const [cold, changed, warm] = ours;
  const syntax = peer ?? { name: 'ansible-playbook --syntax-check', missing: 'imgc could not compile the playbooks' };
  row('check', 'imgc check node-image.ts (empty cache, CI=true)', cold, syntax, targets.emptyCache);
  row('check', 'imgc check node-image.ts (edited: file saved, no daemon)', changed, syntax, targets.edited);
  row('check', 'imgc check node-image.ts (unchanged since the last check)', warm, syntax, targets.unchanged);
  row('check', 'imgc check node-image.ts (unchanged since the last check)', warm, lint);
}

if (only.has('compile')) {
  const env = freshCache();
  spawnSync(...imgc('check', example), { cwd: root, env: { ...process.env, ...env } });
  const out = path.join(work, 'packer-out');
  // The template form the installed packer reads (Debian 12's is 1.6, without plugin pins).
  const packerVersion = /Packer v(\d+)\.(\d+)/.exec(spawnSync('packer', ['version'], { encoding: 'utf8' }).stdout ?? '');
  const form = packerVersion && (Number(packerVersion[1]) > 1 || Number(packerVersion[2]) >= 10) ? [] : ['--packer-version', '1.6'];
  const compile = measure(...imgc('compile', example, '--target', 'packer', ...form, '--out', out), { env });
  // The matrix's default combination: its one template, whatever the combination's name.
  const template = existsSync(out) ? readdirSync(out).find((f) => f.endsWith('.pkr.hcl')) : undefined;
  const hcl = template ? readFileSync(path.join(out, template), 'utf8') : '';
  // Required variables need values packer accepts: a checksum must look like one, and the SSH key
  // must exist (packer reads it, and the seed CD carries its .pub).
  const key = path.join(work, 'bench-ssh-key');
  if (!existsSync(key)) spawnSync('ssh-keygen', ['-q', '-t', 'ed25519', '-N', '', '-f', key]);
  const sample = (name) => (/checksum/.test(name) ? `sha256:${'0'.repeat(64)}` : /token/.test(name) ? 'abcdef.0123456789abcdef' : /private_key_file/.test(name) ? key : 'x');
  const vars = [...hcl.matchAll(/variable "([^"]+)" \{[^}]*?\n\}/gs)].filter((m) => !/default\s*=/.test(m[0])).flatMap((m) => ['-var', `${m[1]}=${sample(m[1])}`]);
  const validate = template
    ? peerCmd('packer validate (its output)', 'packer', ['validate', ...vars, template], { cwd: out, env: { CHECKPOINT_DISABLE: '1', PACKER_CONFIG_DIR: path.join(work, 'packer-cfg') } })
    : { name: 'packer validate', missing: 'imgc could not compile the template' };
  row('compile', 'imgc compile --target packer (warm)', compile, validate);
}

/** A definition of n steps, written as modules of 50 chained steps, as large definitions are. */
const scaleDefinition = (n) => {
  const per = 50;
  const mods = Math.ceil(n / per);
  let s = "import { image, debian12, defineModule } from 'imgc';\n\n";
  for (let m = 0; m < mods; m++) {
    s += `const m${m} = defineModule((p) => p\n`;
    for (let i = 0; i < per && m * per + i < n; i++) {
      const k = m * per + i;
      s += k % 3 === 0 ? `  .user('u${k}')\n` : k % 3 === 1 ? `  .directory('/home/u${k - 1}/d', { owner: 'u${k - 1}' })\n` : `  .file('/home/u${k - 2}/d/f', { owner: 'u${k - 2}', content: 'x${k}' })\n`;
    }
    s += ');\n';
  }
  s += "\nexport default image('scale').base(debian12()).customize((p) => p\n" + Array.from({ length: mods }, (_, m) => `  .use(m${m})\n`).join('') + ');\n';
  return s;
};

const fitExponent = (points) => {
  const xs = points.map((p) => Math.log(p.n));
  const ys = points.map((p) => Math.log(p.t));
  const mx = xs.reduce((a, b) => a + b) / xs.length;
  const my = ys.reduce((a, b) => a + b) / ys.length;
  return xs.reduce((a, x, i) => a + (x - mx) * (ys[i] - my), 0) / xs.reduce((a, x) => a + (x - mx) ** 2, 0);
};

if (only.has('scale')) {
  // A 1-step definition first: its time (process start, loading, TypeScript's
  // libraries) is subtracted before fitting, so the exponent is that of the
  // per-step cost, not of a constant.
  const sizes = args.quick ? [1, 100, 1000] : [1, 100, 1000, 10000];
  const series = { check: [], 'check --no-typecheck': [], 'compile shell': [] };
  const baseline = {};
  mkdirSync(path.join(work, 'scale'), { recursive: true });
  writeFileSync(path.join(work, 'scale', 'package.json'), '{ "type": "module" }\n');
  for (const n of sizes) {
    const file = path.join(work, 'scale', `s${n}.ts`);
    writeFileSync(file, scaleDefinition(n));
    const scaleRuns = Math.max(1, Math.min(runs, n >= 10000 ? 3 : runs));
    // The largest definition against a peer of the same size, measured in turn with it: its
    // playbook's syntax check (a time in seconds alone says as much about the machine of the day).
    const playbook = n === sizes.at(-1) ? compileTo('ansible', file) : undefined;
    const [cmd, argv] = imgc('check', file);
    const { ours: [check], peer: syntax } = inTurnWithPeer(
      [{ cmd, argv, env: freshCache }],
      playbook && { name: `ansible-playbook --syntax-check (the same ${n} steps)`, cmd: 'ansible-playbook', argv: ['--syntax-check', '-i', 'localhost,', 'site.yml'], cwd: playbook, env: ansibleFiles },
      scaleRuns,
    );
    // The file checked before, unchanged (CI's re-run, compile after check): the type-check is cached.
    const warmEnv = freshCache();
    spawnSync(...imgc('check', file), { cwd: root, env: { ...process.env, ...warmEnv } });
    const warm = measure(...imgc('check', file), { n: scaleRuns, env: warmEnv });
    // Edited: saved again before each check.
    const edited = measure(...imgc('check', file), { n: scaleRuns, env: editing(file, warmEnv) });
    // Evaluated every time (an empty cache each run), as after an edit.
    const noTc = measure(...imgc('check', '--no-typecheck', file), { n: scaleRuns, env: freshCache });
    const compile = measure(...imgc('compile', '--no-typecheck', file, '--target', 'shell', '--out', path.join(work, `scale-out-${n}`)), { n: scaleRuns, env: freshCache });
    const steps = n === 1 ? '1 step' : `${n} steps`;
    row('scale', `imgc check, ${steps} (empty cache, CI=true)`, check, syntax, n === 10000 ? targets.tenThousandSteps : undefined);
    row('scale', `imgc check, ${steps} (unchanged since the last check)`, warm);
    row('scale', `imgc check, ${steps} (edited: file saved, no daemon)`, edited);
    row('scale', `imgc check --no-typecheck, ${steps} (empty cache)`, noTc);
    row('scale', `imgc compile --no-typecheck --target shell, ${steps} (empty cache)`, compile);
    for (const [name, m] of [['check', check], ['check --no-typecheck', noTc], ['compile shell', compile]]) {
      if (!m.median) continue;
      const base = baseline[name];
      if (n === 1) baseline[name] = m;
      // The fastest runs: background work (another process) only ever adds time. A size whose
      // time is within a tenth of the 1-step time says little about growth, and its log would weigh most in the fit.
      else if (base && m.min - base.min > base.min / 10) series[name].push({ n, t: m.min - base.min });
    }
  }
  for (const [name, pts] of Object.entries(series)) {
    if (pts.length >= 2) results.push({ group: 'scale', name: `growth of ${name}, fastest run's time above the 1-step run's (${pts.map((p) => p.n).join(', ')} steps): ∝ n^k`, exponent: fitExponent(pts) });
  }
}

if (only.has('build')) {
  const reason = process.getuid?.() !== 0 ? 'not root' : !which('debootstrap') ? 'debootstrap not installed' : undefined;
  if (reason) results.push({ group: 'build', name: 'builds', skipped: reason });
  else {
    // An empty cache of its own: the first build debootstraps, as a first build anywhere does.
    const env = { IMGC_CACHE: path.join(work, 'build-cache') };
    const outShell = path.join(work, 'build-shell');
    const build = (target, out, extra = [], file = 'examples/node-image-debian.ts') => measure(...imgc('build', file, '--target', target, '--out', out, ...extra), { env, n: 1 });
    const scratch = build('shell', outShell);
    const shellFull = build('shell', outShell, ['--no-cache']);
    const ansibleFull = build('ansible', path.join(work, 'build-ansible'), ['--no-cache']);
    row('build', 'imgc build --target shell, empty cache (debootstrap included)', scratch);
    // The example ends boot-verified (v.boot()): when that was, and what booting and checking took (logs/build.json).
    const bootOf = (out) => {
      try {
        return JSON.parse(readFileSync(path.join(out, 'logs', 'build.json'), 'utf8')).boot;
      } catch {
        return undefined;
      }
    };
    const once = (ms) => ({ median: ms, min: ms, max: ms, runs: 1 });
    const booted = bootOf(outShell);
    if (booted) {
      const accel = booted.accel.toUpperCase();
      row('build', `time to a boot-verified node, empty cache (${accel})`, once(booted.sinceStartMs));
      row('build', `boot in QEMU and check ${booted.checked} runtime facts (${accel}: power-on to power-off)`, once(booted.bootMs));
    }
    row('build', 'imgc build --target shell (base cached, no phase cache)', shellFull, { name: 'imgc build --target ansible (base cached, no phase cache)', m: ansibleFull });
    // Change only phase 3 (another disk size each time) and rebuild into the same directory, as one does.
    const changed = path.join(root, 'examples', '.bench-phase3.ts');
    const withDisk = (size) => writeFileSync(changed, `import { nodeImage } from './node-image.js';\nexport default nodeImage('k8s-node-debian', { source: 'debian' }, '${size}');\n`);
    try {
      const sizes = ['5G', '6G', '5G'];
      const rebuild = measure(...imgc('build', changed, '--target', 'shell', '--out', outShell), {
        n: sizes.length,
        env: () => {
          withDisk(sizes.shift());
          return env;
        },
      });
      row('build', 'rebuild after a phase-3-only change (disk size)', rebuild, { name: 'the full build, base cached', m: shellFull });
      row('build', 'rebuild after a phase-3-only change (disk size)', rebuild, { name: 'the full build, empty cache', m: scratch });
      const again = build('shell', outShell, [], changed);
      row('build', 'rebuild with nothing changed', again, { name: 'the full build, base cached', m: shellFull });
    } finally {
      rmSync(changed, { force: true });
    }
  }
}

/**
 * test/fleet/sshbed.ts (the SSH test bed) and the tests' Ansible environment,
 * bundled with esbuild into the work directory and imported: the bench runs
 * the tests' own code, not a copy. Each module keeps its own import.meta.url
 * (the bed finds relay.mjs beside its source, the helpers the repository), and
 * packages are imported from the repository's node_modules.
 */
const loadBed = async () => {
  const esbuild = await import('esbuild');
  const outfile = path.join(work, 'sshbed.mjs');
  const ownLocation = {
    name: 'own-location',
    setup(b) {
      b.onResolve({ filter: /^[^./]/ }, (a) => ({ path: a.path.startsWith('node:') ? a.path : import.meta.resolve(a.path), external: true }));
      b.onLoad({ filter: /\.ts$/ }, (a) => ({ contents: readFileSync(a.path, 'utf8').replaceAll('import.meta.url', JSON.stringify(pathToFileURL(a.path).href)), loader: 'ts' }));
    },
  };
  await esbuild.build({
    stdin: { contents: "export { SshBed, cannotBed } from './test/fleet/sshbed.ts';\nexport { ansibleEnv } from './test/compilers/ansible-support.ts';\n", resolveDir: root, loader: 'ts' },
    bundle: true,
    platform: 'node',
    format: 'esm',
    target: 'node20',
    outfile,
    plugins: [ownLocation],
    logLevel: 'warning',
  });
  return import(pathToFileURL(outfile).href);
};

/** cmd (under GNU time) as a process group of its own, so that stopping the bench stops all of it; resolves with status and output. */
const running = new Set();
const spawnTimed = (cmd, argv, { cwd = root, env = process.env } = {}) =>
  new Promise((resolve) => {
    const full = timed(cmd, argv);
    const child = spawn(full[0], full[1], { cwd, env, detached: true, stdio: ['ignore', 'pipe', 'pipe'] });
    running.add(child);
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d) => (stdout += d));
    child.stderr.on('data', (d) => (stderr += d));
    const t0 = process.hrtime.bigint();
    child.on('close', (code, signal) => {
      running.delete(child);
      resolve({ status: code ?? 128, signal, stdout, stderr, ms: Number(process.hrtime.bigint() - t0) / 1e6 });
    });
  });

/** Ansible's recap line of each host: ok, changed, unreachable, failed. */
const recapOf = (out, name) => {
  const m = new RegExp(`^${name}\\s+: ok=(\\d+)\\s+changed=(\\d+)\\s+unreachable=(\\d+)\\s+failed=(\\d+)`, 'm').exec(out);
  return m ? { ok: Number(m[1]), changed: Number(m[2]), unreachable: Number(m[3]), failed: Number(m[4]) } : undefined;
};

if (only.has('fleet')) {
  const reason = process.getuid?.() !== 0 ? 'not root' : !which('debootstrap') ? 'debootstrap not installed' : !which('ansible-playbook') ? 'ansible-playbook not installed' : undefined;
  if (reason) results.push({ group: 'fleet', name: 'ansible runtime.yml over SSH', skipped: reason });
  else await fleetGroup();
}

async function fleetGroup() {
  // The fleet tests' definition, not examples/node-image.ts: the example's
  // provision phase installs containerd and Kubernetes from apt repositories,
  // and a bed host has only its own loopback (no route to a mirror).
  const fixture = 'test/fixtures/fleet/fleet.ts';
  const { SshBed, cannotBed, ansibleEnv } = await loadBed();
  if (cannotBed) return void results.push({ group: 'fleet', name: 'ansible runtime.yml over SSH', skipped: cannotBed });
  const out = path.join(work, 'fleet-out');
  const compiled = spawnSync(...imgc('compile', fixture, '--target', 'ansible', '--runtime', '--decommission', '--out', out), { cwd: root, encoding: 'utf8' });
  const irRun = spawnSync(...imgc('ir', '--no-typecheck', fixture), { cwd: root, encoding: 'utf8', maxBuffer: 1 << 26 });
  if (compiled.status !== 0 || irRun.status !== 0) return void results.push({ group: 'fleet', name: 'ansible runtime.yml over SSH', error: `imgc could not compile ${fixture}: ${compiled.stderr}${irRun.stderr}` });
  // The phase's pre webhook: a controller on 127.0.0.1 that answers Success (a process of its own: the runs below are timed from here).
  const controller = spawn(process.execPath, ['-e', "require('node:http').createServer((q, s) => q.resume().on('end', () => s.writeHead(200, { 'content-type': 'application/json' }).end('{\"status\":\"Success\"}'))).listen(0, '127.0.0.1', function () { console.log(this.address().port); })"], { stdio: ['ignore', 'pipe', 'inherit'] });
  const names = Array.from({ length: 10 }, (_, i) => `node${String(i + 1).padStart(2, '0')}`);
  const home = path.join(work, 'fleet-home');
  let bed;
  /** The bed's start: stop() waits for it, so that a signal while hosts are starting still stops every one of them. */
  let starting;
  let stopping;
  // Hosts, controller and the playbook running are stopped whatever ends the bench: an error, Ctrl-C, SIGTERM.
  const stop = () =>
    (stopping ??= (async () => {
      for (const c of running) process.kill(-c.pid, 'SIGTERM');
      while (running.size) await new Promise((res) => setTimeout(res, 100));
      controller.kill();
      if (starting) await starting.then((b) => b.stop(), () => undefined);
    })());
  // Installed until the hosts are gone: a second signal (a second Ctrl-C, or timeout(1) signalling its whole group) must not end the bench halfway through stopping them.
  const onSignal = (sig) => {
    process.stderr.write(`bench: ${sig}: stopping the test hosts\n`);
    if (stopping) return;
    stop()
      .catch((e) => process.stderr.write(`bench: ${e.message}\n`))
      .finally(() => {
        rmSync(work, { recursive: true, force: true });
        process.exit(130);
      });
  };
  process.on('SIGINT', onSignal);
  process.on('SIGTERM', onSignal);
  try {
    const port = await new Promise((resolve, reject) => {
      controller.stdout.once('data', (d) => resolve(String(d).trim()));
      controller.once('exit', () => reject(new Error('the webhook controller did not start')));
    });
    process.env.IMGC_TEST_DIR = work;
    starting = SshBed.start(JSON.parse(irRun.stdout), names);
    bed = await starting;
    // What phase 1 gives (the host contract the preflight checks).
    for (const h of bed.hosts) {
      const r = await bed.ssh(h, 'useradd -m -s /bin/bash ops && mkdir -p /etc/demo');
      if (r.exitCode !== 0) throw new Error(`${h.name}: ${r.stderr}`);
    }
    const all = JSON.parse(bed.inventory()).all.hosts;
    let runId = 0;
    // One run of `book` against `hosts` with `forks`; each with its own ssh control sockets, so every run opens its connections as a run from scratch does.
    const play = (book, hosts, forks) => {
      if (stopping) return Promise.reject(new Error('the bench is stopping'));
      const inventory = path.join(out, `inventory-${hosts.length}.json`);
      writeFileSync(inventory, `${JSON.stringify({ all: { hosts: Object.fromEntries(hosts.map((h) => [h.name, all[h.name]])) } }, null, 2)}\n`);
      const env = { ...ansibleEnv(home), ANSIBLE_HOST_KEY_CHECKING: 'False', ANSIBLE_SSH_CONTROL_PATH_DIR: path.join(home, `cp-${++runId}`) };
      return spawnTimed('ansible-playbook', ['-i', inventory, '-f', String(forks), book, '-e', `hook_url=http://127.0.0.1:${port}/hook`, '-e', 'imgc_handlers=always'], { cwd: out, env });
    };
    /** Fails unless every host's recap has no failure and `changed` passes `ok`. */
    const expectRecap = (r, hosts, what, ok) => {
      const bad = hosts.map((h) => [h.name, recapOf(r.stdout, h.name)]).filter(([, c]) => !c || c.failed || c.unreachable || !ok(c.changed));
      if (r.status !== 0 || bad.length) throw new Error(`${what}: exit ${r.status}; ${bad.map(([n, c]) => `${n}: ${c ? `changed=${c.changed} failed=${c.failed} unreachable=${c.unreachable}` : 'no recap'}`).join(', ') || 'recap as expected'}\n${r.stdout.slice(-1500)}`);
    };
    // A fleet run takes tens of seconds to minutes: one per figure unless --runs asks for more (at most 3).
    const fleetRuns = args.runs === undefined ? 1 : Math.max(1, Math.min(runs, 3));
    const byKey = new Map();
    for (const n of [1, 5, 10]) {
      const hosts = bed.hosts.slice(0, n);
      // Ansible runs at most as many hosts at once as there are: forks beyond the host count change nothing.
      for (const forks of [...new Set([Math.min(5, n), n])]) {
        const label = `${n} host${n === 1 ? '' : 's'}, forks ${forks}${forks === Math.min(5, n) ? ' (default 5)' : ''}`;
        const first = { times: [], cpus: [], peak: 0 };
        const second = { times: [], cpus: [], peak: 0 };
        const add = (m, r) => {
          m.times.push(r.ms);
          if (hasGnuTime) {
            const { kb, cpu } = gnuTimeOf(r.stderr);
            m.peak = Math.max(m.peak, kb);
            m.cpus.push(cpu);
          }
        };
        try {
          for (let i = 0; i < fleetRuns; i++) {
            const a = await play('runtime.yml', hosts, forks);
            expectRecap(a, hosts, `first run, ${label}`, (c) => c > 0);
            add(first, a);
            const b = await play('runtime.yml', hosts, forks);
            expectRecap(b, hosts, `second run, ${label}`, (c) => c === 0);
            add(second, b);
            process.stderr.write(`bench: fleet, ${label}: first run ${fmt(a.ms)}, second run ${fmt(b.ms)}\n`);
            // The last run needs no undoing: the hosts are stopped next.
            if (n === 10 && forks === 10 && i === fleetRuns - 1) break;
            // Back to the hosts as they were (not timed): decommission, then what it keeps by design (the raw command's directory, the running sysctl value).
            const undo = await play('decommission.yml', hosts, forks);
            expectRecap(undo, hosts, `decommission, ${label}`, () => true);
            for (const h of hosts) {
              const r = await bed.ssh(h, 'rm -rf /etc/demo/imgc-demo.d && sysctl -q -w net.ipv4.ip_forward=0');
              if (r.exitCode !== 0) throw new Error(`${h.name}: ${r.stderr}`);
            }
          }
          byKey.set(`${n}/${forks}`, { first: summary(first.times, first.cpus, first.peak, fleetRuns), second: summary(second.times, second.cpus, second.peak, fleetRuns), label });
        } catch (e) {
          if (stopping) throw e;
          process.exitCode = 1;
          process.stderr.write(`bench: fleet: ${e.message}\n`);
          byKey.set(`${n}/${forks}`, { first: { error: e.message }, second: { error: e.message }, label });
        }
      }
    }
    // Peers: the same run on 1 host (growth with hosts), and at the default forks (growth with forks).
    for (const [key, m] of byKey) {
      const [n, forks] = key.split('/').map(Number);
      const peerKey = forks !== Math.min(5, n) ? `${n}/5` : n !== 1 ? '1/1' : undefined;
      const peer = peerKey && byKey.get(peerKey);
      for (const which of ['first', 'second']) {
        const what = which === 'first' ? 'first run (converges)' : 'second run (nothing to change)';
        row('fleet', `ansible-playbook runtime.yml, ${m.label}: ${what}`, m[which], peer && { name: `${peer.label}, ${which} run`, m: peer[which] });
      }
    }
  } catch (e) {
    process.exitCode = 1;
    results.push({ group: 'fleet', name: 'ansible runtime.yml over SSH', error: e.message });
  } finally {
    await stop();
    process.off('SIGINT', onSignal);
    process.off('SIGTERM', onSignal);
  }
}

// Report.
console.log(`imgc bench — ${os.cpus().length} cores, ${(os.totalmem() / 2 ** 30).toFixed(0)} GiB, node ${process.version}, ${runs} runs per figure\n`);
console.log('| group | measurement | median | min | max | peak RSS | CPU | peer | peer median | ratio | target | peer CPU | CPU ratio |');
console.log('|---|---|---|---|---|---|---|---|---|---|---|---|---|');
const verdict = (r) => (r.target === undefined ? '' : `≤ ${r.target.toFixed(1)}×: ${r.met === undefined ? 'unjudged' : r.met ? 'met' : 'NOT met'}`);
for (const r of results) {
  if (r.exponent !== undefined) console.log(`| ${r.group} | ${r.name} | k = ${r.exponent.toFixed(2)} | | | | | | | | | | |`);
  else if (r.skipped || r.error) console.log(`| ${r.group} | ${r.name} | ${r.skipped ? `skipped: ${r.skipped}` : `error: ${r.error.split('\n')[0]}`} | | | | | | | | | | |`);
  else
    console.log(
      `| ${r.group} | ${r.name} | ${fmt(r.median)} | ${fmt(r.min)} | ${fmt(r.max)} | ${r.peakKB ? `${(r.peakKB / 1024).toFixed(0)} MiB` : '—'} | ${fmt(r.cpu)} | ${r.peer ?? ''} | ${r.peer ? (r.peerNote ?? fmt(r.peerMedian)) : ''} | ${r.ratio ? `${r.ratio.toFixed(2)}×` : ''} | ${verdict(r)} | ${r.peer ? fmt(r.peerCpu) : ''} | ${r.cpuRatio ? `${r.cpuRatio.toFixed(2)}×` : ''} |`,
    );
}
const judged = results.filter((r) => r.target !== undefined);
if (judged.length) {
  const missed = judged.filter((r) => r.met !== true);
  console.log(`\nTargets: ${judged.length - missed.length} of ${judged.length} met${missed.length ? `; not met or unjudged: ${missed.map((r) => `${r.name} (${verdict(r)})`).join('; ')}` : ''}.`);
}
mkdirSync(path.join(root, 'out'), { recursive: true });
const json = JSON.stringify({ machine: { cores: os.cpus().length, memGiB: os.totalmem() / 2 ** 30, node: process.version }, runs, results }, null, 2);
writeFileSync(path.join(root, 'out', 'bench.json'), `${json}\n`);
console.log(`\n${json}`);
rmSync(work, { recursive: true, force: true });
