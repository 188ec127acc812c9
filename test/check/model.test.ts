// Model-based property test of the contract checker: random definitions
// (users, groups, directories, files, symlinks, packages and their pins, a
// service, units, downloads, archives, and removals of each, across phases) run through a small reference interpreter
// over a simulated root; the checker's verdict (each diagnostic's code and
// step) must be the interpreter's. The interpreter shares no code with the
// checker: it only reads the step ids the builder gave.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { checkImage } from '../../src/check/checker.js';
import { image, type BaseImage, type PhaseBuilder } from '../../src/index.js';
import type { Facts } from '../../src/dsl/types.js';
import { debian12 } from '../../stdlib/bases.js';
import { aptCatalog } from '../../stdlib/catalog.js';
import { packageFacts, type PackageCatalog } from '../../src/core/catalog.js';

const USERS = ['u1', 'u2'] as const;
const GROUPS = ['g1', 'g2'] as const;
const PATHS = ['/m', '/m/a', '/m/a/b', '/m/c'] as const;
const PACKAGES = ['systemd', 'containerd', 'curl'] as const;
const UNIT = '/etc/systemd/system/m.service';
/** An archive's directory and the path it declares it creates (one of PATHS). */
const ARCHIVES = { '/m': '/m/c', '/m/a': '/m/a/b' } as const;

type Op =
  | { op: 'user'; name: string; group?: string }
  | { op: 'delUser'; name: string }
  | { op: 'group'; name: string }
  | { op: 'delGroup'; name: string }
  | { op: 'dir'; path: string; owner?: string; group?: string }
  | { op: 'file'; path: string; content: string; owner?: string }
  | { op: 'symlink'; path: string }
  | { op: 'rm'; path: string }
  | { op: 'install'; name: string }
  | { op: 'purge'; name: string }
  | { op: 'enable' }
  | { op: 'pin'; version: string }
  | { op: 'unit'; content: string }
  | { op: 'download'; path: string }
  | { op: 'archive'; dest: keyof typeof ARCHIVES };

const opArb: fc.Arbitrary<Op> = fc.oneof(
  fc.record({ op: fc.constant('user' as const), name: fc.constantFrom(...USERS), group: fc.option(fc.constantFrom(...GROUPS), { nil: undefined }) }),
  fc.record({ op: fc.constant('delUser' as const), name: fc.constantFrom(...USERS) }),
  fc.record({ op: fc.constant('group' as const), name: fc.constantFrom(...GROUPS) }),
  fc.record({ op: fc.constant('delGroup' as const), name: fc.constantFrom(...GROUPS) }),
  fc.record({ op: fc.constant('dir' as const), path: fc.constantFrom(...PATHS), owner: fc.option(fc.constantFrom(...USERS), { nil: undefined }), group: fc.option(fc.constantFrom(...GROUPS), { nil: undefined }) }),
  fc.record({ op: fc.constant('file' as const), path: fc.constantFrom(...PATHS), content: fc.constantFrom('a', 'b'), owner: fc.option(fc.constantFrom(...USERS), { nil: undefined }) }),
  fc.record({ op: fc.constant('symlink' as const), path: fc.constantFrom(...PATHS) }),
  fc.record({ op: fc.constant('rm' as const), path: fc.constantFrom(...PATHS) }),
  fc.record({ op: fc.constant('install' as const), name: fc.constantFrom(...PACKAGES) }),
  fc.record({ op: fc.constant('purge' as const), name: fc.constantFrom(...PACKAGES) }),
  fc.constant({ op: 'enable' as const }),
  fc.record({ op: fc.constant('pin' as const), version: fc.constantFrom('1.6.20~ds1-1', '1.6.20~ds1-1+b1', '1.6.*') }),
  fc.record({ op: fc.constant('unit' as const), content: fc.constantFrom('[Unit]\n', '[Service]\n') }),
  fc.record({ op: fc.constant('download' as const), path: fc.constantFrom(...PATHS) }),
  fc.record({ op: fc.constant('archive' as const), dest: fc.constantFrom('/m' as const, '/m/a' as const) }),
);

const SUM = 'a'.repeat(64);

type P = PhaseBuilder<Facts>;
const base: BaseImage = debian12();

