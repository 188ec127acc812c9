// A step kind as one unit: everything imgc knows about one kind of step, in
// the kind's own file (src/steps/<kind>.ts), the way an Ansible module keeps
// its documentation, argument spec and code together. The rest of imgc looks
// kinds up in the registry (./index.ts) and never switches over kind names:
//
//   definition (src/dsl builder method → `make`)
//     → IR (`schema`, composed into the Step union by src/ir/schema.ts)
//     → check (`describe` in diagnostics, `paths` for IMGC0012)
//     → targets (`shell`, `ansible`, `cloudInit`, `packer` comments; each a
//       rendering or an explicit `{ refuse }` the frame reports as IMGC2002)
//     → runtime (`runtime`: what decommission undoes, or why not)
//     → verify (`verify.root` on disk, `verify.boot` on a booted node).
//
// Renderings are written only with the target's quoting module and node types
// (src/emit/<target>); layout and drivers are the frames' (src/compilers/<target>),
// and so are the shell helper bodies several kinds call (a kind's own are its
// `shellHelpers`). See docs/architecture.md, "add a step kind".
import type { z } from '../util/zod.js';
import type { Fact, FactDetails, SourceLocation } from '../core/facts.js';
import type { RootFacts } from '../core/root.js';
import type { PackageManager } from '../core/packages.js';
import type { PackageArchive, PackageCatalog } from '../core/catalog.js';
import type { Arch } from '../core/arch.js';
import type { Creation, CreationPathType } from '../core/creations.js';
import type { Emitted, HelperName, ShellHelper, ShellPackageManager } from '../emit/shell/emitted.js';
import type { Task } from '../emit/ansible/tasks.js';
import type { Call, CloudInitPackageManager, Stage } from '../emit/cloud-init/calls.js';
import type { Node } from '../emit/cloud-init/yaml.js';

/** The fields every step has (src/core/fields.ts `stepBase`), whatever its kind. */
export interface StepCommon {
  readonly kind: string;
  readonly id: string;
  readonly loc?: SourceLocation | undefined;
  readonly description?: string | undefined;
  readonly provides: readonly Fact[];
  readonly requires: readonly Fact[];
  readonly removes: readonly Fact[];
}

/**
 * A target that cannot express a kind (or this step of it) says so, with the
 * reason; the frame reports it as IMGC2002 at the step's location. A rendering
 * function may also return a refusal for some steps of its kind.
 */
export interface Refusal {
  readonly refuse: string;
  /** What the user can do instead, for the diagnostic's hint. */
  readonly hint?: string;
}
export const isRefusal = (r: unknown): r is Refusal => typeof r === 'object' && r !== null && typeof (r as Refusal).refuse === 'string';

/** What a target does with a kind: a rendering, or an explicit refusal. */
export type Rendering<F> = F | Refusal;

/**
 * A kind done by another part of imgc than the target's phase scripts (an
 * artifact by `imgc build`, a cloud image by Packer, a hook by the frame's
 * hook runner): the frame lists it in a comment ("not done by Ansible") or
 * runs it itself, instead of rendering it as a step. `elsewhere` says what
 * the step is and who does it, in the target's words.
 */
export interface Elsewhere<S = never> {
  elsewhere(s: S): string;
  /** The comment over it where the target still mentions it, if worded its own way. */
  comment?(s: S): string;
}

/** A file an output carries for a step (`carries`): its path in the output, and its text. */
export interface CarriedFile {
  readonly path: string;
  readonly text: string;
}

export type PathKind = 'directory' | 'file' | 'symlink';

/** A file a step fetches: its URL and sha256 (either may hold variable references). */
export interface Download {
  readonly url: string;
  readonly sha256: string;
}

// ---- per-target contexts: what a frame hands a kind's rendering ----------------

export interface ShellContext {
  readonly pm: ShellPackageManager;
  /** A checks phase (verify): its commands change nothing, so they report `unchanged`. */
  readonly checks: boolean;
  /** Whether a package install follows step `s` in its phase (and so must see a changed repository). */
  installsAfter(s: StepCommon): boolean;
  /** The output runs on a live host (--runtime), not in an image build: services may be started. */
  readonly liveHost?: boolean;
  /** The image build runs on a booted machine whose init runs (Packer's VM), not in a chroot: services may be started. */
  readonly booted?: boolean;
}

