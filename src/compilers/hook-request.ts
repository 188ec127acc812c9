// The request a hook sends — a webhook's POST body, an event's JSON line — as
// one list of fields, in their order, which the shell, Ansible and cloud-init
// frames render (Packer runs the shell and Ansible frames' hooks). A field's
// value is known when compiling, or only where the hook runs; each target says
// how it obtains the latter, so the targets cannot drift apart on what is sent.
// docs/hooks.md describes the request for those who receive it.
import { lifecycle, type NodeState } from '../ir/lifecycle.js';

export type HookWhen = 'pre' | 'post';
export type HookResult = 'starting' | 'ok' | 'failed';

/** A hook's request, as the frame knows it when compiling. */
export interface HookRequest {
  readonly image: string;
  readonly phase: string;
  readonly when: HookWhen;
  readonly result: HookResult;
  /**
   * Whether the hook runs for nodes that exist: a runtime or decommission
   * output on live hosts, cloud-init on the node it boots. An image build
   * (chroot, Packer) has no node yet, and its request no `hosts`.
   */
  readonly onHosts: boolean;
  /** A failed request's message when the frame knows it at compile time (cloud-init's runcmd); else the running hook fills it in. */
  readonly message?: string;
}

export type JsonValue = string | number | boolean | null | readonly JsonValue[] | { readonly [k: string]: JsonValue };

/** The fields, in the order they are sent. */
export const requestFieldNames = ['image', 'phase', 'edge', 'hosts', 'when', 'timestamp', 'result', 'message'] as const;
export type RequestFieldName = (typeof requestFieldNames)[number];

/** The fields whose value only the running hook knows: each target renders these its own way. */
export type RunField = 'hosts' | 'timestamp' | 'message';

/** A field's value when the frame knows it at compile time, else the run-time field it stands for. */
type Source = { readonly known: JsonValue } | { readonly run: RunField };

interface FieldSpec {
  /** Whether the request has the field (absent fields are left out, not null). */
  readonly present: (r: HookRequest) => boolean;
  readonly source: (r: HookRequest) => Source;
}

const always = (): boolean => true;

/** The lifecycle edge (src/ir/lifecycle.ts) whose hooks a phase's are; a phase the definition added has none. */
export const phaseEdge = (phase: string): { from: NodeState; to: NodeState } | undefined => {
  const e = lifecycle.find((x) => x.phase === phase);
  return e && { from: e.from, to: e.to };
};

const specs: { readonly [K in RequestFieldName]: FieldSpec } = {
  image: { present: always, source: (r) => ({ known: r.image }) },
  phase: { present: always, source: (r) => ({ known: r.phase }) },
  // The node states the phase moves between: absent for a phase on no edge.
  edge: { present: (r) => phaseEdge(r.phase) !== undefined, source: (r) => ({ known: phaseEdge(r.phase) ?? null }) },
  // The names of the hosts the request is for, as the target knows them.
  hosts: { present: (r) => r.onHosts, source: () => ({ run: 'hosts' }) },
  when: { present: always, source: (r) => ({ known: r.when }) },
  // UTC, ISO-8601, whole seconds: when the hook runs.
  timestamp: { present: always, source: () => ({ run: 'timestamp' }) },
  result: { present: always, source: (r) => ({ known: r.result }) },
  // What failed, in the words of whatever ran the phase (or the frame's, when it knows them at compile time).
  message: { present: (r) => r.result === 'failed', source: (r) => (r.message !== undefined ? { known: r.message } : { run: 'message' }) },
};

/** A pre hook says the phase is starting; a post hook, how it ended. */
export const hookResult = (when: HookWhen, failed = false): HookResult => (failed ? 'failed' : when === 'pre' ? 'starting' : 'ok');

/** The names of the fields the request has, in order. */
export const requestFields = (r: HookRequest): RequestFieldName[] => requestFieldNames.filter((n) => specs[n].present(r));

/**
 * The request as JSON text with holes for its run-time values: `parts[0]`,
 * the value of `holes[0]` (as JSON), `parts[1]`, … The JSON writer is the
 * target's own (its quoting module's `json`).
 */
export const requestTemplate = (r: HookRequest, json: (v: unknown) => string): { parts: string[]; holes: RunField[] } => {
  // NUL cannot occur in the IR (assertCompilable refuses it), so the hole's
  // JSON text occurs only where the holes are.
  const hole = '\u0000';
  const holes: RunField[] = [];
  const body: Record<string, JsonValue> = {};
  for (const name of requestFields(r)) {
    const s = specs[name].source(r);
    if ('known' in s) body[name] = s.known;
    else {
      body[name] = hole;
      holes.push(s.run);
    }
  }
  return { parts: json(body).split(json(hole)), holes };
};
