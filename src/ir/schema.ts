// The Image IR: plain JSON that every other part of imgc reads. The zod schemas
// are the single source of truth; TypeScript types and the exported JSON Schema
// are both derived from them.
import { z } from '../util/zod.js';
import * as core from '../core/facts.js';
import { AbsPath, AccountName, Mode, Name, OneLine, Ownership, PackageName, PackageSpec, UnitName, Word, oneWord, oneWordMessage, stepBase, urlOrReference } from '../core/fields.js';
import { Variable as CoreVariable } from '../core/variables.js';
import { kinds } from '../steps/index.js';

export const IR_VERSION = 1;

export const FactKind = core.FactKind;
export type FactKind = z.infer<typeof FactKind>;
export { factKinds } from '../core/facts.js';

export const Fact = core.Fact;
export type Fact = z.infer<typeof Fact>;

export const SourceLocation = core.SourceLocation;
export type SourceLocation = z.infer<typeof SourceLocation>;

export const UserStep = z
  .object({
    ...stepBase,
    kind: z.literal('user'),
    name: AccountName,
    uid: z.number().int().nonnegative().optional(),
    primaryGroup: AccountName.optional(),
    groups: z.array(AccountName),
    home: AbsPath.optional(),
    shell: z.string().optional(),
    system: z.boolean(),
  })
  .strict();

export const GroupStep = z
  .object({ ...stepBase, kind: z.literal('group'), name: AccountName, gid: z.number().int().nonnegative().optional(), system: z.boolean() })
  .strict();

export const DirectoryStep = z.object({ ...stepBase, kind: z.literal('directory'), path: AbsPath, ...Ownership }).strict();

export const FileStep = z
  .object({ ...stepBase, kind: z.literal('file'), path: AbsPath, content: z.string(), ...Ownership })
  .strict();

export const SymlinkStep = z.object({ ...stepBase, kind: z.literal('symlink'), path: AbsPath, target: z.string().min(1) }).strict();

export const PackagesStep = z
  .object({ ...stepBase, kind: z.literal('packages'), action: z.enum(['install', 'remove']), names: z.array(PackageSpec).min(1) })
  .strict();

export const AptRepositoryStep = z
  .object({
    ...stepBase,
    kind: z.literal('aptRepository'),
    /** The file /etc/apt/sources.list.d/<name>.sources: apt ignores other names (sources.list(5)). */
    name: z.string().regex(/^[A-Za-z0-9_.-]+$/, 'apt source names are letters, digits, "_", "." or "-" (apt ignores other .sources file names)'),
    // The word check first: zod's url() drops tabs and line breaks, as URL parsers do.
    uri: urlOrReference(z.string().regex(oneWord, oneWordMessage).url()),
    /** "/" alone for a flat repository. */
    suites: z.array(Word).min(1),
    components: z.array(Word),
    /** ASCII-armored key text, written to keyPath. */
    key: z.string().optional(),
    /** Or: where to download the ASCII-armored key from at build time. */
    keyUrl: urlOrReference(z.string().url()).optional(),
    keyPath: AbsPath.regex(oneWord, oneWordMessage).optional(),
  })
  .strict();

export const ServiceStep = z
  .object({ ...stepBase, kind: z.literal('service'), name: UnitName, enabled: z.boolean(), package: PackageName.optional() })
  .strict();

export const SysctlStep = z
  .object({
    ...stepBase,
    kind: z.literal('sysctl'),
    key: z.string().regex(/^[A-Za-z0-9_][A-Za-z0-9_./-]*$/, 'sysctl keys look like net.ipv4.ip_forward: letters, digits, "_", ".", "/" or "-"'),
    value: OneLine,
    file: AbsPath,
  })
  .strict();

export const KernelModuleStep = z
  .object({ ...stepBase, kind: z.literal('kernelModule'), name: z.string().regex(/^[A-Za-z0-9_-]+$/, 'kernel module names are letters, digits, "_" or "-"'), file: AbsPath })
  .strict();

export const SwapOffStep = kinds.swapOff.schema;
export const CleanStep = kinds.clean.schema;
export const MaskStep = kinds.mask.schema;
export const HoldStep = kinds.hold.schema;

export const CommandStep = z
  .object({
    ...stepBase,
    kind: z.literal('command'),
    run: z.string().min(1),
    /** A path whose existence means the command already ran (idempotence guard). */
    creates: AbsPath.optional(),
    /** Needs /proc, /sys and /dev mounted when run in a chroot. */
    needsMounts: z.boolean(),
  })
  .strict();

export const ScriptHook = z.object({ type: z.literal('script'), run: z.string().min(1) }).strict();
export const WebhookHook = z
  .object({
    type: z.literal('webhook'),
    url: urlOrReference(z.string().url()),
    timeoutSeconds: z.number().positive(),
    retries: z.number().int().nonnegative(),
    onFailure: z.enum(['fail', 'warn']),
  })
  .strict();
export const EventHook = z.object({ type: z.literal('event'), target: z.union([z.literal('stdout'), AbsPath]) }).strict();
export const HookAction = z.discriminatedUnion('type', [ScriptHook, WebhookHook, EventHook]);
export type HookAction = z.infer<typeof HookAction>;

export const HookStep = z
  .object({ ...stepBase, kind: z.literal('hook'), when: z.enum(['pre', 'post']), action: HookAction })
  .strict();