export interface AnsibleContext {
  readonly base: { readonly packageManager: 'apt' | 'dnf' };
  /** The next install refreshes the package index (start of a phase, after a repository). */
  refresh: boolean;
  /** Notes for the top of the phase's tasks file, deduplicated. */
  readonly notes: Set<string>;
  /** A checks phase (verify): commands are checks that change nothing. */
  readonly verify?: boolean;
  /** The output runs on a live host (--runtime), not in an image build: services may be started. */
  readonly liveHost?: boolean;
  /** The image build runs on a booted machine whose init runs (Packer's VM), not in a chroot: services may be started. */
  readonly booted?: boolean;
}

export interface CloudInitContext {
  /** The base's package manager, looked up only when a runcmd entry needs it. */
  packageManager(): CloudInitPackageManager;
  /** Whether a group of this name exists when the step runs (base facts and earlier steps). */
  groupExists(name: string): boolean;
}

/** cloud-init: where a step may run and what it becomes there. */
export interface CloudInitRendering<S> {
  /**
   * The cloud-config modules that can express the step, best first
   * (src/compilers/cloud-init/plan.ts places it); runcmd is always possible
   * and implied last. Absent: runcmd only.
   */
  stages?(s: S, opts: { readonly packagesModule: boolean }): readonly Stage[];
  /** Its runcmd (or bootcmd) entries: calls of the frame's helpers. */
  run(s: S, ctx: CloudInitContext): Call[];
  /** Its entries of a module's list, for each stage `stages` offers besides runcmd and bootcmd. */
  entries?(s: S, stage: Exclude<Stage, 'runcmd' | 'bootcmd'>, ctx: CloudInitContext): Node[];
  /** The comment above its entries, where cloud-init's wording differs from `comment`. */
  comment?(s: S): string;
}

/** What verify expects on a built root (src/verify/expectations.ts). */
export interface RootExpectation {
  /** What it is about; a later expectation with the same subject replaces this one. */
  readonly subject: string;
  /** Human wording: "user 'ops'", "file /etc/x". */
  readonly what: string;
  /** Why the expectation does not hold, or undefined when it does. */
  check(r: RootFacts): string | undefined;
}

/** What `verify --boot` checks on the booted node (src/verify/boot.ts). */
export interface BootExpectation {
  readonly subject: string;
  readonly what: string;
  /** A POSIX sh snippet that exits 0 when it holds and prints why when not. */
  readonly script: string;
}

/** What a runtime step may create on a live host, for decommission to undo (src/compilers/runtime.ts). */
export interface RuntimeContext {
  /** Whether the runtime phases (not the base or a build phase) own this fact. */
  mine(f: Fact): boolean;
  /** The creation of a path the step makes, if it is the step's own (token `ID` or `ID#n`). */
  path(p: string, type: CreationPathType, n?: number): Creation[];
  /** `text` with the IR's values in place of its variable references (sensitive ones stay references). */
  resolved(text: string): string;
}

export interface RuntimeEffects {
  /** What the step may create, in the order it creates them. */
  readonly creations: readonly Creation[];
  /** Why (part of) what the step does is not undone by decommission. */
  readonly kept?: string;
}

/**
 * A shell provisioner of Packer's with fixed commands (no user text: the
 * frame writes them as they are), run as root in the VM between parts of a
 * phase's script.
 */
export interface PackerShell {
  /** Its comment in the template. */
  readonly comment: string;
  readonly inline: readonly string[];
  /** The commands end the connection (a reboot): not a failure (`expect_disconnect`). */
  readonly expectDisconnect?: boolean;
  /** Wait this long before starting (`pause_before`, a Packer duration). */
  readonly pauseBefore?: string;
  /** Keep trying to connect (and to clean up after) this long (`start_retry_timeout`). */
  readonly startRetryTimeout?: string;
}

/** Everything about one kind of step. `S` is the kind's IR shape (its schema's output). */
export interface StepKind<S extends StepCommon = StepCommon> {
  readonly kind: S['kind'];
  /** The IR shape: a strict zod object spreading `stepBase` (src/core/fields.ts). */
  readonly schema: z.ZodType<S>;
  /**
   * The schemas `schema` is built from that the IR's types name on their own
   * (a hook's action), in the order written: src/ir/types.ts gets one type
   * each, before the step's (scripts/gen.mjs). Absent: none.
   */
  readonly parts?: Readonly<Record<string, z.ZodType>>;
  /**
   * The step from what the builder's method was given (src/dsl/builder.ts,
   * one line per method): its fields and the facts it provides, requires and
   * removes; a mistake in them is a DefinitionError (src/core/definition-error.ts).
   */
  readonly make: (...args: never) => StepInput<S>;

