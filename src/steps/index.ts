// The registry of step kinds: every kind imgc knows, by name. The IR's Step
// union is composed from their schemas (src/ir/schema.ts); checker, targets,
// runtime and verify look a step's kind up here instead of switching over
// kind names. To add a kind: write src/steps/<kind>.ts (./kind.ts says what
// it holds), list it below, and give the builder a method that calls `make`
// (docs/architecture.md, "Add a step kind").
import type { z } from '../util/zod.js';
import type { StepCommon, StepKind } from './kind.js';
import { user } from './user.js';
import { group } from './group.js';
import { directory } from './directory.js';
import { file } from './file.js';
import { symlink } from './symlink.js';
import { packages } from './packages.js';
import { aptRepository } from './apt-repository.js';
import { service } from './service.js';
import { sysctl } from './sysctl.js';
import { kernelModule } from './kernel-module.js';
import { swapOff } from './swap-off.js';
import { command } from './command.js';
import { clean } from './clean.js';
import { mask } from './mask.js';
import { hold } from './hold.js';
import { artifact } from './artifact.js';
import { cloudImage } from './cloud-image.js';
import { verify } from './verify.js';
import { lineInFile } from './line-in-file.js';
import { iniKey } from './ini-key.js';
import { dataKey } from './data-key.js';
import { blockInFile } from './block-in-file.js';
import { upgrade } from './upgrade.js';
import { hook } from './hook.js';
import { download } from './download.js';
import { archive } from './archive.js';
import { unit } from './unit.js';
import { restart } from './restart.js';
import { ansibleRole } from './ansible-role.js';
import { reboot } from './reboot.js';
import { puppetApply } from './puppet-apply.js';
import { packageList } from './package-list.js';

/** Every kind, in the order of the IR's Step union (hooks after the phase kinds they came with: they are not phase steps). */
export const kinds = { user, group, directory, file, symlink, packages, aptRepository, service, sysctl, kernelModule, swapOff, command, clean, mask, hold, artifact, cloudImage, verify, hook, download, archive, unit, restart, lineInFile, blockInFile, iniKey, dataKey, upgrade, ansibleRole, reboot, puppetApply, packageList } as const;

/** A kind's IR type name (src/ir/types.ts, scripts/gen.mjs): `user` → `UserStep`. */
export type StepTypeName<K extends string> = `${Capitalize<K>}Step`;
export const stepTypeName = <K extends string>(kind: K): StepTypeName<K> => `${kind[0]!.toUpperCase()}${kind.slice(1)}Step` as StepTypeName<K>;

/** The kinds a phase's `steps` may hold: every kind but `hook` (hooks live in a phase's `pre` and `post`). */
export type PhaseKindName = Exclude<keyof typeof kinds, 'hook'>;
type PhaseStepSchema = (typeof kinds)[PhaseKindName]['schema'];

/** The schemas of the kinds a phase's `steps` may hold, in the registry's order. */
export const phaseStepSchemas = Object.values(kinds)
  .filter((k) => k !== hook)
  .map((k) => k.schema) as unknown as readonly [PhaseStepSchema, ...PhaseStepSchema[]];

/** The kind whose steps are a phase's `pre` and `post` hooks, and its schema. */
export const hookKind = hook.kind;
export const hookStepSchema = hook.schema;
/** Whether `s` is a phase's hook (in lists that hold both, as a run's order does). */
export const isHook = <S extends StepCommon>(s: S): s is Extract<S, { kind: typeof hook.kind }> => s.kind === hook.kind;

/** The schemas of every kind, for the IR's Step union: the phase kinds, then the hook kind. */
export const stepSchemas = [...phaseStepSchemas, hookStepSchema] as const;

export type KindName = keyof typeof kinds;
/** The IR shape of the registered kinds' steps. */
export type RegisteredStep = z.infer<(typeof kinds)[KindName]['schema']>;

/** The kinds that have the fields `F` (`{ phaseKind: 'verify' }`): how other parts of imgc pick the steps they do themselves, instead of naming kinds. */
export type KindsWith<F> = { [K in KindName]: (typeof kinds)[K] extends F ? K : never }[KindName];
/** The steps of the kinds that have the fields `F`. */
export type StepWith<F> = Extract<RegisteredStep, { kind: KindsWith<F> }>;

const registered = new Map<string, StepKind>(Object.entries(kinds).map(([name, k]) => [name, k as unknown as StepKind]));

/** Whether step `s` is of a registered kind. */
export const isRegistered = <S extends StepCommon>(s: S): s is Extract<S, RegisteredStep> => registered.has(s.kind);

/** Whether step `s`'s kind has the fields `F` (`isStepWith({ doneBy: 'build', phaseKind: 'artifact' })`). */
export const isStepWith =
  <const F extends Partial<StepKind>>(fields: F) =>
  <S extends StepCommon>(s: S): s is Extract<S, { kind: KindsWith<F> }> => {
    const k = registered.get(s.kind) as Partial<Record<string, unknown>> | undefined;
    return k !== undefined && Object.entries(fields).every(([f, v]) => k[f] === v);
  };

/** The kind of step `s`. */
export const kindOf = <S extends RegisteredStep>(s: S): StepKind<S> => registered.get(s.kind) as unknown as StepKind<S>;

/** The step in a few words, as diagnostics, comments in outputs and `imgc explain` name it: its kind's own description. */
export const describeStep = <S extends RegisteredStep>(s: S): string => kindOf(s).describe(s);

/** Every registered kind, by name. */
export const allKinds = (): ReadonlyMap<string, StepKind> => registered;

/** Outputs whose step comments may be worded their own way by a kind. */
export type CommentTarget = 'cloudInit' | 'packer';

/** The comment above a step in an output: the target's own wording where the kind has one. */
export const commentOf = (s: RegisteredStep, target?: CommentTarget): string => {
  const k = kindOf(s);
  const r: object | undefined = target === 'cloudInit' ? k.cloudInit : undefined;
  const own = target === 'packer' ? k.packer?.comment : r !== undefined && 'comment' in r ? (r as { comment?: (s: RegisteredStep) => string }).comment : undefined;
  return (own ?? k.comment)(s);
};

export { isRefusal, type PackerShell, type Refusal, type StepKind, type StepCommon } from './kind.js';