export const ArtifactStep = z
  .object({
    ...stepBase,
    kind: z.literal('artifact'),
    /** `ext4`: a bare filesystem image; `raw`/`qcow2`: a disk (a bare ext4 filesystem unless `bootable`). */
    format: z.enum(['dir', 'tar', 'ext4', 'raw', 'qcow2']),
    /** File or directory name, relative to the build's output directory. */
    output: z.string().min(1),
    compression: z.enum(['none', 'gzip', 'zstd']).optional(),
    /** Disk size for ext4/raw/qcow2, e.g. "4G". */
    size: z.string().regex(/^\d+[MG]$/).optional(),
    /** raw/qcow2: a GPT disk with an EFI system partition (systemd-boot, the root's kernel) and the root partition. */
    bootable: z.boolean().optional(),
  })
  .strict();

/** A Packer source the artifact phase targets (cloud images, existing hosts). */
export const CloudImageStep = z
  .object({
    ...stepBase,
    kind: z.literal('cloudImage'),
    builder: z.enum(['qemu', 'amazon-ebs', 'null']),
    name: Name,
    settings: z.record(z.string(), z.union([z.string(), z.number(), z.boolean()])),
  })
  .strict();

export const VerifyStep = z
  .object({
    ...stepBase,
    kind: z.literal('verify'),
    check: z.enum(['facts', 'checksums', 'manifest', 'boot']),
    /** boot: the bootable disk artifact to boot (default: the first bootable one). */
    disk: z.string().min(1).optional(),
    /** boot: seconds to wait for the booted node's checks (default 600). */
    timeoutSeconds: z.number().int().positive().optional(),
  })
  .strict();

/** Every kind but `hook`: what a phase's `steps` may hold. */
const phaseStepKinds = [
  UserStep,
  GroupStep,
  DirectoryStep,
  FileStep,
  SymlinkStep,
  PackagesStep,
  AptRepositoryStep,
  ServiceStep,
  SysctlStep,
  KernelModuleStep,
  SwapOffStep,
  CommandStep,
  CleanStep,
  MaskStep,
  HoldStep,
  ArtifactStep,
  CloudImageStep,
  VerifyStep,
] as const;

/** A step of a phase's `steps`; hooks live in the phase's `pre` and `post`. */
export const PhaseStep = z.discriminatedUnion('kind', phaseStepKinds, {
  error: (issue) =>
    issue.code === 'invalid_union' && (issue.input as { kind?: unknown } | undefined)?.kind === 'hook'
      ? 'a hook belongs in its phase\'s pre or post hooks, not among its steps'
      : undefined,
});
export type PhaseStep = z.infer<typeof PhaseStep>;

/** Any step: a phase step or a hook. */
export const Step = z.discriminatedUnion('kind', [...phaseStepKinds, HookStep]);
export type Step = z.infer<typeof Step>;
export type StepKind = Step['kind'];
export type StepOf<K extends StepKind> = Extract<Step, { kind: K }>;

export const Phase = z
  .object({
    name: z.string().regex(/^[a-z][a-z0-9-]*$/, 'phase names are lower-case words joined by "-"'),
    /** May run on existing hosts at runtime (provision, by default). */
    runtime: z.boolean(),
    pre: z.array(HookStep),
    steps: z.array(PhaseStep),
    post: z.array(HookStep),
    loc: SourceLocation.optional(),
  })
  .strict();
export type Phase = z.infer<typeof Phase>;

export const Base = z
  .object({
    name: Name,
    distro: z.enum(['debian', 'ubuntu']),
    release: z.string(),
    suite: z.string(),
    variant: z.enum(['minbase', 'buildd', 'default']),
    packageManager: z.enum(['apt', 'dnf']),
    /** Extra packages laid down with the base (debootstrap --include). */
    include: z.array(PackageName),
    provides: z.array(Fact),
    loc: SourceLocation.optional(),
  })
  .strict();
export type Base = z.infer<typeof Base>;

/** A variable of the definition (src/core/variables.ts). */
export const Variable = CoreVariable;
export type Variable = z.infer<typeof Variable>;

export const Image = z
  .object({
    irVersion: z.literal(IR_VERSION),
    name: z.string().regex(/^[a-z0-9][a-z0-9._-]*$/, 'image names are lower-case, digits, ".", "_" or "-"'),
    /** The definition file, relative to itself (its base name). */
    source: z.string(),
    base: Base,
    phases: z.array(Phase),
    /** The variables the phases reference (omitted when none). */
    variables: z.array(Variable).optional(),
  })
  .strict()
  .superRefine((ir, ctx) => {
    // A .sources file means something only to apt: on another base it is a
    // mistake in the image, whichever target compiles it. (Runs also when
    // other fields failed, so nothing here trusts the shape.)
    if (ir.base?.packageManager === 'apt' || !Array.isArray(ir.phases)) return;
    ir.phases.forEach((p, i) => {
      if (!Array.isArray(p?.steps)) return;
      p.steps.forEach((s, j) => {
        if (s?.kind === 'aptRepository')
          ctx.addIssue({ code: 'custom', path: ['phases', i, 'steps', j, 'kind'], message: `an apt repository cannot be added to a ${ir.base.packageManager} base; use a repository step of its package manager` });
      });
    });
  });
export type Image = z.infer<typeof Image>;
