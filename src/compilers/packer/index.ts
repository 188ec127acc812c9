// The packer backend: one HCL2 template (`<image>.pkr.hcl`, and `.pkr.json`
// with --json) whose sources are the artifact phase's Packer sources and
// whose build runs every phase, in order, as provisioners. The phases
// themselves are the shell backend's scripts (or the Ansible backend's
// playbook), embedded unchanged under shell/ (ansible/) and referenced from
// the template through ${path.root}.
import { HELPERS_FILE } from '../shell/phase.js';
import { diagnostic, type Diagnostic } from '../../check/diagnostic.js';
import type { Hook, Image, Phase, PhaseStep, Step } from '../../ir/schema.js';
import { ansibleCompiler } from '../ansible/index.js';
import { assertCompilable } from '../representable.js';
import { shellCompiler } from '../shell/index.js';
import { summary } from '../summary.js';
import { describeStep, isStepWith, kindOf, type PackerShell } from '../../steps/index.js';
import { packageManagers } from '../../steps/package-managers.js';
import { CompileError, type CompiledFiles, type CompileOptions, type Compiler } from '../types.js';
import { attr, blank, block, bool, comment, list, map, str, tmpl, writeHcl, writeJson, type Item, type Value } from './hcl.js';
import { hclUnrepresentable, isHclIdentifier } from './quote.js';
import { baseTitle, seedsWayIn, sourcesFor, type SourceSpec, type VariableSpec } from './sources.js';
import { BUILD_DIR, BUILD_USER, logSettling, metaData, SEED_DIR, seedCleanup, userData, WAY_IN_PACKAGES } from './way-in.js';
import { irVariables, LOCAL_EXECUTE, withVariables } from './variables.js';
import { imageView, isBuildArtifact, isDoneByBuild, isPackerSource, type PackerSource } from '../../ir/phases.js';
import { cut } from '../parts.js';

type Provisioner = 'shell' | 'ansible';

// Packer's own template syntax: {{ .Path }} is the uploaded script's path,
// filled in by Packer when it runs the command. Fixed text, no user strings.
const EXECUTE_AS_ROOT = `if [ $(id -u) -eq 0 ]; then sh '{{ .Path }}'; else sudo sh '{{ .Path }}'; fi`;

// Packer 1.6.6's ansible proxy offers only an ssh-rsa host key, which
// Debian 12's OpenSSH refuses by default; Debian's sftp-server is not where
// the provisioner looks for it by default.
const ANSIBLE_ENV = ['ANSIBLE_HOST_KEY_CHECKING=False', 'ANSIBLE_SSH_ARGS=-o HostKeyAlgorithms=+ssh-rsa -o PubkeyAcceptedKeyTypes=+ssh-rsa'];
const SFTP_COMMAND = '/usr/lib/openssh/sftp-server -e';

// Packer's own inventory line (its template syntax) plus become for the target
// only: the plays do not become, and hooks delegated to localhost must not
// (--become would run them with sudo on the machine running packer). The
// remote temp dir is a path, never ~/.ansible/tmp: after a hook delegated to
// localhost, Ansible 2.14 expanded ~ as there (/root) and made it on the VM as
// the build user, which failed (seen in the VM test). The runtime plays use
// /tmp too; each task makes its own directory in it. Files go through the SSH
// session itself (dd at both ends): through Packer's proxy, sftp and the scp
// of OpenSSH 9 (Debian 12's, which speaks sftp) failed to transfer any file.
const INVENTORY =
  '{{ .HostAlias }} ansible_host={{ .Host }} ansible_user={{ .User }} ansible_port={{ .Port }} ansible_become=true ansible_remote_tmp=/tmp ansible_ssh_transfer_method=piped\n';


const at = (s: { id: string; loc?: { file: string; line: number } | undefined }): string => (s.loc ? `${s.id} (${s.loc.file}:${s.loc.line})` : s.id);

const stepLine = (s: Step): string => `  ${at(s)}: ${summary(s, 'packer')}`;

