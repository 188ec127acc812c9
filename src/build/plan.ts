// `imgc build --plan`: what a build would do, found out the way the build
// decides it, without doing any of it. It reads the cache (which base
// tarball and phase roots it has, and what each was made of), the output
// directory's reuse state and the host's tools; it takes no lock, creates no
// directory and writes no file, so it never waits for or blocks a build.
import path from 'node:path';
import type { Image, Phase, Step } from '../ir/schema.js';
import { isBuildArtifact, isBuildCheck } from '../ir/phases.js';
import { imageView, phaseKind } from '../ir/phases.js';
import { describeStep } from '../steps/index.js';
import { variablesIn } from '../core/variables.js';
import { haveCommand } from '../host/exec.js';
import { z } from '../util/zod.js';
import { artifactReuse } from './artifacts.js';
import { resolveBase, type BaseSource } from './base.js';
import { sourceDateEpoch } from './boot-step.js';
import { cacheDir, RootCache, type KeyInputs } from './cache.js';
import { baseIdentity, phaseKeyChain } from './keys.js';
import { missingSensitive, missingSensitiveMessage, type SensitiveValues } from './secrets.js';
import { readReuseState, runsInRoot } from './stages.js';
import { debianPackage, missingToolsMessage, requiredTools } from './tools.js';

const StepPlan = z.object({ id: z.string(), what: z.string() }).strict();
const ArtifactPlan = z
  .object({
    step: z.string(),
    format: z.enum(['dir', 'tar', 'ext4', 'raw', 'qcow2']),
    output: z.string(),
    /** `keep`: the last build's file is left in place; `make`: made again, `reason` says why. */
    status: z.enum(['keep', 'make']),
    reason: z.string().optional(),
  })
  .strict();

export const BuildPlan = z
  .object({
    image: z.string(),
    target: z.enum(['shell', 'ansible']),
    /** The output directory (absolute) and the cache the plan read. */
    out: z.string(),
    cache: z.string(),
    /** Phase 0. `given`: a root the user brings (--from-tar, --from-dir), laid down on every build. */
    base: z.object({ source: z.string(), status: z.enum(['cached', 'build', 'given']), key: z.string().optional(), reason: z.string() }).strict(),
    phases: z.array(
      z
        .object({
          name: z.string(),
          kind: z.enum(['root', 'artifact', 'verify']),
          /** `cached`: its root comes from the cache and none of its steps or hooks run. */
          status: z.enum(['cached', 'run']),
          /** The phase's cache key (root phases that are cached at all). */
          key: z.string().optional(),
          /** Why it runs: which input of its key changed, or why it has none. */
          reasons: z.array(z.string()),
          steps: z.array(StepPlan),
          artifacts: z.array(ArtifactPlan).optional(),
        })
        .strict(),
    ),
    /** What the build would write into the output directory (relative to it), and into the cache. */
    writes: z.array(z.string()),
    caches: z.array(z.string()),
    tools: z.array(z.object({ name: z.string(), package: z.string(), present: z.boolean() }).strict()),
    /** Why the build would stop before its first phase (the plan itself is complete). */
    blockers: z.array(z.string()),
  })
  .strict();
export type BuildPlan = z.infer<typeof BuildPlan>;
type PhasePlan = BuildPlan['phases'][number];

/** The plan's JSON Schema (draft 2020-12), printed by `imgc schema --build-plan`. */
export const buildPlanJsonSchema = (): Record<string, unknown> => ({
  ...z.toJSONSchema(BuildPlan, { target: 'draft-2020-12' }),
  $id: 'https://imgc.dev/schema/build-plan-v1.json',
  title: 'imgc build --plan --format json',
});

export interface PlanOptions {
  target: 'shell' | 'ansible';
  outDir: string;
  fromTar?: string;
  fromDir?: string;
  noCache?: boolean;
  env?: NodeJS.ProcessEnv;
  sensitive?: SensitiveValues;
}

const short = (key: string) => key.slice(0, 12);
const plural = (n: number, word: string) => `${n} ${word}${n === 1 ? '' : 's'}`;

