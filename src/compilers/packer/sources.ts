// Packer sources: one per Packer source step of the artifact phase (qemu,
// amazon-ebs, null), or a null source for an existing host when there is none.
// Each builder gets what it needs to pass `packer validate`; the step's
// settings (builder-native keys) are written as given and win over these.
import { archInfo, archOf, type Arch } from '../../core/arch.js';
import type { Base } from '../../ir/schema.js';
import type { BuildArtifact, PackerSource } from '../../ir/phases.js';
import { attr, block, bool, list, map, num, ref, str, tmpl, type Item, type Value } from './hcl.js';
import { BUILD_TIME, variableParts, type TemplatePart } from './quote.js';
import { BUILD_USER, SEED_DIR, seedShutdown } from './way-in.js';

/** One builder setting's value. */
type Setting = PackerSource['settings'][string];
/** What the template says when the definition has no Packer source: it provisions an existing host instead. */
const noCloudImage = 'The definition has no cloudImage step, so Packer provisions an existing host:';

export interface VariableSpec {
  readonly name: string;
  readonly type: 'string' | 'number' | 'bool' | 'list(string)';
  readonly description: string;
  /** Absent: the variable is required (`-var NAME=…`). */
  readonly default?: string | number | boolean | readonly string[];
  /** A `validation` block: Packer refuses a value `condition` (an HCL expression of imgc's own, no user text) does not accept. */
  readonly validation?: { readonly condition: string; readonly message: string };
  readonly sensitive?: boolean;
}

export interface SourceSpec {
  readonly builder: PackerSource['builder'];
  readonly label: string;
  /** Comment lines above the block. */
  readonly comment: readonly string[];
  readonly body: readonly Item[];
  /** Variables the body refers to, in the order they are used. */
  readonly variables: readonly VariableSpec[];
  /** Whether Packer's artifact has files (the checksum post-processor needs files). */
  readonly producesFiles: boolean;
  /** Whether Packer gets in through imgc's NoCloud seed (way-in.ts): the definition left cd_files and ssh_username to imgc. */
  readonly seeded?: boolean;
}

/**
 * Where each base comes from as a VM disk image or an AMI, for an
 * architecture: Debian and Canonical both name theirs with Debian's words
 * (amd64, arm64), so one name per base serves every architecture.
 */
interface CloudBase {
  readonly diskImageUrl: (arch: Arch) => string;
  readonly amiName: (arch: Arch) => string;
  readonly amiOwner: string;
  readonly amiOwnerName: string;
  readonly amiUser: string;
}

const cloudBases: Readonly<Record<string, CloudBase>> = {
  'debian-12': {
    diskImageUrl: (arch) => `https://cloud.debian.org/images/cloud/bookworm/latest/debian-12-generic-${arch}.qcow2`,
    amiName: (arch) => `debian-12-${arch}-*`,
    amiOwner: '136693071363',
    amiOwnerName: 'Debian',
    amiUser: 'admin',
  },
  'ubuntu-22.04': {
    diskImageUrl: (arch) => `https://cloud-images.ubuntu.com/jammy/current/jammy-server-cloudimg-${arch}.img`,
    amiName: (arch) => `ubuntu/images/hvm-ssd/ubuntu-jammy-22.04-${arch}-server-*`,
    amiOwner: '099720109477',
    amiOwnerName: 'Canonical',
    amiUser: 'ubuntu',
  },
  'ubuntu-24.04': {
    diskImageUrl: (arch) => `https://cloud-images.ubuntu.com/noble/current/noble-server-cloudimg-${arch}.img`,
    amiName: (arch) => `ubuntu/images/hvm-ssd-gp3/ubuntu-noble-24.04-${arch}-server-*`,
    amiOwner: '099720109477',
    amiOwnerName: 'Canonical',
    amiUser: 'ubuntu',
  },
};

/**
 * What a source says for its base's architecture. amd64's machine is Packer's
 * default (qemu-system-x86_64, the pc machine), so its sources say none of it
 * and read as they did before bases had an architecture.
 */
interface ArchSource {
  /** qemu source fields besides Packer's defaults. */
  readonly qemu: readonly Field[];
  /** qemuargs after -bios. */
  readonly qemuArgs: readonly (readonly string[])[];
  /** The UEFI firmware QEMU loads with -bios: imgc's disks boot by UEFI only (systemd-boot on an EFI system partition). */
  readonly firmware: string;
  readonly accelerator: Pick<VariableSpec, 'description' | 'default'>;
  readonly instanceType: Pick<VariableSpec, 'description' | 'default'>;
  /** source_ami_filter filters besides the name. */
  readonly amiFilters: readonly (readonly [string, string])[];
}