/** Why a Packer source cannot boot the disk it names, or undefined when it can. */
const diskProblem = (step: PackerSource, phaseSteps: readonly Step[]): string | undefined => {
  if (step.builder !== 'qemu') return `only the qemu builder boots a disk imgc built (this step's builder is ${step.builder})`;
  const disk = phaseSteps.filter(isBuildArtifact).find((s) => s.output === step.disk);
  if (!disk) return `no artifact of this phase writes '${step.disk}'`;
  if ((disk.format !== 'raw' && disk.format !== 'qcow2') || !disk.bootable) return `'${step.disk}' (${disk.id}) is not a bootable disk: it is ${disk.format === 'raw' || disk.format === 'qcow2' ? `a ${disk.format} without bootable: true` : `a ${disk.format}`}`;
  return undefined;
};

/** What imgc's seed needs on a disk the definition builds itself (way-in.ts), unless the step brings its own way in: the packages no step provides. */
const wayInMissing = (ir: Image, step: PackerSource): string[] => {
  if (step.settings['cd_files'] !== undefined || step.settings['ssh_username'] !== undefined) return [];
  const installed = new Set(ir.phases.flatMap((p) => p.steps.flatMap((s) => s.provides.filter((f) => f.kind === 'package').map((f) => f.key))));
  return WAY_IN_PACKAGES.filter((p) => !installed.has(p));
};

/** Strings the template carries must survive HCL exactly; the rest is the other backends' business. */
const templateDiagnostics = (ir: Image, legacy: boolean): Diagnostic[] => {
  const out: Diagnostic[] = [];
  for (const phase of ir.phases) {
    for (const step of phase.steps) {
      if (!isPackerSource(step)) continue;
      if (step.disk !== undefined) {
        const problem = diskProblem(step, phase.steps);
        if (problem) out.push(diagnostic('IMGC2002', `${step.id}.disk: ${problem}`, { loc: step.loc, stepId: step.id, hint: "give the output of a raw or qcow2 artifact made with { bootable: true } in the artifact phase, e.g. a.qcow2('disk.qcow2', { bootable: true })" }));
        const missing = wayInMissing(ir, step);
        if (!problem && missing.length)
          out.push(
            diagnostic('IMGC2002', `${step.id}.disk: Packer gets into '${step.disk}' through a NoCloud seed, which needs ${missing.map((m) => `package '${m}'`).join(' and ')} on the disk, and no step installs ${missing.length > 1 ? 'them' : 'it'}`, {
              loc: step.loc,
              stepId: step.id,
              hint: "use(cloudInit()) from the stdlib and packages(['openssh-server']) in a phase before the artifact, or give cd_files and ssh_username of your own in the step's settings",
            }),
          );
      }
      for (const [key, value] of Object.entries(step.settings)) {
        if (legacy && newerThan16[step.builder]?.includes(key)) {
          out.push(
            diagnostic('IMGC2002', `${step.id}.settings: packer 1.6.6's ${step.builder} builder has no '${key}' (the ${step.builder} plugin of Packer 1.10 and later has)`, {
              loc: step.loc,
              stepId: step.id,
              hint: 'compile without --packer-version 1.6 (for Packer 1.10 or later), or drop the setting',
            }),
          );
        }
        if (!isHclIdentifier(key)) {
          out.push(
            diagnostic('IMGC2002', `${step.id}.settings: '${key}' is not an HCL attribute name, so Packer cannot be given it`, {
              loc: step.loc,
              stepId: step.id,
              hint: 'use the builder\'s own option name (letters, digits, "_" and "-")',
            }),
          );
        }
        const reason = typeof value === 'string' ? hclUnrepresentable(value) : typeof value === 'number' && !Number.isFinite(value) ? 'a number HCL has no literal for' : undefined;
        if (reason) {
          out.push(diagnostic('IMGC2002', `${step.id}.settings.${key} contains ${reason}`, { loc: step.loc, stepId: step.id, hint: 'write the value without it' }));
        }
      }
    }
  }
  return out;
};

/** Finds a file of another backend by its phase name, whatever its number. */
const phaseFile = (files: CompiledFiles, pattern: RegExp): string | undefined =>
  Object.keys(files)
    .sort()
    .find((f) => pattern.test(f));

const shellScript = (phase: string) => new RegExp(`^phases/\\d+-${phase}\\.sh$`);
const shellHooks = (phase: string, when: 'pre' | 'post') => new RegExp(`^hooks/\\d+-${phase}-${when}\\.sh$`);

const rootPath = (file: string): Value => tmpl({ expr: 'path.root' }, `/${file}`);

