// Locks that die with their holder (src/host/flock.ts): held while the holder
// lives, refused to a second taker without waiting, waited for, and free
// again once the holder is SIGKILLed, with no process of the lock left.
import { execa } from 'execa';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { describe, expect, it } from 'vitest';
import { lockFile, lockOrWait } from '../../src/host/flock.js';
import { repoRoot } from '../helpers/cli.js';
import { tempDir } from '../helpers/temp.js';

const flockChildren = async (file: string): Promise<string[]> => (await execa('pgrep', ['-f', `flock .*${file}`], { reject: false })).stdout.split('\n').filter(Boolean);

describe('flock locks', () => {
  it('are exclusive, waited for, and released by release()', async () => {
    const file = path.join(tempDir('flock'), 'x.lock');
    const first = await lockFile(file, { wait: false });
    expect(first).toBeDefined();
    expect(await lockFile(file, { wait: false }), 'held: no second taker').toBeUndefined();
    let told = false;
    const second = lockOrWait(file, () => (told = true));
    await new Promise((r) => setTimeout(r, 300));
    await first!.release();
    const { lock, waited } = await second;
    expect([told, waited]).toEqual([true, true]);
    await lock.release();
    await lock.release(); // twice: nothing
    const again = await lockFile(file, { wait: false });
    expect(again).toBeDefined();
    await again!.release();
  });

  it('die with the process that held them, SIGKILL too', async () => {
    const file = path.join(tempDir('flock-kill'), 'x.lock');
    const module = pathToFileURL(path.join(repoRoot, 'dist', 'src', 'host', 'flock.js')).href;
    const holder = execa('node', ['--input-type=module', '-e', `const { lockFile } = await import(${JSON.stringify(module)}); await lockFile(${JSON.stringify(file)}, { wait: false }); console.log('held'); setInterval(() => {}, 1000);`], { reject: false });
    await new Promise<void>((resolve) => holder.stdout!.once('data', () => resolve()));
    expect(await lockFile(file, { wait: false })).toBeUndefined();
    holder.kill('SIGKILL');
    await holder;
    const lock = await lockFile(file, { wait: true });
    expect(lock).toBeDefined();
    await lock!.release();
    for (let i = 0; i < 50 && (await flockChildren(file)).length; i++) await new Promise((r) => setTimeout(r, 100));
    expect(await flockChildren(file)).toEqual([]);
  });
});
