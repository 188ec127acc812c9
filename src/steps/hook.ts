// hook: an action before or after a phase (a script in the root, a webhook, an
// event). Hooks live in a phase's `pre` and `post`, not among its steps; each
// target's frame runs them with its own hook runner
// (src/compilers/<target>/hooks.ts), so no target renders them as steps.
import { z } from '../util/zod.js';
import { AbsPath, stepBase, urlOrReference } from '../core/fields.js';
import { clip, gist, declared, type DeclaredFacts } from './shared.js';
import type { StepKind, StepInput } from './kind.js';

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

type HookActionT = z.infer<typeof HookAction>;

export interface HookOptions extends DeclaredFacts {
  description?: string;
}

/** Hook actions; pass them to `.pre()` / `.post()` of any phase. */
export const script = (run: string): HookActionT => ({ type: 'script', run });
export const webhook = (
  url: string,
  opts: { timeoutSeconds?: number; retries?: number; onFailure?: 'fail' | 'warn' } = {},
): HookActionT => ({
  type: 'webhook',
  url,
  timeoutSeconds: opts.timeoutSeconds ?? 10,
  retries: opts.retries ?? 2,
  onFailure: opts.onFailure ?? 'fail',
});
export const event = (target: 'stdout' | `/${string}` = 'stdout'): HookActionT => ({ type: 'event', target });

const schema = z
  .object({ ...stepBase, kind: z.literal('hook'), when: z.enum(['pre', 'post']), action: HookAction })
  .strict();
type HookStep = z.infer<typeof schema>;

const frame = { elsewhere: (s: HookStep) => `${s.when} hook of its phase (the target's hook runner)` };

export const hook = {
  kind: 'hook',
  schema,
  parts: { ScriptHook, WebhookHook, EventHook, HookAction },
  make: (when: 'pre' | 'post', action: HookActionT, opts: HookOptions = {}): StepInput<HookStep> => ({
    kind: 'hook',
    when,
    action,
    ...(opts.description ? { description: opts.description } : {}),
    provides: declared(opts.provides),
    requires: declared(opts.requires),
    removes: declared(opts.removes),
  }),
  describe: (s) => `${s.when} hook (${s.action.type})`,
  comment: (s) =>
    s.description ??
    (s.action.type === 'script' ? `script in the root: ${gist(s.action.run)}` : s.action.type === 'webhook' ? `webhook ${s.action.url}` : `event to ${s.action.target}`),
  opaque: true,
  inRoot: false,
  chroot: { mounts: (s) => s.action.type === 'script', network: (s) => s.action.type === 'script' },
  variables: ['action.run', 'action.url'],

  shell: frame,
  ansible: frame,
  cloudInit: { ...frame, comment: (s) => cloudInitHookComment(s) },
  packer: {
    comment: (s) => (s.action.type === 'script' ? `script hook: ${clip(s.action.run)}` : s.action.type === 'webhook' ? `webhook ${s.action.url}` : `event to ${s.action.target}`),
  },

  runtime: (s) => (s.action.type === 'script' ? { creations: [], kept: 'a hook script cannot be inverted' } : { creations: [] }),
  verify: {},
} as const satisfies StepKind<HookStep>;

/** cloud-init's comment over a hook's entries: the phase edge first. */
export const cloudInitHookComment = (s: HookStep): string =>
  `${s.when} hook: ${
    s.description ??
    (s.action.type === 'script' ? `script: ${gist(s.action.run)}` : s.action.type === 'webhook' ? `webhook ${s.action.url} (on failure: ${s.action.onFailure})` : `event to ${s.action.target}`)
  }`;