type Side = 'local' | 'target';
/** Webhooks and events run where packer runs; script hooks in the target. */
const sideOf = (h: Hook): Side => (h.action.type === 'script' ? 'target' : 'local');

/** Consecutive hooks that run on the same side, in order. */
const runsOf = (hooks: readonly Hook[]): Hook[][] => {
  const runs: Hook[][] = [];
  for (const h of hooks) {
    const last = runs[runs.length - 1];
    if (last && sideOf(last[0] as Hook) === sideOf(h)) last.push(h);
    else runs.push([h]);
  }
  return runs;
};

const rootSteps = (phase: Phase): Step[] => phase.steps.filter((s) => kindOf(s).inRoot);

/** The shell provisioners of a step Packer carries out itself between parts of its phase's script (a reboot), if it is one. */
const ownProvisioners = (s: Step): readonly PackerShell[] | undefined => kindOf(s).packer?.provisioners?.(s);
const isPackerOwn = (s: Step): boolean => kindOf(s).packer?.provisioners !== undefined;
/** A step a chroot cannot run (a reboot, a service started): its image's build.sh is left out. */
const needsMachine = isStepWith({ needsMachine: true });

/** The IR without the steps Packer carries out itself: what the shell backend compiles for the parts of the phases. */
const withoutPackerOwn = (ir: Image): Image => ({ ...ir, phases: ir.phases.map((p) => ({ ...p, steps: p.steps.filter((s) => !isPackerOwn(s)) })) });

export const localProvisioner = (file: string, lines: readonly string[]): Item =>
  block('provisioner', ['shell-local'], [attr('script', rootPath(file)), attr('execute_command', list(LOCAL_EXECUTE.map(str)))], lines);

/** `remoteFolder`: where packer uploads the script (a phase script sources helpers.sh from there). */
const targetProvisioner = (file: string, lines: readonly string[], remoteFolder?: string): Item =>
  block('provisioner', ['shell'], [attr('script', rootPath(file)), ...(remoteFolder ? [attr('remote_folder', str(remoteFolder))] : []), attr('execute_command', str(EXECUTE_AS_ROOT))], lines);

/**
 * The steps Packer carries out itself (a reboot) where it cannot: under
 * when(...), as its provisioners have no condition of their own, and with the
 * ansible provisioner, which runs a phase's play in one go.
 */
const ownRefusals = (ir: Image, provisioner: Provisioner): Diagnostic[] =>
  ir.phases.flatMap((p) =>
    p.steps.filter(isPackerOwn).flatMap((s): Diagnostic[] => {
      const refuse = (why: string, hint: string): Diagnostic[] => [diagnostic('IMGC2002', `the packer target cannot express ${describeStep(s)}: ${why}`, { loc: s.loc, stepId: s.id, hint })];
      if (provisioner === 'ansible')
        return refuse(
          "with --provisioner ansible, each phase's play runs in one go, with nothing to reconnect after the machine went away",
          'compile without --provisioner ansible: the shell provisioner runs the phase in parts around it',
        );
      if (s.conditions)
        return refuse(
          'Packer runs it as provisioners of its own, which take no when(...) condition',
          'take it out of the when(...) block, or use --target ansible --runtime, where the condition holds',
        );
      return [];
    }),
  );

/**
 * The steps the shell target's build.sh applies from the build machine (an
 * Ansible role, src/compilers/shell/plays.ts): the shell provisioner runs
 * only the phase scripts, in the VM, with no ansible-playbook between them.
 */
const buildMachineRefusals = (ir: Image, provisioner: Provisioner): Diagnostic[] =>
  provisioner === 'ansible'
    ? []
    : ir.phases.flatMap((p) =>
        p.steps
          .filter((s) => kindOf(s).fromBuildMachine !== undefined)
          .map((s) =>
            diagnostic('IMGC2002', `the packer target cannot express ${describeStep(s)}: Packer's shell provisioner runs the phase scripts in the machine being built, and nothing applies the role to it from outside`, {
              loc: s.loc,
              stepId: s.id,
              hint: 'compile with --provisioner ansible: Packer then runs the ansible output, which imports the role natively',
            }),
          ),
      );

