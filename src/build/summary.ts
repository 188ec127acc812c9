// What a build reports: per step, per phase and as a whole. Its own file, as
// the display, the runner and the build's state all name it and none of them
// should import another for it.
import type { ArtifactRecord } from './artifacts.js';
import type { StepStatus } from './progress.js';

export interface StepRecord {
  id: string;
  status: StepStatus;
  ms: number;
}

export interface Recap {
  ok: number;
  changed: number;
  failed: number;
  unreachable: number;
}

export interface PhaseOutcome {
  steps: StepRecord[];
  changed: number;
  recap?: Recap;
}

export interface PhaseSummary {
  name: string;
  kind: 'root' | 'artifact' | 'verify';
  cached: boolean;
  ms: number;
  changed?: number;
  steps: StepRecord[];
  recap?: PhaseOutcome['recap'];
  notes?: string[];
}

export interface BuildSummary {
  image: string;
  target: string;
  ok: boolean;
  error?: string;
  base: { source: string; cached: boolean; ms: number; key?: string };
  phases: PhaseSummary[];
  artifacts: Array<ArtifactRecord & { ms: number }>;
  verify?: { checked: number; failed: number; ms: number };
  /** The boot check (v.boot()): how the node booted and how long it took from the build's start. */
  boot?: { disk: string; accel: 'kvm' | 'tcg'; checked: number; failed: number; bootMs: number; sinceStartMs: number };
  root?: string;
  /** Where this build's logs are: --out/logs once published with the artifacts, else its --out/runs/ID (absent when it stopped before it had any). */
  logs?: string;
  totalMs: number;
}
