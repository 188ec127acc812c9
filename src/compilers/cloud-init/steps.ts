// What each placed step becomes: an entry of its module's list, or runcmd
// (bootcmd) entries `[imgc_helper, ARG…]`. Values go through quote.ts.
import type { Hook, Image, SourceLocation } from '../../ir/schema.js';
import { fn, type HelperName } from './helpers.js';
import type { Call } from '../../emit/cloud-init/calls.js';
import type { Placed, RootStep, Stage } from './plan.js';
import { json, str } from '../../emit/cloud-init/quote.js';
import { hasExpansionChars, LITERAL_NOTE, words } from '../../emit/shell/quote.js';
import { seq, type Item, type Node } from '../../emit/cloud-init/yaml.js';
import { summary } from '../summary.js';
import { isHook, kindOf } from '../../steps/index.js';
import type { CloudInitContext } from '../../steps/kind.js';
import { rendering } from '../renderings.js';
import { hookResult, requestTemplate } from '../hook-request.js';

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
  /** Shell functions of runcmd's first entry after the helpers: phases' post hooks with result failed. */
  readonly failedHooks: string[];
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
  failedHooks: [],
});

export interface StepContext extends CloudInitContext {
  readonly ir: Image;
}

/**
 * The request of a hook (src/compilers/hook-request.ts) around its run-time
 * values, as imgc_body (helpers.ts) takes them: `prefix ["HOSTNAME"] middle
 * "TIMESTAMP" suffix`. Cloud-init runs on the node it boots: the request is
 * for that host.
 */
export const bodyParts = (ir: Image, phase: string, when: 'pre' | 'post', failed = false): [string, string, string] => {
  const failure = failed ? { message: failedMessage(phase) } : {};
  const { parts, holes } = requestTemplate({ image: ir.name, phase, when, result: hookResult(when, failed), onHosts: true, ...failure }, json);
  // imgc_body fills exactly these holes; a field list that needs others needs a new imgc_body.
  if (holes.join() !== 'hosts,timestamp') throw new Error(`internal: cloud-init's imgc_body fills hosts and the timestamp, not ${holes.join(', ')}`);
  const [prefix = '', middle = '', suffix = ''] = parts;
  return [prefix, middle, suffix];
};

/** runcmd stops at the failed entry: what failed is in cloud-init's log, which the message names. */
const failedMessage = (phase: string): string => `a step of phase ${phase} failed, and runcmd stopped there: see /var/log/cloud-init-output.log on the node`;

const where = (loc: SourceLocation | undefined): string => (loc ? ` (${loc.file}:${loc.line})` : '');

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
  `${p.step.id}${where(p.step.loc)}: ${summary(p.step, 'cloudInit')}`,
  ...(p.demoted ? [`${stageName[p.stage]}, not ${stageName[p.demoted.from]}: it runs after ${p.demoted.after.step.id} (${stageName[p.demoted.after.stage]})`] : []),
];

/** A list-form entry: plain words in flow style when they fit on a line. */
const argvNode = (argv: readonly string[]): Node => seq(argv.map(str), { flow: true });

/** runcmd and bootcmd are each one script, a string entry a line of it: here shellcheck's note before the call it is about. */
const noted = (argv: readonly string[]): Node[] => (hasExpansionChars(argv) ? [str(LITERAL_NOTE), argvNode(argv)] : [argvNode(argv)]);

const call = (argv: readonly string[], ...helpers: HelperName[]): Call => ({ argv, helpers });

/** The runcmd calls of a root step (its kind's rendering) or hook (the frame's hook runner). */
const runCalls = (s: RootStep | Hook, ctx: StepContext, phase: string, failed = false): Call[] => {
  if (!isHook(s)) return rendering(kindOf(s).cloudInit, s, 'cloudInit').run(s, ctx);
  const a = s.action;
  if (a.type === 'script') return [call(['/bin/sh', '-ec', a.run])];
  const body = bodyParts(ctx.ir, phase, s.when, failed);
  return a.type === 'event'
    ? [call([fn('event'), a.target, ...body], 'event')]
    : [call([fn('webhook'), a.url, String(a.timeoutSeconds), String(a.retries), a.onFailure, ...body], 'webhook')];
};



/**
 * A shell function, for the script's first entry, that runs `hooks` (a
 * phase's post hooks) with result failed: what imgc_failing runs when a step
 * of the phase stops runcmd.
 */
export const failedHooksFunction = (name: string, hooks: readonly Hook[], ctx: StepContext, phase: string, out: Emission): string[] => {
  const calls = hooks.flatMap((h) => runCalls(h, ctx, phase, true));
  calls.forEach((k) => k.helpers.forEach((h) => out.runHelpers.add(h)));
  return [`# Phase ${phase}'s post hooks, when one of its steps failed.`, `${name}() {`, ...calls.map((k) => `  ${words(k.argv)}`), '}'];
};

/** A runcmd entry of the frame's own (no step's): `imgc_failing` arming or disarming a phase's failed post hooks. */
export const frameEntry = (out: Emission, argv: readonly string[], comment: string, helper: HelperName): void => {
  out.runHelpers.add(helper);
  out.runcmd.push({ value: argvNode(argv), comments: [comment] });
};

/** A command of runcmd that is no step's: a handler making a phase's changes take effect now. */
export const handlerEntry = (out: Emission, argv: readonly string[], comment: string): void => {
  out.runcmd.push({ value: argvNode(argv), comments: [comment] });
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
        calls.flatMap((k) => noted([fn('once'), s.id, ...k.argv])),
        out.bootcmd,
      );
      return;
    }
    case 'runcmd': {
      const calls = runCalls(s, ctx, p.phase.name);
      calls.forEach((k) => k.helpers.forEach((h) => out.runHelpers.add(h)));
      first(
        calls.flatMap((k) => noted(k.argv)),
        out.runcmd,
      );
      return;
    }
    default: {
      // A module's list: write_files (deferred or not), groups, users, packages.
      if (isHook(s)) throw new Error(`internal: a hook in ${p.stage}`);
      const list = { write_files: out.writeFiles, write_files_deferred: out.deferred, groups: out.groups, users: out.users, packages: out.packages }[p.stage];
      const r = rendering(kindOf(s).cloudInit, s, 'cloudInit');
      if (!r.entries) throw new Error(`internal: ${s.kind} in ${p.stage}`);
      first(r.entries(s, p.stage, ctx), list);
      return;
    }
  }
};