/** A shell provisioner with fixed commands that a step's kind asked for (src/steps/kind.ts, PackerShell). */
const ownProvisioner = (p: PackerShell, lines: readonly string[]): Item =>
  block(
    'provisioner',
    ['shell'],
    [
      attr('inline', list(p.inline.map(str))),
      ...(p.pauseBefore !== undefined ? [attr('pause_before', str(p.pauseBefore))] : []),
      ...(p.expectDisconnect ? [attr('expect_disconnect', bool(true))] : []),
      ...(p.startRetryTimeout !== undefined ? [attr('start_retry_timeout', str(p.startRetryTimeout))] : []),
      attr('execute_command', str(EXECUTE_AS_ROOT)),
    ],
    lines,
  );

/** Whether a provisioner puts files in the build directory (a phase script, helpers.sh). */
const uploadsToBuildDir = (p: Item): boolean =>
  p.kind === 'block' && p.body.some((i) => i.kind === 'attr' && ((i.name === 'remote_folder' || i.name === 'destination') && i.value.kind === 'string' && i.value.value.startsWith(BUILD_DIR)));

/** Where the phase scripts and their helpers.sh go in the target: a directory that survives sysprep() and reboots (way-in.ts). */
const REMOTE_FOLDER = BUILD_DIR;

/** Fixed text run as root whoever Packer logs in as (root on an existing host, a user with sudo elsewhere). */
const asRoot = (command: string): string => `if [ "$(id -u)" -eq 0 ]; then ${command}; else sudo ${command}; fi`;

/** The first provisioner: the directory the phase scripts are uploaded to, owned by the user Packer uploads them as. */
const makeBuildDir = (): Item =>
  block('provisioner', ['shell'], [attr('inline', list([str(asRoot(`install -d -m 0700 -o "$(id -un)" ${BUILD_DIR}`))]))], [
    `The phase scripts and their helpers go to ${BUILD_DIR}, not /tmp: sysprep() empties /tmp, and a`,
    'reboot may, while a later phase still sources helpers.sh. The last provisioner removes it.',
  ]);

/**
 * The last provisioners: the build directory, and on a VM the seed let in
 * (a qemu source that takes imgc's seed), cloud-init's state and logs; its
 * shutdown command removes the build user (way-in.ts).
 */
const finish = (sources: readonly SourceSpec[], usesBuildDir: boolean): Item[] => {
  const seeded = sources.filter(seedsWayIn);
  return [
    ...(usesBuildDir
      ? [block('provisioner', ['shell'], [attr('inline', list([str(`rm -rf ${BUILD_DIR}`)])), attr('execute_command', str(EXECUTE_AS_ROOT))], [`Last: the phase scripts and helpers in ${BUILD_DIR}.`])]
      : []),
    ...(seeded.length
      ? [
          block(
            'provisioner',
            ['shell'],
            [
              attr('inline', list(seedCleanup.map(str))),
              attr('execute_command', str(EXECUTE_AS_ROOT)),
              ...(seeded.length < sources.length ? [attr('only', list(seeded.map((s) => str(`${s.builder}.${s.label}`))))] : []),
            ],
            [`Last: what the NoCloud seed left (cloud-init's per-instance state and logs). The shutdown command then removes ${BUILD_USER}.`],
          ),
        ]
      : []),
  ];
};

interface ShellPlan {
  readonly provisioners: Item[];
  /** Hook scripts of the shell backend for parts of a hook list (see hookProvisioners), and parts of phase scripts. */
  readonly extraFiles: CompiledFiles;
  /** Files of the shell backend's output left out: a phase script replaced by its parts, and build.sh then. */
  readonly dropped: string[];
}

/**
 * A phase's pre or post hooks. The shell backend writes one script per list,
 * run where the build is driven; in Packer that place is split in two (script
 * hooks belong in the target), so a list that mixes both sides is compiled by
 * the shell backend once per run of same-side hooks and each part runs where
 * it belongs, in order.
 */
