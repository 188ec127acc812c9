import { describe, expect, it } from 'vitest';
import { execaSync } from 'execa';
import { mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { globMatches, globParts, isGlob } from '../../src/core/glob.js';
import { tempDir } from '../helpers/temp.js';

describe('path globs', () => {
  it('match as sh matches them: within one segment, no leading dot unless asked', () => {
    expect(isGlob('/tmp/*')).toBe(true);
    expect(isGlob('/etc/machine-id')).toBe(false);
    expect(globMatches('/tmp/*', '/tmp/a')).toBe(true);
    expect(globMatches('/tmp/*', '/tmp/a/b')).toBe(false);
    expect(globMatches('/tmp/*', '/tmp/.x')).toBe(false);
    expect(globMatches('/tmp/.*', '/tmp/.x')).toBe(true);
    expect(globMatches('/etc/ssh/ssh_host_*_key', '/etc/ssh/ssh_host_rsa_key')).toBe(true);
    expect(globMatches('/etc/ssh/ssh_host_*_key', '/etc/ssh/ssh_host_rsa_key.pub')).toBe(false);
    expect(globMatches('/var/log/*.[0-9]', '/var/log/syslog.1')).toBe(true);
    expect(globMatches('/var/log/*.[!0-9]', '/var/log/syslog.1')).toBe(false);
    expect(globMatches('/var/log/?.log', '/var/log/a.log')).toBe(true);
    expect(globParts('/var/log/*.gz')).toEqual({ dir: '/var/log', name: '*.gz' });
  });

  it('agree with the shell on a real directory', () => {
    const dir = tempDir('glob');
    for (const f of ['a.log', '.hidden.log', 'b.log.1', 'c.gz', 'd']) writeFileSync(path.join(dir, f), '');
    mkdirSync(path.join(dir, 'sub.log'));
    for (const pat of ['*', '*.log', '.*.log', '*.[0-9]', '?', '[!a]*', '*.gz']) {
      const sh = execaSync('/bin/sh', ['-c', `cd "$1" && for f in ${pat}; do [ -e "$f" ] && echo "$f"; done; true`, 'sh', dir]).stdout.split('\n').filter(Boolean).sort();
      const ours = ['a.log', '.hidden.log', 'b.log.1', 'c.gz', 'd', 'sub.log'].filter((f) => globMatches(`${dir}/${pat}`, `${dir}/${f}`)).sort();
      expect(ours, pat).toEqual(sh);
    }
  });
});
