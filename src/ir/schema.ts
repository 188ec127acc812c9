// The Image IR: plain JSON that every other part of imgc reads. The zod schemas
// are the single source of truth; TypeScript types and the exported JSON Schema
// are both derived from them.
import { z } from 'zod';

export const IR_VERSION = 1;

export const factKinds = [
  'user',
  'group',
  'path',
  'package',
  'service',
  'kernelModule',
  'sysctl',
  'command',
  'repo',
  'artifact',
] as const;
export const FactKind = z.enum(factKinds);
export type FactKind = z.infer<typeof FactKind>;

export const Fact = z.object({ kind: FactKind, key: z.string().min(1) }).strict();
export type Fact = z.infer<typeof Fact>;

export const SourceLocation = z
  .object({
    /** Path relative to the definition file's directory, POSIX separators. */
    file: z.string(),
    line: z.number().int().positive(),
    column: z.number().int().positive(),
  })
  .strict();
export type SourceLocation = z.infer<typeof SourceLocation>;

const Mode = z.string().regex(/^0?[0-7]{3,4}$/, 'mode is an octal string such as "0644"');
const AbsPath = z.string().regex(/^\//, 'paths are absolute');
const Name = z.string().min(1);

const stepBase = {
  id: z.string(),
  loc: SourceLocation.optional(),
  description: z.string().optional(),
  provides: z.array(Fact),
  requires: z.array(Fact),
  removes: z.array(Fact),
};

export const UserStep = z
  .object({
    ...stepBase,
    kind: z.literal('user'),
    name: Name,
    uid: z.number().int().nonnegative().optional(),
    primaryGroup: Name.optional(),
    groups: z.array(Name),
    home: AbsPath.optional(),
    shell: z.string().optional(),
    system: z.boolean(),
  })
  .strict();

export const GroupStep = z
  .object({ ...stepBase, kind: z.literal('group'), name: Name, gid: z.number().int().nonnegative().optional(), system: z.boolean() })
  .strict();

const Ownership = { owner: Name.optional(), group: Name.optional(), mode: Mode.optional() };

export const DirectoryStep = z.object({ ...stepBase, kind: z.literal('directory'), path: AbsPath, ...Ownership }).strict();

export const FileStep = z
  .object({ ...stepBase, kind: z.literal('file'), path: AbsPath, content: z.string(), ...Ownership })
  .strict();

export const SymlinkStep = z.object({ ...stepBase, kind: z.literal('symlink'), path: AbsPath, target: z.string().min(1) }).strict();

export const PackagesStep = z
  .object({ ...stepBase, kind: z.literal('packages'), action: z.enum(['install', 'remove']), names: z.array(Name).min(1) })
  .strict();

export const AptRepositoryStep = z
  .object({
    ...stepBase,
    kind: z.literal('aptRepository'),
    name: Name,
    uri: z.string().url(),
    suites: z.array(Name).min(1),
    components: z.array(Name),
    /** ASCII-armored key text, written to keyPath. */
    key: z.string().optional(),
    /** Or: where to download the ASCII-armored key from at build time. */
    keyUrl: z.string().url().optional(),
    keyPath: AbsPath.optional(),
  })
  .strict();

export const ServiceStep = z
  .object({ ...stepBase, kind: z.literal('service'), name: Name, enabled: z.boolean(), package: Name.optional() })
  .strict();

export const SysctlStep = z
  .object({ ...stepBase, kind: z.literal('sysctl'), key: Name, value: z.string(), file: AbsPath })
  .strict();

export const KernelModuleStep = z
  .object({ ...stepBase, kind: z.literal('kernelModule'), name: Name, file: AbsPath })
  .strict();

export const SwapOffStep = z.object({ ...stepBase, kind: z.literal('swapOff') }).strict();

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
    url: z.string().url(),
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
    format: z.enum(['dir', 'tar', 'raw', 'qcow2']),
    /** File or directory name, relative to the build's output directory. */
    output: z.string().min(1),
    compression: z.enum(['none', 'gzip', 'zstd']).optional(),
    /** Disk size for raw/qcow2, e.g. "4G". */
    size: z.string().regex(/^\d+[MG]$/).optional(),
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
    check: z.enum(['facts', 'checksums', 'manifest']),
  })
  .strict();

export const Step = z.discriminatedUnion('kind', [
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
  HookStep,
  ArtifactStep,
  CloudImageStep,
  VerifyStep,
]);
export type Step = z.infer<typeof Step>;
export type StepKind = Step['kind'];
export type StepOf<K extends StepKind> = Extract<Step, { kind: K }>;

export const Phase = z
  .object({
    name: z.string().regex(/^[a-z][a-z0-9-]*$/, 'phase names are lower-case words joined by "-"'),
    /** May run on existing hosts at runtime (provision, by default). */
    runtime: z.boolean(),
    pre: z.array(HookStep),
    steps: z.array(Step),
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
    include: z.array(Name),
    provides: z.array(Fact),
    loc: SourceLocation.optional(),
  })
  .strict();
export type Base = z.infer<typeof Base>;

export const Image = z
  .object({
    irVersion: z.literal(IR_VERSION),
    name: z.string().regex(/^[a-z0-9][a-z0-9._-]*$/, 'image names are lower-case, digits, ".", "_" or "-"'),
    /** The definition file, relative to itself (its base name). */
    source: z.string(),
    base: Base,
    phases: z.array(Phase),
  })
  .strict();
export type Image = z.infer<typeof Image>;
