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
import { hook, HookAction, ScriptHook, WebhookHook, EventHook } from './hook.js';
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

/**
 * The kinds' schemas under the IR's type names, for src/ir/schema.ts to
 * export one by one (src/ir/types.ts is generated from those exports).
 */
export const stepSchemas = {
  UserStep: user.schema,
  GroupStep: group.schema,
  DirectoryStep: directory.schema,
  FileStep: file.schema,
  SymlinkStep: symlink.schema,
  PackagesStep: packages.schema,
  AptRepositoryStep: aptRepository.schema,
  ServiceStep: service.schema,
  SysctlStep: sysctl.schema,
  KernelModuleStep: kernelModule.schema,
  SwapOffStep: swapOff.schema,
  CommandStep: command.schema,
  CleanStep: clean.schema,
  MaskStep: mask.schema,
  HoldStep: hold.schema,
  ScriptHook,
  WebhookHook,
  EventHook,
  HookAction,
  HookStep: hook.schema,
  ArtifactStep: artifact.schema,
  CloudImageStep: cloudImage.schema,
  VerifyStep: verify.schema,
  DownloadStep: download.schema,
  ArchiveStep: archive.schema,
  UnitStep: unit.schema,
  RestartStep: restart.schema,
  LineInFileStep: lineInFile.schema,
  BlockInFileStep: blockInFile.schema,
  IniKeyStep: iniKey.schema,
  DataKeyStep: dataKey.schema,
  UpgradeStep: upgrade.schema,
  AnsibleRoleStep: ansibleRole.schema,
  RebootStep: reboot.schema,
  PuppetApplyStep: puppetApply.schema,
  PackageListStep: packageList.schema,
} as const;

/** The schemas of the kinds a phase's `steps` may hold: every kind but `hook`, in union order. */
export const phaseStepSchemas = [
  user.schema,
  group.schema,
  directory.schema,
  file.schema,
  symlink.schema,
  packages.schema,
  aptRepository.schema,
  service.schema,
  sysctl.schema,
  kernelModule.schema,
  swapOff.schema,
  command.schema,
  clean.schema,
  mask.schema,
  hold.schema,
  artifact.schema,
  cloudImage.schema,
  verify.schema,
  download.schema,
  archive.schema,
  unit.schema,
  restart.schema,
  lineInFile.schema,
  blockInFile.schema,
  iniKey.schema,
  dataKey.schema,
  upgrade.schema,
  ansibleRole.schema,
  reboot.schema,
  puppetApply.schema,
  packageList.schema,
] as const;

export type KindName = keyof typeof kinds;
/** The IR shape of the registered kinds' steps. */
export type RegisteredStep = z.infer<(typeof kinds)[KindName]['schema']>;

const registered = new Map<string, StepKind>(Object.entries(kinds).map(([name, k]) => [name, k as unknown as StepKind]));

/** Whether step `s` is of a registered kind. */
export const isRegistered = <S extends StepCommon>(s: S): s is Extract<S, RegisteredStep> => registered.has(s.kind);

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