const hookProvisioners = (ir: Image, opts: CompileOptions, shell: CompiledFiles, phase: Phase, when: 'pre' | 'post', plan: ShellPlan): void => {
  const hooks = when === 'pre' ? phase.pre : phase.post;
  const runs = runsOf(hooks);
  runs.forEach((run, k) => {
    const side = sideOf(run[0] as Hook);
    let file: string | undefined;
    if (runs.length === 1) {
      const own = phaseFile(shell, shellHooks(phase.name, when));
      file = own && `shell/${own}`;
    } else {
      const part: Image = { ...ir, phases: ir.phases.map((p) => (p === phase ? { ...p, [when]: run } : p)) };
      const partFiles = shellCompiler.compile(part, opts);
      const own = phaseFile(partFiles, shellHooks(phase.name, when));
      if (own) {
        file = `hooks/${own.slice('hooks/'.length, -'.sh'.length)}.${k + 1}.sh`;
        plan.extraFiles[file] = partFiles[own] as string;
      }
    }
    if (!file) return;
    const where = side === 'local' ? 'where packer runs' : 'in the target, as root';
    const lines = [`${phase.name}: ${when} hooks, ${where}:`, ...run.map(stepLine)];
    plan.provisioners.push(side === 'local' ? localProvisioner(file, lines) : targetProvisioner(file, lines));
  });
};

/**
 * `ir` is the definition; `scripts` is it without the steps Packer carries
 * out itself (withoutPackerOwn), which the shell backend compiled to `shell`.
 * A phase with such a step (a reboot) runs as parts: the shell backend
 * compiles each run of steps between them as the phase on its own
 * (shell/phases/NN-NAME.K.sh), and the step's own provisioners go between.
 */
const shellPlan = (ir: Image, scripts: Image, opts: CompileOptions, shell: CompiledFiles): ShellPlan => {
  const plan: ShellPlan = { provisioners: [], extraFiles: {}, dropped: [] };
  let uploaded = false;
  const uploadHelpers = (): void => {
    const helpers = `phases/${HELPERS_FILE}`;
    if (uploaded || shell[helpers] === undefined) return;
    uploaded = true;
    plan.provisioners.push(
      block('provisioner', ['file'], [attr('source', rootPath(`shell/${helpers}`)), attr('destination', str(`${REMOTE_FOLDER}/${HELPERS_FILE}`))], [
        `The phase scripts' runtime and helpers, which each sources from the folder it is uploaded to.`,
      ]),
    );
  };
  const runInParts = (phase: Phase, i: number): void => {
    const pieces = cut(phase.steps.filter((s) => kindOf(s).inRoot), isPackerOwn);
    const parts = pieces.filter((p): p is { part: PhaseStep[] } => 'part' in p);
    let k = 0;
    for (const piece of pieces) {
      if ('own' in piece) {
        for (const p of ownProvisioners(piece.own) ?? []) plan.provisioners.push(ownProvisioner(p, [`${at(piece.own)}: ${p.comment}`]));
        continue;
      }
      k++;
      const part: Image = { ...scripts, phases: scripts.phases.map((p, j) => (j === i ? { ...p, steps: piece.part } : p)) };
      const partFiles = shellCompiler.compile(part, opts);
      const own = phaseFile(partFiles, shellScript(phase.name)) as string;
      const file = `phases/${own.slice('phases/'.length, -'.sh'.length)}.${k}.sh`;
      plan.extraFiles[`shell/${file}`] = partFiles[own] as string;
      uploadHelpers();
      plan.provisioners.push(targetProvisioner(`shell/${file}`, [`${phase.name}: in the target, as root (part ${k} of ${parts.length}):`, ...piece.part.map(stepLine)], REMOTE_FOLDER));
    }
  };
  ir.phases.forEach((phase, i) => {
    hookProvisioners(scripts, opts, shell, scripts.phases[i]!, 'pre', plan);
    const steps = rootSteps(phase);
    const script = phaseFile(shell, shellScript(phase.name));
    // A phase with nothing for the root (artifacts, verify checks) is skipped.
    if (script && steps.some(isPackerOwn)) {
      plan.dropped.push(script);
      runInParts(phase, i);
    } else if (steps.length && script) {
      uploadHelpers();
      plan.provisioners.push(targetProvisioner(`shell/${script}`, [`${phase.name}: in the target, as root:`, ...steps.map(stepLine)], REMOTE_FOLDER));
    }
    hookProvisioners(scripts, opts, shell, scripts.phases[i]!, 'post', plan);
  });
  // build.sh runs the phase scripts in a chroot, which cannot reboot or run a service.
  if (ir.phases.some((p) => p.steps.some(needsMachine))) plan.dropped.push('build.sh');
  return plan;
};

/**
 * The Ansible backend's plays carry their phase's hooks (webhooks and events
 * delegated to the controller, which is where packer runs), so one ansible
 * provisioner per phase, limited to the phase's tag, keeps everything in order.
 */
