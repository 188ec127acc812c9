// What a killed build leaves is reclaimed by the next one, and only that:
// owner records (pid + start time + boot id) against pid reuse, in-process;
// then real builds killed with SIGKILL at points across base, phases,
// caching and artifacts, each followed by a build that must succeed and
// leave no mount, work directory, staging directory or process behind.
import { execa } from 'execa';
import { spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { cacheDir } from '../../src/build/cache.js';
import { keptRootNote } from '../../src/build/work.js';
import { claim, describeReclaimed, markKept, OWNER_FILE, reclaimStale, startTime, thisOwner } from '../../src/build/reclaim.js';
import { removeTempDirs, tempDir } from '../helpers/temp.js';
import { cannotBuild, imgcRun, mountsContaining, outDir, summaryOf } from './helpers.js';

const isRoot = process.getuid?.() === 0;

/** A pid that is certainly gone: a process that ran and was reaped. */
const deadPid = (): number => spawnSync('true').pid!;

describe('reclaiming what killed builds left (owner records)', () => {
  it('removes directories whose owner is gone or whose pid now belongs to another process, and nothing of a live build', () => {
    const parent = tempDir('reclaim-parent');
    const out = path.join(parent, 'out');
    const cache = path.join(parent, 'cache');
    mkdirSync(out);
    mkdirSync(cache);
    const work = (name: string, owner?: object) => {
      const dir = path.join(parent, `.imgc-work-${name}`);
      mkdirSync(path.join(dir, 'root', 'etc'), { recursive: true });
      if (owner) writeFileSync(path.join(dir, OWNER_FILE), JSON.stringify(owner));
      return dir;
    };
    const live = work('live');
    claim(live);
    const dead = work('dead', { ...thisOwner(), pid: deadPid() });
    // This very pid, but started at another time: the pid was reused, the owner is gone.
    const reused = work('reused', { ...thisOwner(), start: String(Number(startTime(process.pid)) - 1) });
    const rebooted = work('rebooted', { ...thisOwner(), boot: 'another-boot' });
    const unowned = work('unowned'); // made this instant by a build that has not written its owner yet
    // A build gone long ago kept this one on purpose (--keep-root): the user's, not a later build's.
    const kept = work('kept', { ...thisOwner(), pid: deadPid() });
    markKept(kept);
    const staleStaging = path.join(out, `.imgc-staging-${deadPid()}`);
    mkdirSync(staleStaging);
    const liveStaging = path.join(out, `.imgc-staging-${process.pid}`);
    mkdirSync(liveStaging);
    claim(liveStaging);
    const tmpTar = path.join(cache, `phase-0123.tar.zst.tmp-${deadPid()}`);
    writeFileSync(tmpTar, 'half a tarball');
    const liveTar = path.join(cache, `phase-4567.tar.zst.tmp-${process.pid}`);
    writeFileSync(liveTar, 'being written');

    const reclaimed = reclaimStale({ workParent: parent, outDir: out, cacheDir: cache });
    expect(reclaimed.map((r) => path.basename(r.dir)).sort()).toEqual(['.imgc-staging-' + staleStaging.split('-').pop(), '.imgc-work-dead', '.imgc-work-rebooted', '.imgc-work-reused'].sort());
    for (const gone of [dead, reused, rebooted, staleStaging, tmpTar]) expect(existsSync(gone), gone).toBe(false);
    for (const left of [live, unowned, kept, liveStaging, liveTar]) expect(existsSync(left), left).toBe(true);
  });

  it("a kept root's note names a command that removes it, whatever its path holds", () => {
    const parent = tempDir('reclaim-kept note');
    const dir = path.join(parent, ".imgc-work-it's $HOME `x`");
    mkdirSync(path.join(dir, 'root', 'etc'), { recursive: true });
    const note = keptRootNote(parent, dir);
    expect(note).toContain(`root kept at ${path.join(".imgc-work-it's $HOME `x`", 'root')}`);
    const command = /: (rm -rf -- .*) when done\)$/.exec(note)?.[1];
    expect(command).toBeDefined();
    expect(spawnSync('sh', ['-c', command!], { cwd: parent }).status).toBe(0);
    expect(existsSync(dir)).toBe(false);
    expect(existsSync(parent)).toBe(true);
  });

  it.skipIf(!isRoot)('stops what still runs inside a dead build\'s directory and unmounts what it left mounted', async () => {
    const parent = tempDir('reclaim-mounts');
    const dir = path.join(parent, '.imgc-work-mounted');
    const proc = path.join(dir, 'root', 'proc');
    mkdirSync(proc, { recursive: true });
    writeFileSync(path.join(dir, OWNER_FILE), JSON.stringify({ ...thisOwner(), pid: deadPid() }));
    expect(spawnSync('mount', ['-t', 'proc', 'proc', proc]).status).toBe(0);
    // An orphan of the killed build, still working in its root.
    const orphan = spawn('sleep', ['300'], { cwd: path.join(dir, 'root'), stdio: 'ignore' });
    const exited = new Promise((r) => orphan.once('exit', r));
    const [r] = reclaimStale({ workParent: parent, outDir: path.join(parent, 'out'), cacheDir: path.join(parent, 'cache') });
    expect(r).toMatchObject({ dir, unmounted: 1, killed: 1, stuck: [] });
    await exited;
    expect(mountsContaining(dir)).toEqual([]);
    expect(existsSync(dir)).toBe(false);
  });

  it.skipIf(!isRoot)("a test's cleanup takes down what its timed-out test left mounted and running in a temp dir", async () => {
    const dir = tempDir('reclaim-timed-out');
    const proc = path.join(dir, 'root', 'proc');
    mkdirSync(proc, { recursive: true });
    expect(spawnSync('mount', ['-t', 'proc', 'proc', proc]).status).toBe(0);
    const orphan = spawn('sleep', ['300'], { cwd: path.join(dir, 'root'), stdio: 'ignore' });
    const exited = new Promise((r) => orphan.once('exit', r));
    removeTempDirs();
    await exited;
    expect(mountsContaining(dir)).toEqual([]);
    expect(existsSync(dir)).toBe(false);
  });

  it.skipIf(!isRoot)('says a directory rm could not remove was left in place, never that it was removed', () => {
    const parent = tempDir('reclaim-immutable');
    const dir = path.join(parent, '.imgc-work-immutable');
    const stuck = path.join(dir, 'root', 'etc', 'stuck');
    mkdirSync(path.dirname(stuck), { recursive: true });
    writeFileSync(stuck, '');
    writeFileSync(path.join(dir, OWNER_FILE), JSON.stringify({ ...thisOwner(), pid: deadPid() }));
    // An immutable file: even root's rm -rf fails on it.
    const chattr = spawnSync('chattr', ['+i', stuck]);
    if (chattr.status !== 0) return; // a filesystem without the attribute: nothing to prove here
    try {
      const [r] = reclaimStale({ workParent: parent, outDir: path.join(parent, 'out'), cacheDir: path.join(parent, 'cache') });
      expect(r).toMatchObject({ dir, notRemoved: true });
      const line = describeReclaimed(r!, parent);
      expect(line).toContain('left it in place');
      expect(line).not.toMatch(/removed it/);
      expect(existsSync(stuck)).toBe(true);
    } finally {
      spawnSync('chattr', ['-i', stuck]);
    }
  });
});

