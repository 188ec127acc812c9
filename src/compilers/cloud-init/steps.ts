// What each placed step becomes: an entry of its module's list, or runcmd
// (bootcmd) entries `[imgc_helper, ARG…]`. Values go through quote.ts.
import { aptKeyPath, aptSourcesPath, debSources } from '../../ir/apt.js';
import type { Image, SourceLocation, StepOf } from '../../ir/schema.js';
import { fn, type HelperName } from './helpers.js';
import { checkHelper } from '../shell/steps.js';
import { validatorFor } from '../validators.js';
import type { Call, PackageManager } from './package-managers.js';
import type { Hook, Placed, RootStep, Stage } from './plan.js';
import { bool, int, json, mode, normalMode, str } from '../../emit/cloud-init/quote.js';
import { entries, map, seq, type Item, type Node, type YMap } from '../../emit/cloud-init/yaml.js';
import { gist, summary, type Wording } from '../summary.js';
import { isRegistered, kindOf } from '../../steps/index.js';
import type { CloudInitContext } from '../../steps/kind.js';
import { rendering } from '../renderings.js';

export interface Emission {
  readonly bootcmd: Item[];
  readonly writeFiles: Item[];
  readonly deferred: Item[];
  readonly groups: Item[];
  readonly users: Item[];
  readonly packages: Item[];
  readonly runcmd: Item[];
  readonly runHelpers: Set<HelperName>;
  readonly bootHelpers: Set<HelperName>;
}

export const emptyEmission = (): Emission => ({
  bootcmd: [],
  writeFiles: [],
  deferred: [],
  groups: [],
  users: [],
  packages: [],
  runcmd: [],
  runHelpers: new Set(),
  bootHelpers: new Set(),
});

export interface StepContext extends CloudInitContext {
  readonly ir: Image;
}

/** The JSON body of a hook around its run-time timestamp: [prefix, suffix] of `prefix "TIMESTAMP" suffix`. */
export const bodyParts = (ir: Image, phase: string, when: 'pre' | 'post'): [string, string] => {
  // NUL cannot occur in the IR (assertCompilable refuses it), so the
  // placeholder's JSON text occurs exactly once.
  const placeholder = '\u0000';
  const text = json({ image: ir.name, phase, when, timestamp: placeholder, result: when === 'pre' ? 'starting' : 'ok' });
  const [prefix = '', suffix = ''] = text.split(json(placeholder));
  return [prefix, suffix];
};

const where = (loc: SourceLocation | undefined): string => (loc ? ` (${loc.file}:${loc.line})` : '');

/** The shared step summary, with cloud-init's wording where it runs things differently. */
const wording: Wording = {
  hook: (s) =>
    `${s.when} hook: ${
      s.description ??
      (s.action.type === 'script' ? `script: ${gist(s.action.run)}` : s.action.type === 'webhook' ? `webhook ${s.action.url} (on failure: ${s.action.onFailure})` : `event to ${s.action.target}`)
    }`,
};

const stageName: Record<Stage, string> = {
  bootcmd: 'bootcmd',
  write_files: 'write_files',
  groups: 'groups',
  users: 'users',
  packages: 'packages',
  write_files_deferred: 'write_files with defer',
  runcmd: 'runcmd',
};

const comments = (p: Placed): string[] => [
  `${p.step.id}${where(p.step.loc)}: ${summary(p.step, wording, 'cloudInit')}`,
  ...(p.demoted ? [`${stageName[p.stage]}, not ${stageName[p.demoted.from]}: it runs after ${p.demoted.after.step.id} (${stageName[p.demoted.after.stage]})`] : []),
];

/** A list-form entry: plain words in flow style when they fit on a line. */
const argvNode = (argv: readonly string[]): Node => seq(argv.map(str), { flow: true });

const call = (argv: readonly string[], ...helpers: HelperName[]): Call => ({ argv, helpers });

const m = (s: string | undefined): string => (s === undefined ? '' : normalMode(s));