/**
 * First, for the ansible provisioner: the target's python3 and the package
 * module's binding (python3-apt), which the plays' modules run with
 * (package_facts finds no package manager without it), installed when missing,
 * as imgc build --target ansible does in a root. Seen missing on imgc's own
 * cloud-init disk in the first real build.
 */
const ansiblePython = (ir: Image): Item => {
  const pm = packageManagers[ir.base.packageManager].runner;
  const present = ir.base.packageManager === 'apt' ? "python3 -c 'import apt' >/dev/null 2>&1" : 'command -v python3 >/dev/null';
  return block('provisioner', ['shell'], [attr('inline', list([str(`${present} || { ${pm.install(pm.python)}; }`)])), attr('execute_command', str(EXECUTE_AS_ROOT))], [
    `First: ${pm.python.join(' and ')} in the target, which the playbook's modules run with (installed when missing).`,
  ]);
};

const ansibleProvisioners = (ir: Image): Item[] =>
  ir.phases
    .filter((p) => p.pre.length || p.post.length || rootSteps(p).length)
    .map((phase) =>
      block(
        'provisioner',
        ['ansible'],
        [
          attr('playbook_file', rootPath('ansible/site.yml')),
          attr('extra_arguments', list([str('--tags'), str(phase.name)])),
          attr('inventory_file_template', str(INVENTORY)),
          // Ansible's user on Packer's proxy, whose SSH server checks only the key: any name but root. Packer's
          // default is whoever runs it, and as root Ansible skips become (root to root) and every change fails.
          attr('user', str(BUILD_USER)),
          attr('ansible_env_vars', list([tmpl('ANSIBLE_CONFIG=', { expr: 'path.root' }, '/ansible/ansible.cfg'), ...ANSIBLE_ENV.map(str)])),
          attr('sftp_command', str(SFTP_COMMAND)),
        ],
        [`${phase.name}: the playbook's ${phase.name} play (hooks where packer runs, the rest in the target):`, ...[...phase.pre, ...rootSteps(phase), ...phase.post].map(stepLine)],
      ),
    );

const variableBlock = (v: VariableSpec): Item =>
  block('variable', [v.name], [
    attr('type', { kind: 'type', name: v.type }),
    attr('description', str(v.description)),
    ...(v.default !== undefined ? [attr('default', defaultValue(v.default))] : []),
    ...(v.sensitive ? [attr('sensitive', bool(true))] : []),
    ...(v.validation ? [block('validation', [], [attr('condition', { kind: 'ref', expr: v.validation.condition }), attr('error_message', str(v.validation.message))])] : []),
  ]);

const defaultValue = (d: NonNullable<VariableSpec['default']>): Value =>
  typeof d === 'string' ? str(d) : typeof d === 'number' ? { kind: 'number', value: d } : typeof d === 'boolean' ? bool(d) : list(d.map(str));

const uniqueVariables = (sources: readonly SourceSpec[]): VariableSpec[] => {
  const seen = new Map<string, VariableSpec>();
  for (const s of sources) for (const v of s.variables) if (!seen.has(v.name)) seen.set(v.name, v);
  return [...seen.values()];
};

/**
 * The plugins a template uses, pinned as `packer init` installs them. The
 * versions are the major series the emitted settings were written against.
 */
const PLUGINS: Record<string, { source: string; version: string }> = {
  qemu: { source: 'github.com/hashicorp/qemu', version: '~> 1.1' },
  amazon: { source: 'github.com/hashicorp/amazon', version: '~> 1.3' },
  ansible: { source: 'github.com/hashicorp/ansible', version: '~> 1.1' },
};

/** Builders that are plugins since Packer 1.10, by the plugin that has them (null and the shell provisioners stay in Packer itself). */
const pluginOfBuilder: Partial<Record<SourceSpec['builder'], string>> = { qemu: 'qemu', 'amazon-ebs': 'amazon' };

/** Settings Debian's packer 1.6.6 refuses that today's plugins take, by builder. */
const newerThan16: Partial<Record<SourceSpec['builder'], readonly string[]>> = { qemu: ['cpu_model'] };