const apply = (p: P, o: Op): P => {
  switch (o.op) {
    case 'user':
      return p.user(o.name, { system: true, ...(o.group ? { groups: [o.group] } : {}) });
    case 'delUser':
      return p.command(`userdel ${o.name}`, { requires: { user: [o.name] }, removes: { user: [o.name] } });
    case 'group':
      return p.group(o.name);
    case 'delGroup':
      return p.command(`groupdel ${o.name}`, { requires: { group: [o.name] }, removes: { group: [o.name] } });
    case 'dir':
      return p.directory(o.path as `/${string}`, { ...(o.owner ? { owner: o.owner } : {}), ...(o.group ? { group: o.group } : {}) });
    case 'file':
      return p.file(o.path as `/${string}`, { content: o.content, ...(o.owner ? { owner: o.owner } : {}) });
    case 'symlink':
      return p.symlink(o.path as `/${string}`, '/x');
    case 'rm':
      return p.command(`rm -r ${o.path}`, { requires: { path: [o.path] }, removes: { path: [o.path] } });
    case 'install':
      return p.packages([o.name]);
    case 'purge':
      return p.removePackages([o.name]);
    case 'enable':
      return p.enableService('containerd');
    case 'pin':
      return p.packages([`containerd=${o.version}`]);
    case 'unit':
      return p.unit('m.service', o.content);
    case 'download':
      return p.download(`https://downloads.example.org${o.path}`, o.path as `/${string}`, { sha256: SUM });
    case 'archive':
      return p.archive(`https://downloads.example.org${o.dest}.tar.gz`, o.dest, { sha256: SUM, creates: [ARCHIVES[o.dest]] });
  }
};

// ---- The reference interpreter: a simulated root, step by step. ----

type Kind = 'dir' | 'file' | 'symlink';
type Thing = `user:${string}` | `group:${string}` | `package:${string}` | `service:${string}` | `command:${string}` | `path:${string}`;

/** What installing each package of the model brings: what the stdlib catalog says. */
const brings: Record<string, Thing[]> = Object.fromEntries(
  ['systemd', 'containerd', 'curl'].map((name) => [name, packageFacts(aptCatalog as PackageCatalog, name).map((f) => `${f.kind}:${f.key}` as Thing)]),
);

const up = (p: string): string => p.slice(0, p.lastIndexOf('/')) || '/';

/** What an op needs, makes and takes away, in the model's words. */
const effects = (o: Op): { needs: { thing: Thing; as: 'owner' | 'service' | 'plain' }[]; makes: Thing[]; takes: Thing[] } => {
  const plain = (thing: Thing) => ({ thing, as: 'plain' as const });
  switch (o.op) {
    case 'user':
      return { needs: o.group ? [plain(`group:${o.group}`)] : [], makes: [`user:${o.name}`, `group:${o.name}`], takes: [] };
    case 'delUser':
      return { needs: [plain(`user:${o.name}`)], makes: [], takes: [`user:${o.name}`] };
    case 'group':
      return { needs: [], makes: [`group:${o.name}`], takes: [] };
    case 'delGroup':
      return { needs: [plain(`group:${o.name}`)], makes: [], takes: [`group:${o.name}`] };
    case 'dir':
    case 'file':
      return {
        needs: [
          plain(`path:${up(o.path)}`),
          ...(o.owner ? [{ thing: `user:${o.owner}` as Thing, as: 'owner' as const }] : []),
          ...(o.op === 'dir' && o.group ? [{ thing: `group:${o.group}` as Thing, as: 'owner' as const }] : []),
        ],
        makes: [`path:${o.path}`],
        takes: [],
      };
    case 'symlink':
      return { needs: [plain(`path:${up(o.path)}`)], makes: [`path:${o.path}`], takes: [] };
    case 'rm':
      return { needs: [plain(`path:${o.path}`)], makes: [], takes: [`path:${o.path}`] };
    case 'install':
      return { needs: [], makes: brings[o.name]!, takes: [] };
    case 'purge':
      return { needs: [], makes: [], takes: brings[o.name]! };
    case 'enable':
      return { needs: [{ thing: 'service:containerd', as: 'service' }, plain('command:systemctl')], makes: [], takes: [] };
    case 'pin':
      return { needs: [], makes: brings['containerd']!, takes: [] };
    case 'unit':
      return { needs: [plain('path:/etc/systemd/system')], makes: [`path:${UNIT}`, 'service:m', 'service:m.service'], takes: [] };
    case 'download':
      return { needs: [plain(`path:${up(o.path)}`), plain('command:curl')], makes: [`path:${o.path}`], takes: [] };
    case 'archive':
      return { needs: [plain(`path:${up(o.dest)}`), plain('command:curl'), plain('command:tar'), plain('command:gzip')], makes: [`path:${o.dest}`, `path:${ARCHIVES[o.dest]}`], takes: [] };
  }
};

