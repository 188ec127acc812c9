// Every command and the flags it takes, as data: the parser, `imgc help`, the
// per-command --help, did-you-mean and the shell completions all read this
// table, so a flag is declared once and is accepted only where it applies.
import { parseArgs, type ParseArgsConfig } from 'node:util';
import { didYouMean } from '../core/suggest.js';
import { packerVersions, targets } from '../compilers/targets.js';
import { UsageError } from './exit.js';

export interface Flag {
  name: string;
  type: 'string' | 'boolean';
  short?: string;
  multiple?: boolean;
  /** What the value is, in the help: FILE, DIR, NAME=VALUE … */
  value?: string;
  /** The values it takes, when they are a fixed list (help, completion). */
  choices?: readonly string[];
  /** Completed as a file or a directory name. */
  complete?: 'file' | 'dir';
  help: string;
}

export interface Command {
  name: string;
  /** Positional arguments, as the usage line shows them. */
  args: string;
  summary: string;
  flags: readonly Flag[];
  /** Lines after the flags in `imgc help COMMAND`. */
  notes?: string;
}

/** What verify and probe read: a root directory, or an image read as files. */
const rootOrImage: Flag[] = [
  { name: 'root', type: 'string', value: 'DIR', complete: 'dir', help: 'a root directory' },
  { name: 'image', type: 'string', value: 'FILE', complete: 'file', help: 'a disk (.raw, .qcow2) or tarball (.tar, .tar.zst, .tar.gz), read as files, never mounted' },
];

const loadFlags: Flag[] = [
  { name: 'var', type: 'string', multiple: true, value: 'NAME=VALUE', help: "a value for one of the definition's variables (repeatable)" },
  { name: 'var-file', type: 'string', multiple: true, value: 'FILE', complete: 'file', help: 'variable values from a TOML or JSON file of NAME = VALUE (repeatable)' },
  { name: 'no-typecheck', type: 'boolean', help: 'skip the TypeScript check (the contract checker still runs)' },
  { name: 'timeout', type: 'string', value: 'SECONDS', help: 'how long the definition may take to evaluate (default 30)' },
  { name: 'variant', type: 'string', value: 'NAME', help: 'a matrix (variants(...)): the combination to act on, by name (imgc variants lists them)' },
];
/** Every combination of a matrix, for the commands that can act on many. */
const allFlag: Flag = { name: 'all', type: 'boolean', help: 'a matrix: every combination, each into a sub-folder of the output named after it' };
const talkFlags: Flag[] = [
  { name: 'quiet', type: 'boolean', short: 'q', help: 'print errors only' },
  { name: 'verbose', type: 'boolean', short: 'v', help: 'say more about what was done' },
];
/** Every command takes these. */
export const globalFlags: readonly Flag[] = [
  { name: 'help', type: 'boolean', short: 'h', help: 'this help' },
  { name: 'color', type: 'boolean', help: 'colour the output even when it is not a terminal (also FORCE_COLOR=1)' },
  { name: 'no-color', type: 'boolean', help: 'never colour the output (also NO_COLOR=1)' },
];

const targetNames = [...targets].sort();