const archSources: Readonly<Record<Arch, ArchSource>> = {
  amd64: {
    qemu: [],
    qemuArgs: [],
    // OVMF.fd, not arch.ts's OVMF_CODE.fd: the one image of code and variables that -bios takes on the pc machine.
    firmware: '/usr/share/ovmf/OVMF.fd',
    accelerator: { description: 'QEMU accelerator: kvm or tcg (no KVM: slower, but works anywhere). Empty: Packer picks kvm when /dev/kvm opens, else tcg.', default: '' },
    instanceType: { description: 'EC2 instance type of the build instance.', default: 't3.micro' },
    amiFilters: [],
  },
  arm64: {
    qemu: [
      ['qemu_binary', str(archInfo.arm64.qemuSystem)],
      ['machine_type', str(archInfo.arm64.qemuMachine)],
      ['disk_interface', str('virtio')],
      ['net_device', str('virtio-net')],
    ],
    // virt's default CPU is a 32-bit cortex-a15; max is every feature TCG emulates (the host's CPU under KVM).
    qemuArgs: [['-cpu', 'max']],
    // QEMU 7.2's virt loads the pflash image of Debian's qemu-efi-aarch64 with -bios too (variables then live in memory).
    firmware: archInfo.arm64.firmware.code[0]!,
    accelerator: {
      description: 'QEMU accelerator: tcg (emulated: slow, but works on any host) or kvm (on an arm64 host only). Not empty by default: Packer would pick kvm whenever /dev/kvm opens, and an amd64 host\'s KVM cannot run an arm64 VM.',
      default: 'tcg',
    },
    instanceType: { description: 'EC2 instance type of the build instance: an arm64 (Graviton) one, as the AMI is arm64.', default: 't4g.micro' },
    amiFilters: [['architecture', 'arm64']],
  },
};

/** A base's name, and its architecture unless amd64 (which templates have always meant). */
export const baseTitle = (base: Base): string => (archOf(base) === 'amd64' ? base.name : `${base.name} ${archOf(base)}`);

/** A default attribute, or a variable the attribute reads. */
type Field = readonly [name: string, value: Value | VariableSpec];

const isVariable = (v: Value | VariableSpec): v is VariableSpec => 'description' in v;

const settingValue = (v: Setting): Value =>
  typeof v === 'string' ? str(v) : typeof v === 'number' ? num(v) : typeof v === 'boolean' ? bool(v) : list((v as readonly (string | readonly string[])[]).map((i) => (typeof i === 'string' ? str(i) : list(i.map(str)))));

const locText = (step: { id: string; loc?: { file: string; line: number } | undefined }): string =>
  step.loc ? `${step.id} (${step.loc.file}:${step.loc.line})` : step.id;

/**
 * The source body: imgc's fields first (a setting of the same name replaces
 * the field in place), then the definition's other settings in key order.
 */
const assemble = (
  fields: readonly Field[],
  settings: Readonly<Record<string, Setting>>,
  blocks: readonly Item[],
  /** Fields whose given value gets a suffix (a name unique per build). */
  suffixed: Readonly<Record<string, readonly TemplatePart[]>> = {},
): { body: Item[]; variables: VariableSpec[] } => {
  const variables: VariableSpec[] = [];
  const body: Item[] = [];
  for (const [name, v] of fields) {
    const given = settings[name];
    const suffix = suffixed[name];
    if (given !== undefined) body.push(attr(name, suffix && typeof given === 'string' ? tmpl(...variableParts(given), ...suffix) : settingValue(given)));
    else if (isVariable(v)) {
      variables.push(v);
      body.push(attr(name, suffix ? tmpl({ expr: `var.${v.name}` }, ...suffix) : ref(`var.${v.name}`)));
    } else body.push(attr(name, v));
  }
  const own = new Set(fields.map(([n]) => n));
  const rest = Object.keys(settings).filter((k) => !own.has(k));
  if (rest.length) {
    body.push({ kind: 'blank' }, { kind: 'comment', lines: ['Settings from the definition.'] });
    for (const k of rest) body.push(attr(k, settingValue(settings[k] as Setting)));
  }
  if (blocks.length) body.push({ kind: 'blank' }, ...blocks);
  return { body, variables };
};

