// The life of a node, from a base root to decommissioned, as data. Each edge
// says what carries it out and where its hooks run, so a definition's hooks
// line up with the states a fleet tool sees. `imgc explain --graph lifecycle`
// draws it.
import type { Image } from './types.js';

export const nodeStates = ['base', 'customized', 'provisioned', 'bootstrapped', 'ready', 'draining', 'decommissioned'] as const;
export type NodeState = (typeof nodeStates)[number];

export interface LifecycleEdge {
  from: NodeState;
  to: NodeState;
  /** What moves the node along this edge. */
  by: string;
  /** The definition's phase whose pre/post hooks fire on this edge, if any. */
  phase?: string;
  /** Where it runs: in the image build, on a live host, or outside imgc. */
  where: 'build' | 'runtime' | 'build or runtime' | 'cluster';
}

export const lifecycle: readonly LifecycleEdge[] = [
  { from: 'base', to: 'customized', by: 'phase customize', phase: 'customize', where: 'build' },
  { from: 'customized', to: 'provisioned', by: 'phase provision (imgc build, or imgc compile --runtime on an existing host)', phase: 'provision', where: 'build or runtime' },
  { from: 'provisioned', to: 'bootstrapped', by: 'phase bootstrap (imgc compile --runtime, on existing hosts only): kubeadm join', phase: 'bootstrap', where: 'runtime' },
  { from: 'bootstrapped', to: 'ready', by: 'kubelet reports Ready', where: 'cluster' },
  { from: 'ready', to: 'draining', by: 'phase drain (imgc compile --decommission, before the undo): kubectl drain, kubelet stopped', phase: 'drain', where: 'runtime' },
  { from: 'draining', to: 'decommissioned', by: 'imgc compile --decommission: the inverse of the runtime phases', phase: 'decommission', where: 'runtime' },
];

const label = (s: string) => s.replace(/"/g, "'").replace(/:/g, ' -');

/** Mermaid state diagram of the lifecycle, marking the edges this image has hooks on. */
export const lifecycleMermaid = (ir?: Image): string => {
  const hooked = (phase: string | undefined) => {
    const p = phase ? ir?.phases.find((x) => x.name === phase) : undefined;
    return p && p.pre.length + p.post.length > 0 ? ` [hooks ${p.pre.length} pre, ${p.post.length} post]` : '';
  };
  const lines = ['stateDiagram-v2', `  [*] --> base`];
  for (const e of lifecycle) lines.push(`  ${e.from} --> ${e.to}: ${label(e.by)}${hooked(e.phase)}`);
  lines.push('  decommissioned --> [*]');
  return `${lines.join('\n')}\n`;
};