/** Lines of a running build's output, as they arrive; resolves `waitFor` when a line matches. */
const watch = (child: ReturnType<typeof imgcRun>) => {
  let text = '';
  const waiters: Array<{ re: RegExp; resolve: () => void }> = [];
  child.all!.on('data', (chunk: Buffer) => {
    text += chunk.toString();
    for (const w of waiters.splice(0)) {
      if (w.re.test(text)) w.resolve();
      else waiters.push(w);
    }
  });
  return {
    waitFor: (re: RegExp) => new Promise<void>((resolve) => (re.test(text) ? resolve() : waiters.push({ re, resolve }))),
    text: () => text,
  };
};

const prefix = '.imgc-work-imgc-test-fault-';

describe.skipIf(cannotBuild)('fault injection: imgc build killed with SIGKILL, then built again', () => {
  // Where the killed build is in each case: the line that starts the stage, then a random moment in it.
  const points: Array<{ name: string; line: RegExp }> = [
    { name: 'laying the base', line: /^base: /m },
    { name: 'a customize step (mounts up)', line: /^customize: \d+ steps?/m },
    { name: 'caching the root after customize', line: /^customize: caching the root/m },
    { name: 'a provision step (mounts up)', line: /^provision: \d+ steps?/m },
    { name: 'making the artifacts', line: /^artifact: \d+ steps?/m },
    { name: 'verifying the facts', line: /^verify: \d+ steps?/m },
  ];

  it('every time, the next build reclaims what the killed one left and succeeds, leaving nothing behind', async () => {
    // The work directories go beside --out: in a directory of this test's own, so no other test's
    // build (they run in parallel, each reclaiming what killed builds left) takes them first.
    const out = path.join(outDir('fault'), 'out');
    const parent = path.dirname(out);
    const cache = cacheDir(process.env);
    const fixture = 'test/build/fixtures/fault.ts';
    const seen: string[] = [];
    for (const p of points) {
      // A short stage (verify takes ~0.1 s) can end before a random delay does, or the build
      // be past its work directory when killed: then the point is tried again with half the delay, down to none.
      let delay = Math.floor(Math.random() * 1200);
      let killed: ReturnType<typeof imgcRun>;
      let w: ReturnType<typeof watch>;
      for (;;) {
        // --no-cache: every stage runs, so the kill lands where it is meant to.
        killed = imgcRun(['build', fixture, '--no-typecheck', '--out', out, '--no-cache']);
        w = watch(killed);
        const started = await Promise.race([w.waitFor(p.line).then(() => true), killed.then(() => false)]);
        expect(started, `${p.name}: the stage never started\n${w.text()}`).toBe(true);
        await new Promise((r) => setTimeout(r, delay));
        // Frozen first, so whether its work directory still exists is read without a race:
        // a build past its last stage has moved its root to the cache and left nothing to reclaim.
        killed.kill('SIGSTOP');
        const hadWork = readdirSync(parent).some((f) => f.startsWith(prefix));
        killed.kill('SIGKILL');
        const k = await killed;
        if ((k.signal === 'SIGKILL' && hadWork) || delay === 0) {
          expect(k.signal, `${p.name} +${delay}ms: ${w.text()}`).toBe('SIGKILL');
          break;
        }
        delay = Math.floor(delay / 2);
      }
      seen.push(`${p.name} +${delay}ms`);
      const killedPid = killed.pid!;

      const next = await imgcRun(['build', fixture, '--no-typecheck', '--out', out]);
      expect(next.exitCode, `after killing while ${p.name} (${seen.join(', ')}):\n${next.all}`).toBe(0);
      expect(summaryOf(out).ok).toBe(true);
      // The killed build's work directory existed from its start: the next build says it reclaimed it.
      expect(next.all, p.name).toMatch(new RegExp(`reclaimed \\S+${prefix}\\S+, left by a killed build \\(pid ${killedPid}\\)`));
      // Nothing of either build is left: mounts, work directories, staging, half-written cache entries, processes.
      expect(mountsContaining(prefix), p.name).toEqual([]);
      expect(readdirSync(parent).filter((f) => f.startsWith(prefix)), p.name).toEqual([]);
      expect(readdirSync(out).filter((f) => f.startsWith('.imgc-staging-')), p.name).toEqual([]);
      expect(readdirSync(cache).filter((f) => f.endsWith(`.tmp-${killedPid}`)), p.name).toEqual([]);
      const left = await execa('pgrep', ['-f', prefix], { reject: false });
      expect(left.stdout, p.name).toBe('');
    }
    console.log(`fault injection points: ${seen.join(', ')}`);
  }, 900_000);
});