/** What an op writes: each path with what it makes it (undefined: declared, kind not known) and, for a whole writer, what it writes. */
const writes = (o: Op): { path: string; kind: Kind | undefined; written?: string }[] => {
  switch (o.op) {
    case 'dir':
      return [{ path: o.path, kind: 'dir' }];
    case 'file':
      return [{ path: o.path, kind: 'file', written: `file ${o.content}${o.owner ?? ''}` }];
    case 'symlink':
      return [{ path: o.path, kind: 'symlink', written: 'symlink' }];
    case 'unit':
      return [{ path: UNIT, kind: 'file', written: `unit ${o.content}` }];
    case 'download':
      return [{ path: o.path, kind: 'file', written: `download ${o.path}` }];
    case 'archive':
      return [{ path: o.dest, kind: 'dir' }, { path: ARCHIVES[o.dest], kind: undefined, written: `archive ${o.dest}` }];
    default:
      return [];
  }
};

/** The diagnostics (code@step) the model expects of `ops` (each with its step id), run in order. */
const interpret = (ops: { op: Op; id: string }[]): string[] => {
  const out: string[] = [];
  // Of the base's facts, those the ops need.
  const present = new Set<Thing>(['path:/', 'path:/etc', 'path:/etc/systemd/system', 'command:sh', 'command:tar', 'command:gzip']);
  const goneBy = new Map<Thing, string>();
  // The root's tree: what each path is, and for files and symlinks what was written first.
  const tree = new Map<string, { kind: Kind | undefined; written?: string }>([['/', { kind: 'dir' }]]);
  // What was created and is still there; for a package, the version its first install pinned.
  const seen = new Map<string, string | undefined>();
  ops.forEach(({ op, id }, i) => {
    const { needs, makes, takes } = effects(op);
    for (const { thing, as } of needs) {
      if (present.has(thing)) continue;
      let removal = goneBy.get(thing);
      if (!removal && thing.startsWith('path:')) {
        // Gone with a directory above it that was removed and not made again.
        for (let d = up(thing.slice(5)); ; d = up(d)) {
          if (present.has(`path:${d}`)) break;
          removal = goneBy.get(`path:${d}`);
          if (removal || d === '/') break;
        }
      }
      const later = ops.slice(i + 1).some((l) => effects(l.op).makes.includes(thing));
      out.push(`${removal ? 'IMGC0005' : later ? 'IMGC0002' : as === 'owner' ? 'IMGC0003' : as === 'service' ? 'IMGC0004' : 'IMGC0001'}@${id}`);
    }
    // Duplicates: a second creation of what is still there.
    const created = op.op === 'user' ? [`user:${op.name}`] : op.op === 'group' ? [`group:${op.name}`] : op.op === 'install' ? [`package:${op.name}`] : op.op === 'pin' ? ['package:containerd'] : [];
    const pin = op.op === 'pin' ? op.version : undefined;
    for (const c of created) {
      if (seen.has(c)) {
        const was = seen.get(c);
        // Two pins that cannot name one version (a glob matches what starts with its prefix).
        const clash = was !== undefined && pin !== undefined && was !== pin && !(was.endsWith('*') && pin.startsWith(was.slice(0, -1))) && !(pin.endsWith('*') && was.startsWith(pin.slice(0, -1)));
        out.push(`${clash ? 'IMGC0016' : c.startsWith('package:') ? 'IMGC0009' : 'IMGC0008'}@${id}`);
      } else seen.set(c, pin);
    }
    for (const t of takes) seen.delete(t);
    // The tree.
    if (op.op === 'rm') {
      for (const p of [...tree.keys()]) if (p === op.path || p.startsWith(`${op.path}/`)) tree.delete(p);
    }
    for (const { path, kind, written } of writes(op)) {
      for (let d = up(path); d !== '/'; d = up(d)) {
        if (tree.get(d)?.kind === 'file') {
          out.push(`IMGC0012@${id}`);
          break;
        }
      }
      const there = tree.get(path);
      if (!there) tree.set(path, { kind, ...(written ? { written } : {}) });
      else if (there.kind === 'dir' && kind === 'dir') {
        // mkdir -p: nothing to say.
      } else if (there.written && written) out.push(`${there.written === written ? 'IMGC0007' : 'IMGC0006'}@${id}`);
      else if (there.kind && kind && there.kind !== kind) {
        out.push(`IMGC0012@${id}`);
        tree.set(path, { kind, ...(written ? { written } : {}) });
      }
    }
    // What the step takes away goes, with all below a removed directory (not for a package: dpkg takes its own files only).
    for (const t of takes) {
      const below = op.op === 'rm' ? [...present].filter((p) => p.startsWith(`${t}/`)) : [];
      for (const g of [t, ...below]) {
        present.delete(g);
        goneBy.set(g, id);
      }
    }
    for (const m of makes) {
      present.add(m);
      goneBy.delete(m);
    }
  });
  return out.sort();
};

