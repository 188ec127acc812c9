// The build's own clean-up of a root after each phase (src/build/settle.ts):
// the package tools' logs emptied, their rebuildable caches removed, nothing
// outside the root touched through a symlink.
import { existsSync, mkdirSync, readFileSync, statSync, symlinkSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { BUILD_CACHES, BUILD_LOGS, settleRoot } from '../../src/build/settle.js';
import { tempDir } from '../helpers/temp.js';

const put = (root: string, p: string, text: string, mode = 0o644) => {
  mkdirSync(path.dirname(path.join(root, p)), { recursive: true });
  writeFileSync(path.join(root, p), text, { mode });
};

describe('settling a root after a phase', () => {
  it('empties the logs (keeping their modes), removes the caches, leaves everything else', () => {
    const root = tempDir('settle-root');
    for (const p of BUILD_LOGS) put(root, p, '2026-12-05 09:10:11 install foo:amd64 <none> 1.0\n', 0o640);
    for (const p of BUILD_CACHES) put(root, p, 'binary\n');
    put(root, '/var/log/apt/keep.log', 'mine\n');
    put(root, '/var/cache/apt/archives/lock', '');
    expect(settleRoot(root).sort()).toEqual([...BUILD_LOGS, ...BUILD_CACHES].sort());
    for (const p of BUILD_LOGS) {
      expect(readFileSync(path.join(root, p), 'utf8'), p).toBe('');
      expect(statSync(path.join(root, p)).mode & 0o777, p).toBe(0o640);
    }
    for (const p of BUILD_CACHES) expect(existsSync(path.join(root, p)), p).toBe(false);
    expect(readFileSync(path.join(root, 'var/log/apt/keep.log'), 'utf8')).toBe('mine\n');
    expect(existsSync(path.join(root, 'var/cache/apt/archives/lock'))).toBe(true);
    expect(settleRoot(root), 'a second time: nothing to do').toEqual([]);
  });

  it('does not follow a symlinked log directory out of the root', () => {
    const root = tempDir('settle-link');
    const outside = tempDir('settle-outside');
    writeFileSync(path.join(outside, 'dpkg.log'), 'host log\n');
    mkdirSync(path.join(root, 'var'), { recursive: true });
    symlinkSync(outside, path.join(root, 'var/log'));
    expect(settleRoot(root)).toEqual([]);
    expect(readFileSync(path.join(outside, 'dpkg.log'), 'utf8')).toBe('host log\n');
  });
});