/** Which inputs of a phase's key differ from those of the newest cached root of the same phase. */
const changedInputs = (now: KeyInputs, was: KeyInputs, phase: Phase, before: { phase: string; runs: boolean } | undefined): string[] => {
  const why: string[] = [];
  if (now.previous !== was.previous) {
    why.push(
      !before
        ? 'the base changed (another base tarball: made again, or another mirror, package list or --from-tar file)'
        : before.runs
          ? `the root it starts from is made again (phase ${before.phase} runs)`
          : `the root it starts from is another: phase ${before.phase}'s cached root is not the one its cached root was made from`,
    );
  }
  if (now.phase !== was.phase) {
    // Step ids are positions (customize.3.file): a step whose content is found anywhere in the old phase is unchanged (maybe moved).
    const before = new Set(Object.values(was.steps));
    const after = new Set(Object.values(now.steps));
    const named = (s: Step) => `${s.id} (${describeStep(s)})`;
    const fresh = [...phase.pre, ...phase.steps, ...phase.post].filter((s) => !before.has(now.steps[s.id]!));
    const changed = fresh.filter((s) => s.id in was.steps);
    const added = fresh.filter((s) => !(s.id in was.steps));
    const removed = Math.max(0, Object.values(was.steps).filter((h) => !after.has(h)).length - changed.length);
    if (changed.length) why.push(`steps changed: ${changed.map(named).join(', ')}`);
    if (added.length) why.push(`steps added: ${added.map(named).join(', ')}`);
    if (removed) why.push(`${plural(removed, 'step')} removed`);
    if (!fresh.length && !removed) why.push("the phase's own settings changed");
  }
  for (const name of [...new Set([...Object.keys(now.variables), ...Object.keys(was.variables)])].sort()) {
    if (!(name in was.variables)) why.push(`it uses variable '${name}' now`);
    else if (!(name in now.variables)) why.push(`it no longer uses variable '${name}'`);
    else if (now.variables[name] !== was.variables[name]) why.push(`variable '${name}' has another value`);
  }
  if (now.epoch !== was.epoch) why.push(`SOURCE_DATE_EPOCH changed (was ${was.epoch ?? 'unset'}, now ${now.epoch ?? 'unset'})`);
  if (now.imgc !== was.imgc) why.push(`imgc's version changed (was ${was.imgc}, now ${now.imgc})`);
  if (now.format !== was.format) why.push("the cache's format changed (a newer imgc)");
  return why;
};

/** What the plan knows about the base, and the identity the phase keys chain from. */
const planBase = async (ir: Image, opts: PlanOptions, cache: RootCache, blockers: string[]): Promise<{ plan: BuildPlan['base']; source?: BaseSource }> => {
  const origin = ir.base.origin;
  if (origin?.kind === 'definition' && !opts.fromTar && !opts.fromDir) {
    const reason = `the build makes the root of ${origin.file} after its phase '${origin.phase}' first (its own plan: imgc build --plan ${origin.file}), then starts from it`;
    return { plan: { source: `${origin.file} after phase '${origin.phase}'`, status: 'build', reason } };
  }
  let source: BaseSource;
  try {
    source = await resolveBase(ir.base, { ...(opts.fromTar ? { fromTar: opts.fromTar } : {}), ...(opts.fromDir ? { fromDir: opts.fromDir } : {}), ...(opts.env ? { env: opts.env } : {}) });
  } catch (e) {
    blockers.push((e as Error).message);
    return { plan: { source: ir.base.name, status: 'build', reason: (e as Error).message } };
  }
  if (source.kind !== 'debootstrap') return { source, plan: { source: source.describe, status: 'given', ...(source.key ? { key: source.key } : {}), reason: source.kind === 'tar' ? 'unpacked from the tarball' : 'copied from the directory' } };
  return cache.has('base', source.key)
    ? { source, plan: { source: source.describe, status: 'cached', key: source.key, reason: `the base tarball is in the cache (mirror ${source.mirror.uri})` } }
    : { source, plan: { source: source.describe, status: 'build', key: source.key, reason: `no base tarball for this suite, variant, package list and mirror (${source.mirror.uri}) in the cache: debootstrap lays it down, and it is cached` } };
};