const phasesArb = fc.array(fc.array(opArb, { minLength: 1, maxLength: 6 }), { minLength: 1, maxLength: 3 });

const run = (phases: Op[][]) => {
  let b = image('model').base(base);
  phases.forEach((ops, i) => {
    b = b.phase(`p${i}`, (p: P) => ops.reduce(apply, p)) as unknown as typeof b;
  });
  const ir = b.toIR();
  const ids = ir.phases.flatMap((p) => p.steps.map((s) => s.id));
  const expected = interpret(phases.flat().map((op, i) => ({ op, id: ids[i]! })));
  const got = checkImage(ir)
    .map((d) => `${d.code}@${d.stepId ?? '-'}`)
    .sort();
  return { expected, got };
};

describe('the checker agrees with a reference interpreter (model-based)', () => {
  it('on random definitions across phases', () => {
    fc.assert(
      fc.property(phasesArb, (phases) => {
        const { expected, got } = run(phases);
        expect(got).toEqual(expected);
      }),
      { seed: 20261203, numRuns: 400 },
    );
  });

  it('the model itself sees the classic cases (so the agreement means something)', () => {
    expect(run([[{ op: 'file', path: '/m/a', content: 'a' }]]).expected).toEqual(['IMGC0001@p0.1.file']);
    expect(run([[{ op: 'dir', path: '/m/a' }], [{ op: 'dir', path: '/m' }]]).expected).toEqual(['IMGC0002@p0.1.directory']);
    expect(run([[{ op: 'dir', path: '/m' }, { op: 'dir', path: '/m/a' }, { op: 'rm', path: '/m' }, { op: 'file', path: '/m/a/b', content: 'a' }]]).expected).toEqual(['IMGC0005@p0.4.file']);
    expect(run([[{ op: 'dir', path: '/m' }, { op: 'file', path: '/m', content: 'a' }]]).expected).toEqual(['IMGC0012@p0.2.file']);
    expect(run([[{ op: 'install', name: 'systemd' }, { op: 'enable' }]]).expected).toEqual(['IMGC0004@p0.2.service']);
    expect(run([[{ op: 'pin', version: '1.6.20~ds1-1' }], [{ op: 'pin', version: '1.6.20~ds1-1+b1' }]]).expected).toEqual(['IMGC0016@p1.1.packages']);
    expect(run([[{ op: 'unit', content: '[Unit]\n' }, { op: 'unit', content: '[Service]\n' }]]).expected).toEqual(['IMGC0006@p0.2.unit']);
    expect(run([[{ op: 'dir', path: '/m' }, { op: 'file', path: '/m/c', content: 'a' }, { op: 'install', name: 'curl' }, { op: 'archive', dest: '/m' }]]).expected).toEqual(['IMGC0006@p0.4.archive']);
    expect(run([[{ op: 'dir', path: '/m' }, { op: 'dir', path: '/m/a' }, { op: 'download', path: '/m/a' }]]).expected).toEqual(['IMGC0001@p0.3.download', 'IMGC0012@p0.3.download']);
  });
});
