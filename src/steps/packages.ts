// packages: installs or removes packages with the base's package manager
// (apt now). Names may pin versions (`name[:arch][=version]`, src/core/packages.ts).
import { z } from '../util/zod.js';
import { PackageSpec, stepBase } from '../core/fields.js';
import { packageName, parsePackageSpec } from '../core/packages.js';
import { displayMarkers, hasMarker } from '../core/variables.js';
import { task } from '../emit/ansible/tasks.js';
import { labelText, stepTaskName } from '../emit/ansible/names.js';
import { ansibleMissing, ansiblePackageFacts, packageManagers } from './package-managers.js';
import { template } from '../emit/ansible/quote.js';
import { str } from '../emit/cloud-init/quote.js';
import type { StepKind, MakeContext, StepInput } from './kind.js';
import { fact } from '../core/facts.js';
import { knownPackage, packageFacts, packageRepo } from '../core/catalog.js';
import { didYouMean } from '../core/suggest.js';
import { declared, packageExpectation, type DeclaredFacts } from './shared.js';

/**
 * A package pinned to a version that references variables (`kubelet=${v}`):
 * the name stays a literal, so the package is still a fact the checker and
 * the types know; the version is resolved when the output runs.
 */
const PinFromVariable = z
  .string()
  .regex(
    /^[A-Za-z0-9][A-Za-z0-9+._-]*(:[a-z0-9-]+)?=(?:[A-Za-z0-9+.:~_-]|\uE000var:[a-z][a-z0-9_]*\uE001)*\uE000var:[a-z][a-z0-9_]*\uE001(?:[A-Za-z0-9+.:~_-]|\uE000var:[a-z][a-z0-9_]*\uE001)*\*?$/,
    'a variable may stand only in the version of a package spec (name=${version}); the name is a literal',
  );
const Spec = z.union([PackageSpec, PinFromVariable], {
  // The literal spec's message, unless the spec references a variable.
  error: (issue) => (issue.code === 'invalid_union' ? (/\uE000/.test(String(issue.input)) ? issue.errors[1]?.[0]?.message : issue.errors[0]?.[0]?.message) : undefined),
});

/** A name the base's archive does not have (the checker's IMGC0017), with the closest one it has. */
const Unknown = z.object({ name: z.string(), didYouMean: z.string().optional() }).strict();

const schema = z
  .object({
    ...stepBase,
    kind: z.literal('packages'),
    action: z.enum(['install', 'remove']),
    names: z.array(Spec).min(1),
    /** Names of an install the base's archive (`archive`, as it describes itself) does not have. */
    unknown: z.array(Unknown).min(1).optional(),
    archive: z.string().optional(),
  })
  .strict();
type PackagesStep = z.infer<typeof schema>;

export const packages = {
  kind: 'packages',
  schema,
  /** An install provides what the catalog (or `opts`) says the packages bring, a removal removes it. */
  make: ({ catalog, archive, family }: MakeContext, action: 'install' | 'remove', names: readonly string[], opts: Pick<DeclaredFacts, 'provides'> = {}): StepInput<PackagesStep> => {
    const brought = names.flatMap((n) => packageFacts(catalog, n, family, archive));
    if (action === 'remove') return { kind: 'packages', action, names: [...names], removes: brought };
    const requires = names.flatMap((n) => {
      const repo = packageRepo(catalog, n, family);
      return repo ? [fact('repo', repo)] : [];
    });
    // A name with a variable in it is not known until the output runs; a declared `provides` says the user knows what it brings.
    const unknown = archive && !opts.provides ? names.filter((n) => !hasMarker(packageName(n, family)) && !knownPackage(catalog, n, family, archive)) : [];
    const known = unknown.length ? archive!.names() : [];
    const unknownField = unknown.length
      ? {
          unknown: unknown.map((n) => {
            const name = packageName(n, family);
            const close = didYouMean(name, known);
            return { name, ...(close ? { didYouMean: close } : {}) };
          }),
          archive: archive!.describe,
        }
      : {};
    return { kind: 'packages', action, names: [...names], provides: [...brought, ...declared(opts.provides)], requires, ...unknownField };
  },
  describe: (s) => `${s.action === 'install' ? 'install' : 'remove'} of ${s.names.map((n) => `'${n}'`).join(', ')}`,
  comment: (s) => `${s.action} ${s.names.join(' ')}`,
  touches: (s) => ({ changes: s.names.map((n) => ({ kind: 'package' as const, key: n.split('=')[0]! })), packageManager: true }),
  inRoot: true,
  creates: (s, family) => (s.action === 'install' ? s.names.map((n) => `package:${packageName(n, family)}`) : []),
  removesListedOnly: true,
  installs: (s) => s.action === 'install',
  factDetails: (s, f) => {
    const pinned = f.kind === 'package' ? s.names.map((n) => parsePackageSpec(n)).find((p) => p.name === f.key && p.version) : undefined;
    return pinned?.version ? { version: pinned.version } : {};
  },
  chroot: { mounts: () => true, network: () => true },
  variables: ['names[*]'],
  // Only in the version: the name is a fact key (a reference there is IMGC0011).
  variablesIn: (spec) => {
    const eq = spec.indexOf('=');
    return eq > 0 && !hasMarker(spec.slice(0, eq));
  },

  shell: (s, ctx) => (s.action === 'install' ? ctx.pm.install(s.names) : ctx.pm.remove(s.names)),
  ansible: (s, ctx) => {
    const pm = packageManagers[ctx.base.packageManager].ansible;
    const list = labelText(displayMarkers(s.names.join(', ')));
    if (s.action === 'remove') return [task({ name: stepTaskName(`Remove ${list}`, s), module: pm.module, args: pm.remove(s.names) })];
    // ctx.refresh stays: this refresh runs only when something is missing, so it leaves the lists no fresher
    // for a later packageList, which cannot ask.
    return [
      task({ name: stepTaskName(`Which of ${list} are installed`, s), ...ansiblePackageFacts }),
      task({
        name: stepTaskName(`Install ${list}`, s),
        module: pm.module,
        comments: [pm.refreshNote],
        args: pm.install(s.names, template(ansibleMissing(s.names, ctx.base.packageManager))),
      }),
    ];
  },
  cloudInit: {
    stages: (s, opts) => (s.action === 'install' && opts.packagesModule ? ['packages'] : []),
    run: (s, ctx) => {
      const pm = ctx.packageManager();
      return [s.action === 'install' ? pm.install(s.names) : pm.remove(s.names)];
    },
    entries: (s) => s.names.map(str),
  },

  runtime: (s, { mine }) => {
    if (s.action === 'remove') return { creations: [], kept: 'a removal is not undone (decommission never installs)' };
    return {
      creations: s.names
        .map((n, i) => ({ n: packageName(n), i }))
        .filter(({ n }) => mine({ kind: 'package', key: n }))
        .map(({ n, i }) => ({ token: `${s.id}#${i}`, kind: 'package' as const, name: n })),
    };
  },

  verify: {
    root: (s) => s.names.map((spec) => packageExpectation(packageName(spec), s.action === 'install')),
  },
} as const satisfies StepKind<PackagesStep>;