  /**
   * Why a step of this kind cannot be on a base of this package-manager
   * family (the IR is refused when loaded), or undefined when it can. Absent: any base.
   */
  onBase?(family: PackageManager): string | undefined;

  /** One phrase naming the step in diagnostics and `explain`: "swap off", "user 'ops'". */
  describe(s: S): string;
  /** A few words on what it does, for the comment above it in outputs (shell's as is; others may word it their way). */
  comment(s: S): string;

  /** The paths the step makes, with what each is (IMGC0012 compares them). Absent: none. */
  paths?(s: S): [string, PathKind][];
  /**
   * The files the step changes a part of (a line, a block, a key) and leaves
   * the rest as it finds it; every other path it makes or declares it writes
   * whole. A whole writer after an edit drops the edit (IMGC0006); an edit
   * after a whole file is IMGC0015. Absent: none.
   */
  edits?(s: S): readonly string[];
  /**
   * It writes its path whole: `content` (a file: an edit of the path after it
   * never settles, IMGC0015) or `link` (a symlink); two writers of one path
   * are IMGC0006/IMGC0007. Absent: it makes or edits paths, not their content.
   */
  readonly writes?: 'content' | 'link';
  /** The owner and group it gives what it makes: a missing one is IMGC0003 (ownership) rather than IMGC0001. Absent: none. */
  owners?(s: S): { readonly owner?: string | undefined; readonly group?: string | undefined };
  /** It acts on a unit a package ships: that package if the step names it. A missing service is then IMGC0004. Absent: no such unit. */
  unitPackage?(s: S): string | undefined;
  /** What only one step may create while it is there, as `kind:key` (a user, an installed package, an artifact's output): IMGC0008/0009/0010. Absent: none. */
  creates?(s: S, family: PackageManager): string[];
  /** The paths it removes are only those it lists (a package's own files: dpkg leaves what others wrote below them). Absent: a removed path goes with everything below it. */
  readonly removesListedOnly?: true;
  /** What a contract says about fact `f` it provides beyond its key (a path's owner, group, mode; a package's pinned version). Absent: nothing. */
  factDetails?(s: S, f: Fact): FactDetails;
  /** What it says about facts an earlier step provides (a service's enablement): the contract states it while the fact stays that step's. Absent: nothing. */
  setsDetails?(s: S): readonly { readonly fact: Fact; readonly details: FactDetails }[];
  /** Its `variables` fields take list variables (a package list), and nothing else; other kinds take text. */
  readonly takesLists?: true;
  /** It installs packages with the package manager: a source added before it must refresh the index first. Absent: never. */
  installs?(s: S): boolean;
  /** It adds a package source (the package index is refreshed for the installs after it). */
  readonly addsSource?: true;
  /** It moves installed packages to other versions (an upgrade): the base's versions no longer hold after it. */
  readonly movesVersions?: true;
  /** It runs, and reports changed, on every run (a raw command without `creates`). Absent: never. */
  alwaysChanges?(s: S): boolean;
  /**
   * What the step touches beyond its declared facts, so targets that reorder
   * steps (cloud-init) keep it after what it depends on even in hand-made IR:
   * facts it needs, facts it changes, whether it writes files. Absent: its
   * declared facts only, no files.
   */
  touches?(s: S): {
    readonly needs?: readonly Fact[];
    readonly changes?: readonly Fact[];
    readonly writesFiles?: boolean;
    /** It runs the package manager (dpkg may overwrite files; apt reads sources and configuration). */
    readonly packageManager?: boolean;
  };

  /** What it does is opaque (a raw command, a hook): targets that reorder steps move nothing across it. */
  readonly opaque?: boolean;

