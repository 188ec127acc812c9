// The Image IR: plain JSON that every other part of imgc reads. The zod schemas
// are the single source of truth; TypeScript types and the exported JSON Schema
// are both derived from them.
import { z } from '../util/zod.js';
import * as core from '../core/facts.js';
import { Name, PackageName } from '../core/fields.js';
import { Variable as CoreVariable } from '../core/variables.js';
import { hookKind, hookStepSchema, isRegistered, kindOf, phaseStepSchemas, stepSchemas } from '../steps/index.js';
import { conditionVariable, type Condition } from '../core/conditions.js';
import { lifecycle } from './lifecycle.js';
import { packageSpecPattern, packageSpecRule } from '../core/packages.js';

/** Why a step may not have this condition, or undefined when it may. */
/** The phases that run on existing hosts only, in the order of the node's life. */
const hostOnlyEdges: readonly string[] = lifecycle.flatMap((e) => (e.where === 'runtime' && e.phase ? [e.phase] : []));

const conditionProblem = (s: { kind: string }, c: Condition, variables: readonly z.infer<typeof CoreVariable>[] | undefined): string | undefined => {
  if (isRegistered(s as never) && !kindOf(s as never).inRoot) return `a condition applies to steps that change the root, not to a ${s.kind} step`;
  const v = variables?.find((x) => x.name === conditionVariable(c));
  if (!v) return undefined; // an undeclared reference is IMGC2001 (src/check/variables.ts)
  if (v.sensitive) return `variable '${v.name}' is sensitive: it cannot decide which steps run`;
  if (typeof c.equals !== v.type) return `variable '${v.name}' is a ${v.type}: the condition compares it with ${JSON.stringify(c.equals)}`;
  return undefined;
};

export const IR_VERSION = 1;

export const FactKind = core.FactKind;
export type FactKind = z.infer<typeof FactKind>;

export const Fact = core.Fact;
export type Fact = z.infer<typeof Fact>;

export const SourceLocation = core.SourceLocation;
export type SourceLocation = z.infer<typeof SourceLocation>;

/** A step of a phase's `steps`; hooks live in the phase's `pre` and `post`. */
export const PhaseStep = z.discriminatedUnion('kind', phaseStepSchemas, {
  error: (issue) =>
    issue.code === 'invalid_union' && (issue.input as { kind?: unknown } | undefined)?.kind === hookKind
      ? 'a hook belongs in its phase\'s pre or post hooks, not among its steps'
      : undefined,
});
export type PhaseStep = z.infer<typeof PhaseStep>;

/** Any step: a phase step or a hook. */
export const Step = z.discriminatedUnion('kind', stepSchemas);
export type Step = z.infer<typeof Step>;
export type StepKind = Step['kind'];
export type StepOf<K extends StepKind> = Extract<Step, { kind: K }>;

export const Phase = z
  .object({
    name: z.string().regex(/^[a-z][a-z0-9-]*$/, 'phase names are lower-case words joined by "-"'),
    /** May run on existing hosts at runtime (provision, by default). */
    runtime: z.boolean(),
    /** Runs on existing hosts only, never in an image build (bootstrap); such phases come last. */
    runtimeOnly: z.literal(true).optional(),
    pre: z.array(hookStepSchema),
    steps: z.array(PhaseStep),
    post: z.array(hookStepSchema),
    loc: SourceLocation.optional(),
  })
  .strict();
export type Phase = z.infer<typeof Phase>;
/** A phase's pre or post hook. */
export type Hook = Phase['pre'][number];

export const Base = z
  .object({
    name: Name,
    distro: z.enum(['debian', 'ubuntu']),
    release: z.string(),
    suite: z.string(),
    variant: z.enum(['minbase', 'buildd', 'default']),
    packageManager: z.enum(['apt', 'dnf']),
    /**
     * The CPU architecture of the root (Debian's name). Absent: amd64. An
     * arm64 base on an amd64 host is laid down with debootstrap's foreign
     * second stage and run through qemu-user-static (docs/arm64.md).
     */
    arch: z.enum(['amd64', 'arm64']).optional(),
    /** Extra packages laid down with the base (debootstrap --include). */
    include: z.array(PackageName),
    provides: z.array(Fact),
    /**
     * What the base says of its facts beyond their keys, by fact id
     * (`path:/etc`, `package:bash`): a path's type, owner, group and mode, a
     * package's version, where its generated data or its contract knows them.
     * Contracts taken after a phase state them for the facts still the base's.
     */
    details: z.record(z.string(), core.FactDetails).optional(),
    /**
     * Where the base's facts come from when it is not a fresh root of a distro:
     * a contract file, or another definition's phase (src/contract/import.ts).
     * Such a base has no root of its own: `imgc build` takes one with
     * --from-tar/--from-dir, or builds the other definition.
     */
    origin: z
      .object({
        kind: z.enum(['contract', 'definition']),
        file: z.string().min(1),
        image: z.string(),
        phase: z.string(),
        /** Which contract exactly: its format version and the digest of its JSON (what a typed module records). */
        version: z.number().int().optional(),
        digest: z.string().optional(),
      })
      .strict()
      .optional(),
    loc: SourceLocation.optional(),
  })
  .strict();