/** The runcmd calls of a root step or hook. */
const runCalls = (s: RootStep | Hook, ctx: StepContext, phase: string): Call[] => {
  if (isRegistered(s)) return rendering(kindOf(s).cloudInit, s, 'cloudInit').run(s, ctx);
  switch (s.kind) {
    case 'group':
      return [call([fn('group'), s.name, ...(s.system ? ['--system'] : []), ...(s.gid !== undefined ? ['--gid', String(s.gid)] : [])], 'group')];
    case 'user': {
      const opts = [
        ...(s.system ? ['--system'] : []),
        ...(s.uid !== undefined ? ['--uid', String(s.uid)] : []),
        ...(s.groups.length ? ['--groups', s.groups.join(',')] : []),
        ...(s.home !== undefined ? ['--create-home', '--home-dir', s.home] : ['--no-create-home']),
        ...(s.shell !== undefined ? ['--shell', s.shell] : []),
      ];
      return [
        call([fn('user'), s.name, s.primaryGroup ?? '', ...opts], 'user'),
        ...s.groups.map((g) => call([fn('member'), s.name, g], 'member')),
        ...(s.shell !== undefined ? [call([fn('userShell'), s.name, s.shell], 'userShell')] : []),
      ];
    }
    case 'directory':
      return [call([fn('dir'), s.path, m(s.mode), s.owner ?? '', s.group ?? ''], 'dir')];
    case 'file': {
      const argv = [fn('file'), s.path, m(s.mode), s.owner ?? '', s.group ?? '', s.content];
      const check = validatorFor(s.path);
      return [check ? call([fn('checked'), checkHelper[check].fn, ...argv], 'checked', checkHelper[check].helper, 'file') : call(argv, 'file')];
    }
    case 'symlink':
      return [call([fn('symlink'), s.path, s.target], 'symlink')];
    case 'packages': {
      const pm = ctx.packageManager();
      return [s.action === 'install' ? pm.install(s.names) : pm.remove(s.names)];
    }
    case 'aptRepository': {
      const keyPath = aptKeyPath(s) ?? '';
      const key: Call[] =
        s.key !== undefined
          ? [call([fn('parent'), keyPath], 'parent'), call([fn('file'), keyPath, '0644', '', '', s.key], 'file')]
          : s.keyUrl !== undefined
            ? [call([fn('fetch'), s.keyUrl, keyPath], 'fetch')]
            : [];
      return [...key, call([fn('file'), aptSourcesPath(s.name), '0644', '', '', debSources(s)], 'file'), ctx.packageManager().sourcesChanged];
    }
    case 'service':
      return [s.enabled ? call([fn('enable'), s.name], 'enable') : call([fn('disable'), s.name], 'disable')];
    case 'sysctl':
      return [call([fn('sysctl'), s.file, s.key, s.value], 'sysctl')];
    case 'kernelModule':
      return [call([fn('module'), s.file, s.name], 'module')];
    case 'command':
      return [s.creates !== undefined ? call([fn('creates'), s.creates, '/bin/sh', '-ec', s.run], 'creates') : call(['/bin/sh', '-ec', s.run])];
    case 'hook': {
      const a = s.action;
      if (a.type === 'script') return [call(['/bin/sh', '-ec', a.run])];
      const [prefix, suffix] = bodyParts(ctx.ir, phase, s.when);
      return a.type === 'event'
        ? [call([fn('event'), a.target, prefix, suffix], 'event')]
        : [call([fn('webhook'), a.url, String(a.timeoutSeconds), String(a.retries), a.onFailure, prefix, suffix], 'webhook')];
    }
  }
};

/** `owner: user:group` as write_files takes it; root where only the group is given. */
const owner = (o: string | undefined, g: string | undefined): Node | undefined =>
  o === undefined && g === undefined ? undefined : str(g === undefined ? o! : `${o ?? 'root'}:${g}`);

const writeFile = (path: string, content: string, attrs: { mode?: string | undefined; owner?: string | undefined; group?: string | undefined }, defer: boolean): YMap =>
  map({
    path: str(path),
    content: str(content),
    owner: owner(attrs.owner, attrs.group),
    permissions: attrs.mode !== undefined ? mode(attrs.mode) : undefined,
    defer: defer ? bool(true) : undefined,
  });

const userEntry = (s: StepOf<'user'>, ctx: StepContext): YMap => {
  // cloud-init runs useradd with -m unless no_create_home or system (then -M).
  const primary = s.primaryGroup ?? (ctx.groupExists(s.name) ? s.name : undefined);
  return entries([
    { key: 'name', value: str(s.name) },
    primary !== undefined ? { key: 'primary_group', value: str(primary) } : undefined,
    s.groups.length ? { key: 'groups', value: seq(s.groups.map(str), { flow: true }) } : undefined,
    s.home !== undefined ? { key: 'homedir', value: str(s.home) } : undefined,
    s.shell !== undefined ? { key: 'shell', value: str(s.shell) } : undefined,
    s.system ? { key: 'system', value: bool(true) } : undefined,
    s.home === undefined ? { key: 'no_create_home', value: bool(true) } : undefined,
    s.uid !== undefined ? { key: 'uid', value: int(s.uid) } : undefined,
    { key: 'lock_passwd', value: bool(true) },
  ]);
};

/** Adds a placed step to the lists of its stage. */
export const emit = (p: Placed, ctx: StepContext, out: Emission): void => {
  const c = comments(p);
  const s = p.step;
  const first = (nodes: Node[], list: Item[]): void => nodes.forEach((value, i) => list.push(i === 0 ? { value, comments: c } : { value }));
  switch (p.stage) {
    case 'bootcmd': {
      const calls = runCalls(s, ctx, p.phase.name);
      calls.forEach((k) => k.helpers.forEach((h) => out.bootHelpers.add(h)));
      out.bootHelpers.add('once');
      first(
        calls.map((k) => argvNode([fn('once'), s.id, ...k.argv])),
        out.bootcmd,
      );
      return;
    }
    case 'runcmd': {
      const calls = runCalls(s, ctx, p.phase.name);
      calls.forEach((k) => k.helpers.forEach((h) => out.runHelpers.add(h)));
      first(
        calls.map((k) => argvNode(k.argv)),
        out.runcmd,
      );
      return;
    }
    case 'write_files':
    case 'write_files_deferred': {
      const defer = p.stage === 'write_files_deferred';
      const list = defer ? out.deferred : out.writeFiles;
      if (s.kind === 'file') first([writeFile(s.path, s.content, s, defer)], list);
      else if (s.kind === 'aptRepository')
        first(
          [
            ...(s.key !== undefined ? [writeFile(aptKeyPath(s) ?? '', s.key, { mode: '0644' }, defer)] : []),
            writeFile(aptSourcesPath(s.name), debSources(s), { mode: '0644' }, defer),
          ],
          list,
        );
      else throw new Error(`internal: ${s.kind} in write_files`);
      return;
    }
    case 'groups':
      if (s.kind !== 'group') throw new Error(`internal: ${s.kind} in groups`);
      first([str(s.name)], out.groups);
      return;
    case 'users':
      if (s.kind !== 'user') throw new Error(`internal: ${s.kind} in users`);
      first([userEntry(s, ctx)], out.users);
      return;
    case 'packages':
      if (s.kind !== 'packages' || s.action !== 'install') throw new Error(`internal: ${s.kind} in packages`);
      first(s.names.map(str), out.packages);
      return;
  }
};