  /** Whether shell and ansible carry it out inside the root (a phase script's step). */
  readonly inRoot: boolean;
  /**
   * It needs a running machine of the image's own (a running init, a kernel
   * to reboot): a chroot build refuses it, so an output that holds it carries
   * no chroot driver (Packer's embedded shell/build.sh). Absent: a chroot does.
   */
  readonly needsMachine?: boolean;
  /** A phase holding a step of this kind makes artifacts from the root or checks it, rather than changing it (src/ir/phases.ts). */
  readonly phaseKind?: 'artifact' | 'verify';
  /**
   * Who does the step when no target's phase script does: `build`, imgc build
   * from the finished root (an artifact: src/build/artifacts.ts; a check:
   * src/build/stages.ts); `packer`, the packer target as a source of its
   * template (src/compilers/packer/sources.ts). Those parts select their steps
   * by this field (`isStepWith` in ./index.ts), never by kind name. Absent: the phase scripts.
   */
  readonly doneBy?: 'build' | 'packer';
  /** What running it in a chroot needs: /proc, /sys and /dev mounted; the network (a resolver). Absent: neither. */
  readonly chroot?: { mounts?(s: S): boolean; network?(s: S): boolean };
  /**
   * Files the step fetches by URL, each with its required sha256: a chroot
   * build fetches them on the build machine into its cache (src/build/downloads.ts)
   * and hands them to the phase script, so nothing inside the root needs the
   * network for them. Absent: none.
   */
  downloads?(s: S): readonly Download[];
  /**
   * The shell target's image build runs the step on the build machine rather
   * than inside the root: between parts of the phase's script, build.sh (and
   * `imgc build --target shell`) applies its `ansible` rendering, in a play of
   * its own, to the root with ansible-playbook's chroot connection (an
   * Ansible role). Its `shell` rendering then serves only the outputs with no
   * build machine (provision.sh). Absent: the step runs inside the root.
   */
  readonly fromBuildMachine?: 'ansible-playbook';
  /**
   * Content the outputs that run the step carry beside their own files (an
   * Ansible role's copy, `roles/<name>/…`), each path relative to the output's
   * directory: the outputs stay self-contained. Absent: none.
   */
  carries?(s: S): readonly CarriedFile[];
  /**
   * The fields (dotted paths from the step; `*` any key, `[*]` any item) that may hold
   * variable references: values a target reads as text. Anywhere else a
   * reference is IMGC0011 (src/check/variables.ts). Absent: none.
   */
  readonly variables?: readonly string[];
  /** Whether the references in `value` (of a field `variables` names) stand where the kind takes them. Absent: anywhere in the field. */
  variablesIn?(value: string): boolean;

  /**
   * The shell functions only this kind's renderings call (shell lines and
   * runcmd calls), by name: kept here so that a kind is changed in its own
   * file, and collected by the shell and cloud-init frames, which define in a
   * script just the helpers it calls and what those call. Helpers several
   * kinds call are the shell frame's (src/compilers/shell/helpers.ts), a
   * package manager's are its record's (./package-managers.ts). Absent: none.
   */
  readonly shellHelpers?: Readonly<Record<HelperName, ShellHelper>>;
  readonly shell: Rendering<(s: S, ctx: ShellContext) => Emitted | Refusal> | Elsewhere<S>;
  readonly ansible: Rendering<(s: S, ctx: AnsibleContext) => Task[] | Refusal> | Elsewhere<S>;
  readonly cloudInit: Rendering<CloudInitRendering<S>> | Elsewhere<S>;
  /**
   * Packer runs the shell or ansible rendering; `comment` is its template's
   * wording. `provisioners`: a step Packer itself carries out between parts
   * of its phase's script (a reboot), as shell provisioners of their own.
   */
  readonly packer?: { comment(s: S): string; provisioners?(s: S): readonly PackerShell[] };

  /** Its runtime inverse: what decommission undoes on a live host, or why it cannot. */
  runtime(s: S, ctx: RuntimeContext): RuntimeEffects;

  readonly verify: {
    /** On the built root, beyond the plain checks of the facts it provides. */
    root?(s: S): RootExpectation[];
    /** On the booted node. */
    boot?(s: S): BootExpectation[];
  };
}

/** What a kind's `make` may need besides its arguments: the base's catalog and family, reading the definition's files. */
export interface MakeContext {
  readonly catalog: PackageCatalog;
  /** Every package of the base's archive, when the base has one (src/core/catalog.ts). */
  readonly archive?: PackageArchive;
  /** How the base's package manager spells a pinned package. */
  readonly family: PackageManager;
  /** The base's architecture. */
  readonly arch: Arch;
  /** A text file relative to the calling file; throws a message for the step to prefix (src/dsl/tree.ts). */
  readTextFile(file: string): { path: string; text: string };
  /** The text files under a directory relative to the calling file; throws as `readTextFile`. */
  readTextTree(dir: string): { root: string; files: { path: string; text: string }[] };
}

/**
 * What a kind's `make` returns for the builder (src/dsl/builder.ts): the step
 * without the id and location the builder gives it, facts defaulting to none.
 * A kind file exports `{ …StepKind fields, make } satisfies StepKind<S>`.
 */
export type StepInput<S extends StepCommon> = Omit<S, 'id' | 'loc' | 'provides' | 'requires' | 'removes'> & {
  provides?: Fact[];
  requires?: Fact[];
  removes?: Fact[];
};