export const commands: readonly Command[] = [
  { name: 'init', args: '[DIR]', summary: 'scaffold a project: node-image.ts, imgc.toml, tsconfig.json, package.json, a CI workflow', flags: [] },
  {
    name: 'check',
    args: '[FILE]',
    summary: 'type-check and contract-check a definition',
    flags: [
      { name: 'format', type: 'string', choices: ['text', 'json', 'sarif'], help: 'how to print the diagnostics' },
      { name: 'watch', type: 'boolean', help: 'check again on every save of the definition or a file it imports, until Ctrl-C' },
      { name: 'against', type: 'string', value: 'CONTRACT', complete: 'file', help: "check the phases after the contract's phase against its facts, not the base's" },
      ...loadFlags,
      ...talkFlags,
    ],
    notes: 'Exit: 0 clean (warnings allowed), 1 contract or type errors, 2 usage or load errors.',
  },
  {
    name: 'compile',
    args: '[FILE]',
    summary: "write a target's files for the definition (after checking it)",
    flags: [
      { name: 'target', type: 'string', short: 't', choices: targetNames, help: 'the tool to emit for (default: imgc.toml [compile] target)' },
      { name: 'out', type: 'string', short: 'o', value: 'DIR', complete: 'dir', help: 'where to write (default <root>/<image>/<target>, the root being imgc.toml [compile] out, else out)' },
      { name: 'format', type: 'string', choices: ['text', 'json'], help: "json: the files written (path, bytes, sha256), the steps the target refused and the check's diagnostics, on stdout" },
      { name: 'provisioner', type: 'string', choices: ['shell', 'ansible'], help: 'packer: what its provisioners run' },
      { name: 'json', type: 'boolean', help: 'packer: a .pkr.json template beside the HCL' },
      { name: 'packer-version', type: 'string', choices: packerVersions, help: 'packer: 1.10 and later pin plugins (default); 1.6 has them built in (default: imgc.toml [compile.packer] version)' },
      { name: 'runtime', type: 'boolean', help: 'shell, ansible: phase 2 for existing hosts' },
      { name: 'decommission', type: 'boolean', help: 'shell, ansible: undo phase 2 on existing hosts' },
      { name: 'serial', type: 'string', value: 'N|P%', help: 'ansible --runtime/--decommission: hosts per batch (default all)' },
      { name: 'max-fail', type: 'string', value: 'PERCENT', help: 'ansible --runtime/--decommission: failed hosts of a batch, in percent, that stop the run (default 100)' },
      allFlag,
      ...loadFlags,
      ...talkFlags,
    ],
  },
  {
    name: 'explain',
    args: 'FILE',
    summary: 'the phases with what each step provides and requires, or a picture of it',
    flags: [
      { name: 'graph', type: 'string', choices: ['mermaid', 'dot', 'lifecycle'], help: 'draw who provides what to whom (or the node lifecycle)' },
      { name: 'no-base-edges', type: 'boolean', help: "leave out the arrows from the base's facts" },
      ...loadFlags,
    ],
  },
  { name: 'ir', args: 'FILE', summary: 'print the Image IR as JSON', flags: loadFlags },
  {
    name: 'variants',
    args: '[FILE]',
    summary: "list a matrix's combinations (variants(...)), by name and values",
    flags: [{ name: 'format', type: 'string', choices: ['text', 'json'], help: 'json: an array of { name, values }, e.g. for a CI matrix (imgc schema --variants)' }, ...loadFlags.filter((f) => f.name !== 'variant')],
    notes: 'A definition of one image lists that image. Exit: 0 listed, 2 usage or load errors (imgc check reports the rest).',
  },
  {
    name: 'contract',
    args: 'FILE | diff OLD NEW',
    summary: 'write the facts that hold after a phase as a versioned contract, or compare two contracts',
    flags: [
      { name: 'phase', type: 'string', value: 'PHASE', help: 'the phase after which (default: the last that changes the root; base for the base alone)' },
      { name: 'out', type: 'string', short: 'o', value: 'FILE', complete: 'file', help: 'write the contract there instead of stdout' },
      { name: 'format', type: 'string', choices: ['text', 'json', 'sarif'], help: 'diff: how to print what changed' },
      ...loadFlags,
    ],
    notes: 'diff exits 1 when a fact of OLD is gone or changed in NEW (what was built on OLD may break), else 0.',
  },
  {
    name: 'probe',
    args: '',
    summary: 'write the contract of a real root, image or host: what it has (users, groups, packages, paths, services, commands, sysctls, modules)',
    flags: [
      ...rootOrImage,
      { name: 'ssh', type: 'string', value: 'USER@HOST', help: 'a live host, read over one ssh session with read-only commands' },
      { name: 'port', type: 'string', value: 'N', help: "--ssh: the host's SSH port" },
      { name: 'identity', type: 'string', value: 'FILE', complete: 'file', help: '--ssh: the private key to log in with' },
      { name: 'known-hosts', type: 'string', value: 'FILE', complete: 'file', help: "--ssh: a known_hosts file holding the host's key (checked strictly; never asked)" },
      { name: 'ssh-option', type: 'string', multiple: true, value: 'KEY=VALUE', help: '--ssh: another ssh -o option, e.g. ProxyJump=bastion (repeatable)' },
      { name: 'phase', type: 'string', value: 'PHASE', help: 'the phase after which the root is (default base): check --against checks the phases after it' },
      { name: 'expect', type: 'string', value: 'CONTRACT', complete: 'file', help: "also look for this contract's facts the bounded listing leaves out" },
      { name: 'exclude', type: 'string', multiple: true, value: 'PATTERN', help: 'leave out these paths and what is under them (* one name; repeatable), besides the volatile ones' },
      { name: 'include', type: 'string', multiple: true, value: 'PATTERN', help: 'keep these paths although excluded (by default: /tmp, /var/tmp, /run, /proc, /sys, /dev, /root and /home/* contents, /var/log, /var/cache)' },
      { name: 'out', type: 'string', short: 'o', value: 'FILE', complete: 'file', help: 'write the contract there (and its typed module beside a .json) instead of stdout' },
    ],
    notes: 'imgc contract diff EXPECTED PROBE exits 1 when the root lacks a fact of EXPECTED or has it with other details.',
  },
  {
    name: 'schema',
    args: '',
    summary: "print the IR's JSON Schema (or the contract's)",
    flags: [
      { name: 'contract', type: 'boolean', help: "the contract's JSON Schema instead of the IR's" },
      { name: 'build-events', type: 'boolean', help: "the JSON Schema of imgc build --format json's events instead of the IR's" },
      { name: 'build-plan', type: 'boolean', help: "the JSON Schema of imgc build --plan --format json instead of the IR's" },
      { name: 'variants', type: 'boolean', help: "the JSON Schema of imgc variants --format json instead of the IR's" },
    ],
  },
  { name: 'docs', args: '', summary: 'print the stdlib reference (Markdown)', flags: [] },
  {
    name: 'build',
    args: 'FILE',
    summary: 'build the image for real, as root: base, phases in a chroot, artifacts, verify',
    flags: [
      { name: 'target', type: 'string', short: 't', choices: ['shell', 'ansible'], help: 'what runs the phases in the root (default shell)' },
      { name: 'out', type: 'string', short: 'o', value: 'DIR', complete: 'dir', help: 'where the artifacts go (default out/<image>/build)' },
      { name: 'from-tar', type: 'string', value: 'FILE', complete: 'file', help: 'start from this root tarball instead of debootstrap' },
      { name: 'from-dir', type: 'string', value: 'DIR', complete: 'dir', help: 'start from a copy of this root directory' },
      { name: 'no-cache', type: 'boolean', help: 'run every phase again (the base tarball is still reused)' },
      { name: 'keep-root', type: 'boolean', help: 'keep the work root for a look afterwards' },
      { name: 'until', type: 'string', value: 'PHASE', help: 'stop after this phase: the phases after it (artifacts, verify) are not run; its root is cached, and kept with --keep-root' },
      { name: 'plan', type: 'boolean', help: 'say what the build would do (each phase cached or run, and why; the artifacts kept or made; the tools) and do none of it (docs/build-plan.md)' },
      { name: 'format', type: 'string', choices: ['text', 'json'], help: 'json: one event per line on stdout instead of the display (imgc schema --build-events); with --plan, the plan as one JSON document (imgc schema --build-plan)' },
      allFlag,
      ...loadFlags,
    ],
    notes: 'Exit: 0 built, 1 a step or verify failed, 2 usage. With --plan: 0 the build could start, 1 it would stop before its first phase (the plan says why), 2 usage.',
  },
  {
    name: 'verify',
    args: 'FILE',
    summary: 'check every fact the definition promises against a built root or image',
    flags: [
      ...rootOrImage,
      { name: 'boot', type: 'string', value: 'DISK', complete: 'file', help: 'boot a bootable disk in QEMU and check the runtime facts on the running node' },
      { name: 'boot-timeout', type: 'string', value: 'SECONDS', help: 'how long the booted node may take to reach multi-user and report (--boot)' },
      { name: 'console', type: 'string', value: 'FILE', complete: 'file', help: "--boot: keep the node's serial console there (default: kept in a temporary folder only when a check fails, and named)" },
      { name: 'format', type: 'string', choices: ['text', 'json'], help: 'how to print the result' },
      ...loadFlags,
    ],
    notes: 'Exit: 0 all hold, 1 some do not, 2 usage.',
  },
  { name: 'help', args: '[COMMAND]', summary: 'what imgc does, or what one command takes', flags: [] },
  { name: 'completion', args: 'bash|zsh|fish', summary: 'print a shell completion script (e.g. imgc completion bash > /etc/bash_completion.d/imgc)', flags: [] },
];

