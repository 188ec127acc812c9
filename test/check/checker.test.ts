// The contract checker in-process, on definitions made with the builder: what
// it must find (and must not) about removals, kinds of paths and pins.
import { describe, expect, it } from 'vitest';
import { checkImage } from '../../src/check/checker.js';
import { image, type PhaseBuilder } from '../../src/index.js';
import { debian12 } from '../../stdlib/bases.js';

type Customize = Parameters<ReturnType<ReturnType<typeof image>['base']>['customize']>[0];

/** `code@step` of every diagnostic of the image made by `customize` (on debian 12). */
const verdict = (customize: (p: PhaseBuilder) => PhaseBuilder, base = debian12()): string[] => {
  const ir = image('t').base(base).customize(customize as unknown as Customize).toIR();
  return checkImage(ir).map((d) => `${d.code}@${d.stepId ?? '-'}`);
};

describe('removal is structural', () => {
  it('a directory removed takes what lies below it: a later write there is IMGC0005', () => {
    expect(verdict((p) => p.directory('/opt/t').directory('/opt/t/bin').command('rm -rf /opt/t', { removes: { path: ['/opt/t'] } }).file('/opt/t/bin/x', { content: '' }) as never)).toEqual([
      'IMGC0005@customize.4.file',
    ]);
  });

  it('a path below a removed tree that no step named is IMGC0005 too, naming the removal', () => {
    const ir = image('t').base(debian12()).customize((p) => p.directory('/opt/t').command('rm -rf /opt/t', { removes: { path: ['/opt/t'] } }).directory('/opt/t/a/b' as '/opt/t/a/b')).toIR();
    const ds = checkImage(ir);
    expect(ds.map((d) => d.code)).toEqual(['IMGC0005']);
    expect(ds[0]!.related[0]!.loc?.line).toBeGreaterThan(0);
  });

  it('making the directory again makes it usable again', () => {
    expect(verdict((p) => p.directory('/opt/t').command('rm -rf /opt/t', { removes: { path: ['/opt/t'] } }).directory('/opt/t').file('/opt/t/x', { content: '' }) as never)).toEqual([]);
  });

  it('a removed file may be written again without a duplicate warning', () => {
    expect(verdict((p) => p.file('/etc/x', { content: 'a' }).command('rm /etc/x', { removes: { path: ['/etc/x'] } }).file('/etc/x', { content: 'a' }) as never)).toEqual([]);
  });

  it('removing a package takes only its own paths, not what others wrote below them (dpkg)', () => {
    expect(
      verdict((p) => p.packages(['containerd']).directory('/etc/containerd/certs.d').removePackages(['containerd']).file('/etc/containerd/certs.d/x', { content: '' }) as never),
    ).toEqual([]);
  });
});

describe('different kinds at one path conflict (IMGC0012), with both locations', () => {
  const cases: [string, (p: PhaseBuilder) => unknown, string][] = [
    ['file where a directory is', (p) => p.directory('/etc/k').file('/etc/k', { content: '' }), 'customize.2.file'],
    ['directory where a file is', (p) => p.file('/etc/k', { content: '' }).directory('/etc/k'), 'customize.2.directory'],
    ['symlink where a directory is', (p) => p.directory('/etc/k').symlink('/etc/k', '/x'), 'customize.2.symlink'],
    ['directory where a symlink is', (p) => p.symlink('/etc/k', '/x').directory('/etc/k'), 'customize.2.directory'],
    ['file below a file', (p) => p.file('/etc/k', { content: '' }).file('/etc/k/x', { content: '' }), 'customize.2.file'],
    ['a user\'s home where a file is', (p) => p.file('/home/kube', { content: '' }).user('kube'), 'customize.2.user'],
  ];
  it.each(cases)('%s', (_, steps, at) => {
    const ir = image('t').base(debian12()).customize(steps as never).toIR();
    const ds = checkImage(ir).filter((d) => d.code === 'IMGC0012');
    expect(ds.map((d) => d.stepId)).toEqual([at]);
    expect(ds[0]!.loc).toBeDefined();
    expect(ds[0]!.related[0]!.loc).toBeDefined();
  });

  it('a directory made twice, or a file and a symlink (IMGC0006), are not kind conflicts', () => {
    expect(verdict((p) => p.directory('/etc/k').directory('/etc/k') as never)).toEqual([]);
    expect(verdict((p) => p.file('/etc/k', { content: '' }).symlink('/etc/k', '/x') as never)).toEqual(['IMGC0006@customize.2.symlink']);
  });

  it('a path removed in between may become another kind', () => {
    expect(verdict((p) => p.directory('/etc/k').command('rm -r /etc/k', { removes: { path: ['/etc/k'] } }).file('/etc/k', { content: '' }) as never)).toEqual([]);
  });
});
