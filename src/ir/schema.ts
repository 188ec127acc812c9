// The Image IR: plain JSON that every other part of imgc reads. The zod schemas
// are the single source of truth; TypeScript types and the exported JSON Schema
// are both derived from them.
import { z } from '../util/zod.js';

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

// What a valid image may hold, whatever the target: each value below ends up
// as a word of a command line, a line of a file or a file name, so a value
// outside these shapes is refused when the definition is loaded (IMGC1004),
// not by each backend.

/** useradd/groupadd's default NAME_REGEX on Debian, and its 32-character limit. */
const AccountName = z
  .string()
  .max(32, 'user and group names are at most 32 characters')
  .regex(/^[a-z_][a-z0-9_-]*\$?$/, 'user and group names are lower-case letters, digits, "_" or "-", start with a letter or "_" and may end in "$"');
/** A package name of apt or dnf. */
const PackageName = z.string().regex(/^[A-Za-z0-9][A-Za-z0-9+._-]*$/, 'package names are letters, digits, "+", ".", "_" or "-", starting with a letter or digit');
/**
 * A package name, optionally qualified by architecture and pinned to a
 * version: apt's `name[:arch][=version]`, the version possibly ending in `*`
 * (see ./packages.ts).
 */
const PackageSpec = z
  .string()
  .regex(
    /^[A-Za-z0-9][A-Za-z0-9+._-]*(:[a-z0-9-]+)?(=[A-Za-z0-9+.:~_-]+\*?)?$/,
    'package names are letters, digits, "+", ".", "_" or "-", starting with a letter or digit, optionally followed by ":arch" and "=version"',
  );
/** A systemd unit name (a bare name means a .service). */
const UnitName = z.string().regex(/^[A-Za-z0-9@._:\\-]+$/, 'service names are systemd unit names: letters, digits, "@", ".", "_", ":", "-" or "\\"');
/** One line of a file: no line break. */
const OneLine = z.string().regex(/^[^\r\n]*$/, 'the value is written as one line of a file: no line breaks');
/** One field word of a deb822 .sources file. */
const oneWord = /^\S+$/;
const oneWordMessage = 'a deb822 field value is one word: no white space or line breaks';
const Word = z.string().regex(oneWord, oneWordMessage);

/**
 * A URL, or a string that references variables (U+E000 "var:NAME" U+E001,
 * see ./variables.ts) and becomes a URL when the output runs: `${mirror}/debian`
 * is no URL until `mirror` has its value. Two branches, so a consumer checking
 * `format: uri` (ajv-formats) accepts the references and still checks the rest.
 */
const urlOrReference = (url: z.ZodString) =>
  z.union([url, z.string().regex(/^[^\s]*$/, oneWordMessage).regex(/\uE000var:[a-z][a-z0-9_]*\uE001/, 'not a URL').describe('a URL with variable references, resolved when the output runs')], {
    // The URL branch's own message: a reference-free string is meant as a URL.
    error: (issue) => (issue.code === 'invalid_union' ? issue.errors[0]?.[0]?.message : undefined),
  });

const stepBase = {
  /** `<phase>.<n>.<kind>`: one word, it names the step in progress lines and logs. */
  id: z.string().regex(/^[A-Za-z0-9._-]+$/, 'step ids are one word of letters, digits, ".", "_" or "-"'),
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

const Ownership = { owner: AccountName.optional(), group: AccountName.optional(), mode: Mode.optional() };

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
    /**
     * Where the base's facts come from when it is not a fresh root of a distro:
     * a contract file, or another definition's phase (src/contract/import.ts).
     * Such a base has no root of its own: `imgc build` takes one with
     * --from-tar/--from-dir, or builds the other definition.
     */
    origin: z
      .object({ kind: z.enum(['contract', 'definition']), file: z.string().min(1), image: z.string(), phase: z.string() })
      .strict()
      .optional(),
    loc: SourceLocation.optional(),
  })
  .strict();
export type Base = z.infer<typeof Base>;

/**
 * A variable of the definition. Strings reference it by marker (see
 * ./variables.ts); `value` is its resolved value, absent when sensitive: the IR
 * never holds a secret.
 */
export const Variable = z
  .object({
    name: z.string().regex(/^[a-z][a-z0-9_]*$/, 'variable names are lower-case letters, digits and "_", starting with a letter'),
    type: z.enum(['string', 'number', 'boolean']),
    description: z.string().optional(),
    sensitive: z.boolean(),
    value: z.union([z.string(), z.number(), z.boolean()]).optional(),
  })
  .strict()
  .refine((v) => !(v.sensitive && v.value !== undefined), { message: 'a sensitive variable has no value in the IR', path: ['value'] });
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