const qemu = (step: PackerSource, label: string, prefix: string, imageName: string, base: Base, disk: BuildArtifact | undefined, settle: readonly string[]): SourceSpec => {
  // Booting imgc's own disk: no cloud image to download by default.
  const cloud = disk ? undefined : cloudBases[base.name];
  const arch = archOf(base);
  const machine = archSources[arch];
  const given = step.settings['format'];
  const format = typeof given === 'string' ? given : (disk?.format ?? 'qcow2');
  const firmware: VariableSpec = {
    name: `${prefix}_firmware`,
    type: 'string',
    description: `UEFI firmware QEMU boots the VM with (-bios): imgc's bootable disks are UEFI only, and cloud images boot by UEFI too. Debian's ${archInfo[arch].firmwarePackage} package has this one.`,
    default: machine.firmware,
  };
  const key: VariableSpec = {
    name: `${prefix}_ssh_private_key_file`,
    type: 'string',
    description: `A key pair made for this build only, e.g. ssh-keygen -t ed25519 -N '' -f build_key: Packer logs in as ${BUILD_USER} with this file, and the NoCloud seed authorizes this file's .pub (beside it). Delete both after the build.`,
  };
  const fields: Field[] = [
    ['disk_image', bool(true)],
    [
      'iso_url',
      {
        name: `${prefix}_iso_url`,
        type: 'string',
        description: disk
          ? `The disk the ${label} VM boots: ${disk.output}, which imgc build writes (by default to out/${imageName}/build, beside this directory's out/${imageName}/packer), or any disk image with cloud-init and sshd.`
          : `Disk image the ${label} VM boots from, with cloud-init and sshd${cloud ? ` (${baseTitle(base)}'s generic cloud image by default)` : ''}.`,
        ...(disk ? { default: `../build/${disk.output}` } : cloud ? { default: cloud.diskImageUrl(arch) } : {}),
      },
    ],
    [
      'iso_checksum',
      {
        name: `${prefix}_iso_checksum`,
        type: 'string',
        description: disk
          ? `Checksum of ${prefix}_iso_url: "sha256:…" as imgc build's manifest.json records it for ${disk.output} (or "file:" its SHA256SUMS, written when the verify phase has checksums()).`
          : `Checksum of ${prefix}_iso_url, e.g. "sha512:…" from the SHA512SUMS beside it. A "file:" URL works for packer build but makes packer validate download it.`,
      },
    ],
    ['output_directory', str(`output-${label}`)],
    ['vm_name', str(`${imageName}.${format}`)],
    ...(disk ? ([['format', str(disk.format)]] as Field[]) : []),
    ...machine.qemu,
    ['accelerator', { name: `${prefix}_accelerator`, type: 'string', ...machine.accelerator }],
    ['cd_files', list([rootFile(`${SEED_DIR}/user-data`), rootFile(`${SEED_DIR}/meta-data`), tmpl({ expr: `var.${key.name}` }, '.pub')])],
    ['cd_label', str('cidata')],
    ['communicator', str('ssh')],
    ['ssh_username', str(BUILD_USER)],
    ['ssh_private_key_file', key],
    ['ssh_timeout', str('20m')],
    ['shutdown_command', str(seedShutdown(settle))],
    // qemuargs rather than `firmware`: packer 1.6.6's qemu builder has no `firmware`.
    ['qemuargs', list([list([str('-bios'), ref(`var.${firmware.name}`)]), ...machine.qemuArgs.map((a) => list(a.map(str)))])],
  ];
  const { body, variables } = assemble(fields, step.settings, []);
  return {
    builder: 'qemu',
    label,
    comment: [
      disk
        ? `${locText(step)}: a VM disk image built with QEMU, starting from imgc's own bootable disk ${disk.output} (${disk.id}): run imgc build first, then packer build here.`
        : `${locText(step)}: a VM disk image built with QEMU, starting from a cloud image.`,
      ...(arch === 'amd64' ? [] : [`An ${arch} VM (${archInfo[arch].qemuSystem}, UEFI from ${archInfo[arch].firmwarePackage}): emulated (tcg) unless the host is ${arch} with KVM.`]),
      `The way in: a NoCloud seed (cd_files, label cidata; the files in ${SEED_DIR}/) makes the temporary user ${BUILD_USER},`,
      `authorized for ${prefix}_ssh_private_key_file's .pub; the last provisioner and the shutdown command remove it.`,
    ],
    body,
    variables: step.settings['qemuargs'] === undefined ? [...variables, firmware] : variables,
    producesFiles: true,
    seeded: step.settings['cd_files'] === undefined && step.settings['ssh_username'] === undefined,
  };
};

/** Whether a source boots with imgc's NoCloud seed, so the last provisioners clean up after it. */
export const seedsWayIn = (s: SourceSpec): boolean => s.seeded === true;

/** A file beside the template. */
const rootFile = (file: string): Value => tmpl({ expr: 'path.root' }, `/${file}`);

const amazonEbs = (step: PackerSource, label: string, prefix: string, imageName: string, base: Base): SourceSpec => {
  const cloud = cloudBases[base.name];
  const arch = archOf(base);
  const s = step.settings;
  const fields: Field[] = [
    ['region', { name: `${prefix}_region`, type: 'string', description: 'AWS region the AMI is built in.' }],
    ['instance_type', { name: `${prefix}_instance_type`, type: 'string', ...archSources[arch].instanceType }],
    [
      'ami_name',
      {
        name: `${prefix}_ami_name`,
        type: 'string',
        description: 'Name of the AMI; AMI names are unique per account and region, so the build adds -YYYYMMDDhhmmss (its start, UTC).',
        default: imageName,
      },
    ],
  ];
  const blocks: Item[] = [];
  if (s['source_ami'] === undefined) {
    if (cloud) {
      blocks.push(
        block(
          'source_ami_filter',
          [],
          [
            attr('filters', map([
              ...archSources[arch].amiFilters.map(([k, v]) => [k, str(v)] as const),
              ['name', str(cloud.amiName(arch))],
              ['root-device-type', str('ebs')],
              ['virtualization-type', str('hvm')],
            ])),
            attr('owners', list([str(cloud.amiOwner)])),
            attr('most_recent', bool(true)),
          ],
          [`The newest official ${baseTitle(base)} AMI (owner ${cloud.amiOwner} is ${cloud.amiOwnerName}).`],
        ),
      );
    } else {
      fields.push(['source_ami', { name: `${prefix}_source_ami`, type: 'string', description: `AMI of ${baseTitle(base)} to start from.` }]);
    }
  }
  fields.push(['communicator', str('ssh')]);
  fields.push(['ssh_username', cloud ? str(cloud.amiUser) : { name: `${prefix}_ssh_username`, type: 'string', description: 'User the AMI lets in over ssh.' }]);
  const { body, variables } = assemble(fields, s, blocks, { ami_name: ['-', { expr: BUILD_TIME }] });
  return {
    builder: 'amazon-ebs',
    label,
    comment: [`${locText(step)}: an AMI. AWS credentials come from the environment (AWS_PROFILE, AWS_ACCESS_KEY_ID, …).`],
    body,
    variables,
    producesFiles: false,
  };
};

const nullHost = (settings: Readonly<Record<string, Setting>>, label: string, prefix: string, comment: readonly string[]): SourceSpec => {
  const fields: Field[] = [
    ['communicator', str('ssh')],
    ['ssh_host', { name: `${prefix}_ssh_host`, type: 'string', description: 'Address of the existing host to provision.' }],
    ['ssh_port', { name: `${prefix}_ssh_port`, type: 'number', description: 'Its ssh port.', default: 22 }],
    ['ssh_username', { name: `${prefix}_ssh_username`, type: 'string', description: 'User Packer logs in as: root, or a user with passwordless sudo.', default: 'root' }],
    [
      'ssh_password',
      {
        name: `${prefix}_ssh_password`,
        type: 'string',
        description: `Its password; leave empty and set ${prefix}_ssh_private_key_file to use a key.`,
        default: '',
        sensitive: true,
      },
    ],
    [
      'ssh_private_key_file',
      {
        name: `${prefix}_ssh_private_key_file`,
        type: 'string',
        description: `Private key file for ssh; leave empty to use ${prefix}_ssh_password. One of the two must be set.`,
        default: '',
      },
    ],
  ];
  const { body, variables } = assemble(fields, settings, []);
  return { builder: 'null', label, comment, body, variables, producesFiles: false };
};

/** An HCL label and variable prefix for a step name; unique within the template. */
const labelFor = (name: string, taken: Set<string>): string => {
  let base = name.toLowerCase().replace(/[^a-z0-9_-]+/g, '_').replace(/^[^a-z]+/, '');
  if (!base) base = 'source';
  let label = base;
  for (let i = 2; taken.has(label.replace(/-/g, '_')); i++) label = `${base}_${i}`;
  taken.add(label.replace(/-/g, '_'));
  return label;
};

/**
 * The sources of the template, in the artifact phase's order; `artifacts`:
 * the phase's artifact steps, for a qemu source that boots one (`disk`);
 * `settle`: what a seeded VM's shutdown command runs before it powers off (way-in.ts's logSettling).
 */
export const sourcesFor = (steps: readonly PackerSource[], imageName: string, base: Base, artifacts: readonly BuildArtifact[] = [], settle: readonly string[] = []): SourceSpec[] => {
  const taken = new Set<string>();
  if (steps.length === 0) {
    const label = labelFor('existing-host', taken);
    return [
      nullHost({}, label, label.replace(/-/g, '_'), [
        noCloudImage,
        'the null builder only connects to it; packer build runs every phase there.',
      ]),
    ];
  }
  return steps.map((step) => {
    const label = labelFor(step.name, taken);
    const prefix = label.replace(/-/g, '_');
    switch (step.builder) {
      case 'qemu':
        return qemu(step, label, prefix, imageName, base, artifacts.find((a) => step.disk !== undefined && a.output === step.disk), settle);
      case 'amazon-ebs':
        return amazonEbs(step, label, prefix, imageName, base);
      case 'null':
        return nullHost(step.settings, label, prefix, [`${locText(step)}: an existing host, reached over ssh; Packer only connects to it.`]);
    }
  });
};