/** What a build of `definition` would do, found out without doing it (see the top of this file). */
export const planBuild = async (definition: Image, opts: PlanOptions): Promise<BuildPlan> => {
  const ir = imageView(definition);
  const env = opts.env ?? process.env;
  const outDir = path.resolve(opts.outDir);
  const cache = new RootCache(cacheDir(env));
  const blockers: string[] = [];
  if (process.getuid?.() !== 0) blockers.push(`imgc build needs root (chroot, mount, file owners in the root); as root it reads root's cache, this plan read ${cache.dir}`);
  let epoch: number | undefined;
  try {
    epoch = sourceDateEpoch(env);
  } catch (e) {
    blockers.push((e as Error).message);
  }
  const unset = missingSensitive(ir, opts.sensitive ?? new Map());
  if (unset.length) blockers.push(missingSensitiveMessage(unset));

  const base = await planBase(ir, opts, cache, blockers);
  const src = base.source;
  const origin = ir.base.origin;
  const identity = src ? baseIdentity(src.key, src.key && cache.checksum('base', src.key), src.kind) : undefined;
  const chain = phaseKeyChain(ir, identity, opts.target, epoch);
  const caches: string[] = base.plan.status === 'build' && src ? [`the base tarball (${short(src.key!)})`] : [];

  // As the build's resume point: the last root phase of the leading run whose root the cache has.
  let resume = -1;
  if (!opts.noCache) {
    for (let i = 0; i < ir.phases.length && phaseKind(ir.phases[i]!) === 'root'; i++) {
      const k = chain.get(ir.phases[i]!);
      if (k && cache.has('phase', k.key)) resume = i;
    }
  }
  const entries = cache.phaseEntries();
  const previousState = readReuseState(outDir);
  const previous = previousState ? { dir: outDir, state: previousState } : undefined;
  // The cached root the work root is while nothing ran in it (artifacts made from it can be kept), and what changes it otherwise.
  let rootId = resume >= 0 ? cache.id('phase', chain.get(ir.phases[resume]!)!.key) : undefined;
  let rootNote = resume >= 0 ? undefined : 'the root is laid down from the base';
  // The root phase before the one at hand, and whether it runs.
  let before: { phase: string; runs: boolean } | undefined;
  let rootKeyed = resume >= 0;

  const whyRun = (p: Phase, k: { key: string; inputs: KeyInputs } | undefined): string[] => {
    if (opts.noCache) return ['--no-cache'];
    if (!src) return [origin?.kind === 'definition' ? "the base is made first (another definition's root): the phases after it are keyed from it once it is made" : 'the base cannot be laid down (above)'];
    if (src.kind === 'dir') return ['--from-dir: the phase cache is not used (a directory has no cheap key)'];
    if (identity === undefined) return ['the base is laid down fresh: the phases after it are keyed from its tarball once it is made'];
    if (!k) {
      const secret = ir.phases.slice(0, ir.phases.indexOf(p) + 1).flatMap((q) => variablesIn(ir, q)).find((v) => v.sensitive);
      return [`${secret ? `the sensitive variable '${secret.name}' is used here or in an earlier phase` : 'an earlier phase is not cached'}: its root may hold the value, so it is never cached`];
    }
    const prior = entries.find((e) => e.image === ir.name && e.phase === p.name && e.target === opts.target);
    if (!prior) {
      const other = entries.find((e) => e.image === ir.name && e.phase === p.name);
      return [other ? `the cache has its root from a build with --target ${String(other.target)} only` : `no root of phase ${p.name} of '${ir.name}' is in the cache`];
    }
    if (!prior.inputs) return ['the cached root of this phase was made from other inputs (by an imgc that did not record which)'];
    const why = changedInputs(k.inputs, prior.inputs, p, before);
    return why.length ? why : ['its root is no longer in the cache'];
  };

  const phases: PhasePlan[] = ir.phases.map((p, i) => {
    const kind = phaseKind(p);
    const steps = [...p.pre, ...p.steps, ...p.post].map((s: Step) => ({ id: s.id, what: describeStep(s) }));
    if (kind === 'root') {
      const k = chain.get(p);
      const keyed = k ? { key: k.key } : {};
      if (i <= resume || (k && !opts.noCache && cache.has('phase', k.key))) {
        if (i > resume) rootId = cache.id('phase', k!.key);
        before = { phase: p.name, runs: false };
        return { name: p.name, kind, status: 'cached', ...keyed, reasons: [i < resume && !(k && cache.has('phase', k.key)) ? `restored with the root after phase ${ir.phases[resume]!.name}` : 'its root is in the cache'], steps };
      }
      const reasons = whyRun(p, k);
      before = { phase: p.name, runs: true };
      rootNote = `phase ${p.name} runs`;
      rootId = undefined;
      rootKeyed = k !== undefined;
      if (k) caches.push(`the root after ${p.name} (${short(k.key)})`);
      return { name: p.name, kind, status: 'run', ...keyed, reasons, steps };
    }
    if (runsInRoot(p)) {
      rootId = undefined;
      rootKeyed = false;
      rootNote = `phase ${p.name}'s hooks or steps run in the root`;
    }
    if (kind === 'verify') return { name: p.name, kind, status: 'run', reasons: ['checks run on every build'], steps };
    const artifacts = p.steps
      .filter(isBuildArtifact)
      .map((s) => {
        const reuse = artifactReuse(s, rootId, previous);
        return { step: s.id, format: s.format, output: s.output, ...('kept' in reuse ? { status: 'keep' as const } : { status: 'make' as const, reason: rootId ? reuse.why : `${rootNote ?? 'the root is not a cached one'}: the root is new` }) };
      });
    return { name: p.name, kind, status: 'run', reasons: ['artifacts are made, or kept from the last build, on every build'], steps, artifacts };
  });

  const artifacts = phases.flatMap((p) => p.artifacts ?? []);
  const wantChecksums = ir.phases.some((p) => p.steps.some((s) => isBuildCheck(s) && s.check === 'checksums'));
  const writes = [
    'compiled/',
    'logs/',
    ...artifacts.filter((a) => a.status === 'make').map((a) => (a.format === 'dir' ? `${a.output}/` : a.output)),
    ...(artifacts.length ? ['manifest.json', 'sbom.spdx.json', ...(rootKeyed ? ['.imgc-artifacts.json'] : []), ...(wantChecksums ? ['SHA256SUMS'] : [])] : []),
  ];
  const names = requiredTools(ir, opts.target, { debootstrap: base.plan.status === 'build' && src?.kind === 'debootstrap' });
  const tools = await Promise.all(names.map(async (name) => ({ name, package: debianPackage(name), present: await haveCommand(name) })));
  const missing = tools.filter((t) => !t.present);
  if (missing.length) blockers.push(missingToolsMessage(missing.map((t) => t.name)));
  return { image: ir.name, target: opts.target, out: outDir, cache: cache.dir, base: base.plan, phases, writes, caches, tools, blockers };
};