export const commandNamed = (name: string): Command | undefined => commands.find((c) => c.name === name);

/** The flags `command` accepts, its own and the global ones. */
export const flagsOf = (command: Command): readonly Flag[] => [...command.flags, ...globalFlags];

/** The command named, or a usage error with the closest name. */
export const findCommand = (name: string): Command => {
  const c = commandNamed(name);
  if (c) return c;
  const guess = didYouMean(name, commands.map((k) => k.name));
  throw new UsageError(`unknown command '${name}'${guess ? `; did you mean '${guess}'?` : ''} (imgc help lists them)`);
};

/** The option name of an argument such as `--out=x`, `--out` or `-o`; undefined for a positional. */
const optionName = (arg: string): string | undefined => (arg.startsWith('--') ? arg.slice(2).split('=')[0] : arg.startsWith('-') && arg.length > 1 ? arg.slice(1, 2) : undefined);

/** Refuses any flag `command` does not take, saying which command does, or what was probably meant. */
const rejectForeign = (command: Command, argv: readonly string[]): void => {
  const own = flagsOf(command);
  for (const arg of argv) {
    if (arg === '--') return;
    const name = optionName(arg);
    if (name === undefined || own.some((f) => f.name === name || f.short === name)) continue;
    const shown = arg.startsWith('--') ? `--${name}` : `-${name}`;
    const elsewhere = commands.filter((c) => c.flags.some((f) => f.name === name || f.short === name)).map((c) => c.name);
    const guess = arg.startsWith('--') ? didYouMean(name, own.map((f) => f.name)) : undefined;
    const hint = guess ? `; did you mean --${guess}?` : elsewhere.length ? ` (it is an option of ${elsewhere.join(', ')})` : '';
    throw new UsageError(`${command.name} does not take ${shown}${hint} (imgc help ${command.name} lists what it takes)`);
  }
};