const packerBlock = (sources: readonly SourceSpec[], provisioner: Provisioner): Item => {
  const names = [...new Set([...sources.map((s) => pluginOfBuilder[s.builder]).filter((p): p is string => p !== undefined), ...(provisioner === 'ansible' ? ['ansible'] : [])])].sort();
  return block('packer', [], [
    attr('required_version', str('>= 1.10.0')),
    ...(names.length
      ? [block('required_plugins', [], names.map((n) => attr(n, map([['source', str(PLUGINS[n]!.source)], ['version', str(PLUGINS[n]!.version)]]))))]
      : []),
  ]);
};

/** Whether the output has parts of hook lists (hooks/*.N.sh) or of phase scripts (shell/phases/*.K.sh). */
interface Parts {
  hooks: boolean;
  phases: boolean;
  /** shell/build.sh (the chroot driver) left out. */
  noDriver: boolean;
}

const exampleValue = (v: VariableSpec): string => (v.name.endsWith('checksum') ? 'sha512:…' : '…');

const header = (ir: Image, file: string, provisioner: Provisioner, json: boolean, required: readonly VariableSpec[], notPacker: readonly Step[], parts: Parts, legacy: boolean): string[] => {
  const flags = [provisioner === 'ansible' ? ' --provisioner ansible' : '', json ? ' --json' : '', legacy ? ' --packer-version 1.6' : ''].join('');
  const vars = required.map((v) => ` -var ${v.name}=${exampleValue(v)}`).join('');
  return [
    `Generated by imgc from ${ir.source}; do not edit: change the definition and run`,
    `  imgc compile ${ir.source} --target packer${flags}`,
    `Image ${ir.name} on ${baseTitle(ir.base)} (${ir.base.suite}); phases: ${ir.phases.map((p) => p.name).join(', ')}.`,
    provisioner === 'shell'
      ? 'The phases run as the shell backend\'s scripts in shell/: phases/ in the target, hooks/ where packer runs (script hooks in the target).'
      : 'The phases run as the Ansible backend\'s playbook in ansible/, one play (tag) at a time.',
    ...(parts.hooks ? ['hooks/*.N.sh: a phase\'s hooks that run partly in the target, partly here, split in order.'] : []),
    ...(parts.phases
      ? ['shell/phases/NN-NAME.K.sh: part K of a phase that reboots, run between the reboots; no shell/build.sh, as a chroot build cannot reboot.']
      : parts.noDriver
        ? ['No shell/build.sh: a step needs the machine running (a service started or stopped), which a chroot build has not.']
        : []),
    '',
    legacy
      ? 'For Debian\'s packer 1.6.6, which has these builders and provisioners built in: no `packer init`.'
      : 'For Packer 1.10 or later: `packer init` installs the plugins the packer block pins.',
    `From this directory${json ? ' (name the file: the .pkr.hcl and .pkr.json are the same template, and `.` would load both)' : ''}:`,
    ...(legacy ? [] : [`  packer init ${json ? file : '.'}`]),
    `  packer validate${vars} ${json ? file : '.'}`,
    `  packer build${vars} ${json ? file : '.'}`,
    ...(required.length ? [`Required variables: ${required.map((v) => v.name).join(', ')}; the others have defaults.`] : []),
    ...(notPacker.length
      ? ['', 'Not built by Packer: `imgc build` produces these from the root, and `imgc verify` checks them:', ...notPacker.map(stepLine)]
      : []),
  ];
};

const sourcesOf = (ir: Image): SourceSpec[] => {
  const artifactPhase = ir.phases.find((p) => p.name === 'artifact');
  const cloudSteps = (artifactPhase?.steps ?? []).filter(isPackerSource);
  const artifactSteps = (artifactPhase?.steps ?? []).filter(isBuildArtifact);
  return sourcesFor(cloudSteps, ir.name, ir.base, artifactSteps, logSettling(ir));
};