/** The plan as the text `imgc build --plan` prints. */
export const formatPlan = (plan: BuildPlan, cwd: string): string => {
  const rel = (p: string) => path.relative(cwd, p) || '.';
  const lines = [`plan: build ${plan.image} with ${plan.target} into ${rel(plan.out)} (cache ${plan.cache})`];
  const b = plan.base;
  lines.push(`  phase 0 base: ${b.status === 'cached' ? 'cached' : b.status === 'given' ? 'given' : 'BUILD'}: ${b.source}${b.key ? ` (key ${short(b.key)})` : ''}: ${b.reason}`);
  plan.phases.forEach((p, i) => {
    const head = `  phase ${i + 1} ${p.name}: ${p.status === 'cached' ? 'cached' : 'RUN'}${p.key ? ` (key ${short(p.key)})` : ''}`;
    lines.push(`${head}: ${p.reasons.join('; ')}`);
    if (p.status === 'cached') lines.push(`      ${plural(p.steps.length, 'step')}, none runs`);
    else if (p.artifacts) for (const a of p.artifacts) lines.push(`      ${a.status === 'keep' ? 'keep' : 'make'} ${a.output} (${a.format})${a.reason ? `: ${a.reason}` : ''}`);
    else for (const s of p.steps) lines.push(`      ${s.id}: ${s.what}`);
  });
  lines.push(`writes into ${rel(plan.out)}: ${plan.writes.join(', ')}`);
  lines.push(`caches: ${plan.caches.length ? plan.caches.join(', ') : 'nothing new'}`);
  const missing = plan.tools.filter((t) => !t.present);
  lines.push(`tools: ${plan.tools.length - missing.length} of ${plan.tools.length} present${missing.length ? `; missing ${missing.map((t) => `${t.name} (${t.package})`).join(', ')}` : ''}`);
  for (const x of plan.blockers) lines.push(`the build would stop: ${x}`);
  lines.push('nothing was built, mounted or written: imgc build without --plan does it');
  return `${lines.join('\n')}\n`;
};