export type FlagValues = Record<string, string | boolean | string[] | undefined>;

/** argv after the command name, parsed against that command's flags only. */
export const parseCommand = (command: Command, argv: readonly string[]): { values: FlagValues; positionals: string[] } => {
  rejectForeign(command, argv);
  const options: NonNullable<ParseArgsConfig['options']> = {};
  for (const f of flagsOf(command)) options[f.name] = { type: f.type, ...(f.short ? { short: f.short } : {}), ...(f.multiple ? { multiple: true } : {}) };
  let parsed;
  try {
    parsed = parseArgs({ args: [...argv], options, allowPositionals: true, strict: true });
  } catch (e) {
    // Node's own words name the option; they are the rest of the message.
    throw new UsageError(`${command.name}: ${(e as Error).message.replace(/\. To specify a positional argument.*$/s, '')}`);
  }
  const values = parsed.values as FlagValues;
  for (const f of flagsOf(command)) {
    const v = values[f.name];
    if (f.choices && typeof v === 'string' && !f.choices.includes(v)) {
      const guess = didYouMean(v, f.choices);
      throw new UsageError(`--${f.name} must be one of ${f.choices.join(', ')} (got '${v}')${guess ? `; did you mean '${guess}'?` : ''}`);
    }
  }
  return { values, positionals: parsed.positionals };
};

const flagLabel = (f: Flag) => `${f.short ? `-${f.short}, ` : '    '}--${f.name}${f.type === 'string' ? ` ${f.choices ? f.choices.join('|') : (f.value ?? 'VALUE')}` : ''}`;

const columns = (rows: [string, string][], indent: string) => {
  const width = Math.min(34, Math.max(...rows.map(([a]) => a.length)));
  return rows.map(([a, b]) => (a.length > width ? `${indent}${a}\n${indent}${' '.repeat(width)}  ${b}` : `${indent}${a.padEnd(width)}  ${b}`)).join('\n');
};

/** `imgc help COMMAND` and `imgc COMMAND --help`. */
export const commandHelp = (c: Command): string =>
  [
    `Usage: imgc ${c.name}${c.args ? ` ${c.args}` : ''}${c.flags.length ? ' [options]' : ''}`,
    '',
    `${c.summary[0]!.toUpperCase()}${c.summary.slice(1)}.`,
    ...(['check', 'compile', 'explain', 'ir', 'variants'].includes(c.name) ? ["FILE defaults to imgc.toml's `definition` in the current directory."] : []),
    '',
    'Options:',
    columns(flagsOf(c).map((f) => [flagLabel(f), f.help]), '  '),
    ...(c.flags.some((f) => f.name === 'var')
      ? ['', 'Variable values, highest first: --var, then --var-file (the last file first), IMGC_VAR_<NAME>, imgc.toml [vars], the default.']
      : []),
    ...(c.notes ? ['', c.notes] : []),
    '',
  ].join('\n');

/** `imgc help` and `imgc --help`. */
export const overviewHelp = (version: string): string =>
  [
    `imgc ${version} — typed image definitions, checked before anything runs`,
    '',
    'Usage: imgc COMMAND [options]',
    '',
    'Commands:',
    columns(commands.map((c) => [`${c.name}${c.args ? ` ${c.args}` : ''}`, c.summary]), '  '),
    '',
    '`imgc help COMMAND` or `imgc COMMAND --help` lists what a command takes.',
    '-V, --version prints the version. Exit codes: 0 clean, 1 contract errors (or a failed build), 2 usage or load errors.',
    '',
  ].join('\n');