const template = (ir: Image, sources: readonly SourceSpec[], provisioner: Provisioner, json: boolean, file: string, provisioners: readonly Item[], parts: Parts, legacy: boolean): Item[] => {
  const own = irVariables(ir, legacy);
  const variables = [...own, ...uniqueVariables(sources).filter((v) => !own.some((o) => o.name === v.name))];
  const required = variables.filter((v) => v.default === undefined);
  const notPacker = ir.phases.flatMap((p) => p.steps.filter(isDoneByBuild));

  const withFiles = sources.filter((s) => s.producesFiles);
  const postProcessors: Item[] = [
    block('post-processor', ['manifest'], [attr('output', str('manifest.json')), attr('strip_path', bool(true))], ['What each source built, for imgc verify and for people.']),
  ];
  if (withFiles.length) {
    postProcessors.push(
      block(
        'post-processor',
        ['checksum'],
        [
          attr('checksum_types', list([str('sha256')])),
          ...(withFiles.length < sources.length ? [attr('only', list(withFiles.map((s) => str(`${s.builder}.${s.label}`))))] : []),
        ],
        [`sha256 sums of the files ${withFiles.map((s) => `${s.builder}.${s.label}`).join(', ')} wrote.`],
      ),
    );
  }

  const items: Item[] = [comment(...header(ir, file, provisioner, json, required, notPacker, parts, legacy)), blank];
  if (!legacy) items.push(packerBlock(sources, provisioner), blank);
  for (const v of variables) items.push(variableBlock(v), blank);
  for (const s of sources) items.push(block('source', [s.builder, s.label], s.body, s.comment), blank);
  items.push(
    block('build', [], [
      attr('sources', list(sources.map((s) => str(`source.${s.builder}.${s.label}`)))),
      ...provisioners.flatMap((p) => [blank, p]),
      ...postProcessors.flatMap((p) => [blank, p]),
    ]),
  );
  return items;
};

const prefixed = (prefix: string, files: CompiledFiles): CompiledFiles =>
  Object.fromEntries(Object.entries(files).map(([k, v]) => [`${prefix}/${k}`, v]));

export const packerCompiler: Compiler = {
  target: 'packer',
  description: 'Packer HCL2 template (Packer 1.10+ with pinned plugins, or 1.6.6): cloud image sources, the phases as provisioners',
  compile(given: Image, opts: CompileOptions): CompiledFiles {
    assertCompilable(given);
    // An image build: the phases for existing hosts only (bootstrap) are not in it.
    const ir = imageView(given);
    const problems = templateDiagnostics(ir, opts.packerVersion === '1.6');
    if (problems.length) throw new CompileError(problems);
    const provisioner: Provisioner = opts.provisioner ?? 'shell';
    const refused = [...ownRefusals(ir, provisioner), ...buildMachineRefusals(ir, provisioner)];
    if (refused.length) throw new CompileError(refused);
    let embedded: CompiledFiles;
    let provisioners: Item[];
    const parts: Parts = { hooks: false, phases: false, noDriver: false };
    // The phases run on Packer's VM (or host), where an init runs: services may be started.
    const inVm: CompileOptions = { ...opts, booted: true };
    if (provisioner === 'shell') {
      const scripts = withoutPackerOwn(ir);
      const shell = shellCompiler.compile(scripts, inVm);
      const plan = shellPlan(ir, scripts, inVm, shell);
      provisioners = plan.provisioners;
      for (const f of plan.dropped) delete shell[f];
      embedded = { ...prefixed('shell', shell), ...plan.extraFiles };
      parts.hooks = Object.keys(plan.extraFiles).some((f) => f.startsWith('hooks/'));
      parts.phases = plan.dropped.some((f) => f !== 'build.sh');
      parts.noDriver = plan.dropped.includes('build.sh');
    } else {
      embedded = prefixed('ansible', ansibleCompiler.compile(ir, inVm));
      provisioners = [ansiblePython(ir), ...ansibleProvisioners(ir)];
    }
    const sources = sourcesOf(ir);
    const usesBuildDir = provisioners.some(uploadsToBuildDir);
    provisioners = [...(usesBuildDir ? [makeBuildDir()] : []), ...withVariables(ir, provisioners, embedded), ...finish(sources, usesBuildDir)];
    if (sources.some(seedsWayIn)) Object.assign(embedded, { [`${SEED_DIR}/user-data`]: userData(), [`${SEED_DIR}/meta-data`]: metaData(ir.name) });
    const hclFile = `${ir.name}.pkr.hcl`;
    const jsonFile = `${ir.name}.pkr.json`;
    const legacy = opts.packerVersion === '1.6';
    const files: CompiledFiles = { [hclFile]: writeHcl(template(ir, sources, provisioner, opts.json ?? false, hclFile, provisioners, parts, legacy)) };
    if (opts.json) files[jsonFile] = writeJson(template(ir, sources, provisioner, true, jsonFile, provisioners, parts, legacy));
    return { ...files, ...embedded };
  },
};