export type Base = z.infer<typeof Base>;

/** A variable of the definition (src/core/variables.ts). */
export const Variable = CoreVariable;
export type Variable = z.infer<typeof Variable>;

/** Ansible's `serial` (hosts per batch: N or P%) and `max_fail_percentage` for the runtime and decommission plays. */
export const Fleet = z
  .object({
    serial: z
      .string()
      .regex(/^([1-9][0-9]*|([1-9][0-9]?|100)%)$/, 'serial is a number of hosts (2) or a percentage of them (25%)')
      .optional(),
    maxFailPercentage: z.number().int().min(0).max(100).optional(),
  })
  .strict();
export type Fleet = z.infer<typeof Fleet>;

/** An image name's longest: a file name (255 bytes) holds it with the longest affix imgc puts around it, and room to spare. */
export const IMAGE_NAME_MAX = 200;

export const Image = z
  .object({
    irVersion: z.literal(IR_VERSION),
    name: z
      .string()
      .regex(/^[a-z0-9][a-z0-9._-]*$/, 'image names are lower-case, digits, ".", "_" or "-"')
      .superRefine((name, ctx) => {
        if (name.length > IMAGE_NAME_MAX)
          ctx.addIssue({ code: 'custom', message: `the image name is ${name.length} bytes long; it becomes part of file names (.imgc-work-NAME-XXXXXX beside --out, NAME.pkr.hcl), so it is at most ${IMAGE_NAME_MAX}`, params: { imgc: 'IMGC2003' } });
      }),
    /** The definition file, relative to itself (its base name). */
    source: z.string(),
    base: Base,
    phases: z.array(Phase),
    /** The variables the phases reference (omitted when none). */
    variables: z.array(Variable).optional(),
    /** How the runtime outputs go through a fleet (src/compilers/ansible/fleet.ts); `imgc compile --serial/--max-fail` override it. */
    fleet: Fleet.optional(),
  })
  .strict()
  .superRefine((ir, ctx) => {
    // A kind may not fit a base's package manager (an apt repository on a dnf
    // base): a mistake in the image, whichever target compiles it. (Runs also
    // when other fields failed, so nothing here trusts the shape.)
    // A list variable stands only as a package list: its items are package
    // specs, which every target also checks again where the value can change.
    (Array.isArray(ir.variables) ? ir.variables : []).forEach((v, i) => {
      if (v?.type !== 'list' || !Array.isArray(v.value)) return;
      v.value.forEach((item, j) => {
        if (!packageSpecPattern.test(item)) ctx.addIssue({ code: 'custom', path: ['variables', i, 'value', j], message: `list variable '${v.name}': ${packageSpecRule}` });
      });
    });
    const family = ir.base?.packageManager;
    if (family === undefined || !Array.isArray(ir.phases)) return;
    ir.phases.forEach((p, i) => {
      if (p?.runtimeOnly && !p.runtime) ctx.addIssue({ code: 'custom', path: ['phases', i, 'runtime'], message: 'a phase that runs on existing hosts only has runtime: true' });
      if (p?.runtimeOnly && ir.phases.slice(i + 1).some((q) => !q?.runtimeOnly))
        ctx.addIssue({ code: 'custom', path: ['phases', i, 'runtimeOnly'], message: 'phases that run on existing hosts only come after every phase of the image' });
      if (p?.runtimeOnly) {
        const edge = hostOnlyEdges.indexOf(p.name);
        if (edge < 0) ctx.addIssue({ code: 'custom', path: ['phases', i, 'name'], message: `a phase that runs on existing hosts only is one of ${hostOnlyEdges.join(', ')}` });
        const later = ir.phases.slice(i + 1).find((q) => q?.runtimeOnly && hostOnlyEdges.indexOf(q.name) >= 0 && hostOnlyEdges.indexOf(q.name) < edge);
        if (later) ctx.addIssue({ code: 'custom', path: ['phases', i, 'name'], message: `phase ${later.name} comes before ${p.name}: the host-only phases run in the order of the node's life (${hostOnlyEdges.join(', ')})` });
      }
      if (!Array.isArray(p?.steps)) return;
      p.steps.forEach((s, j) => {
        const why = s && isRegistered(s) ? kindOf(s).onBase?.(family) : undefined;
        if (why !== undefined) ctx.addIssue({ code: 'custom', path: ['phases', i, 'steps', j, 'kind'], message: why });
        (s?.conditions ?? []).forEach((c, k) => {
          const why = conditionProblem(s, c, ir.variables);
          if (why !== undefined) ctx.addIssue({ code: 'custom', path: ['phases', i, 'steps', j, 'conditions', k], message: why });
        });
      });
      for (const [list, hooks] of [['pre', p.pre], ['post', p.post]] as const)
        (Array.isArray(hooks) ? hooks : []).forEach((h, j) => {
          if (h?.conditions !== undefined) ctx.addIssue({ code: 'custom', path: ['phases', i, list, j, 'conditions'], message: 'a hook runs with its phase: it takes no conditions' });
        });
    });
  });
export type Image = z.infer<typeof Image>;
