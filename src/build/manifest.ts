// Publishing a build that succeeded: the manifest, the SBOM, the reuse state
// and the checksums written beside the staged artifacts and compiled files,
// then all of it moved into the output directory together (./artifacts.ts's publish).
import { rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { factId } from '../core/facts.js';
import { irToJson } from '../ir/index.js';
import type { Fact, Image } from '../ir/schema.js';
import { publish, REUSE_STATE, sha256sums } from './artifacts.js';
import type { BaseSource } from './base.js';
import { sourceDateEpoch } from './boot-step.js';
import { sha256 } from './cache.js';
import { spdxOfRoot } from './sbom.js';
import type { PhaseResults } from './stages.js';
import type { BuildRun, Work } from './state.js';

/** The facts that hold after the last phase. */
const finalFacts = (ir: Image): Fact[] => {
  const facts = new Map<string, Fact>();
  for (const f of ir.base.provides) facts.set(factId(f), f);
  for (const p of ir.phases) {
    for (const s of [...p.pre, ...p.steps, ...p.post]) {
      for (const f of s.removes) facts.delete(factId(f));
      for (const f of s.provides) facts.set(factId(f), f);
    }
  }
  return [...facts.values()];
};

/** The manifest of the staged artifacts; `created` is SOURCE_DATE_EPOCH's time when set. */
const manifestOf = (run: BuildRun, base: BaseSource, results: PhaseResults, created: string) => {
  const { ir } = run;
  const { staged, verifyResult } = results;
  return {
    image: ir.name,
    target: run.opts.target,
    // Cut short with --until: the image built is the definition's phases through that one (its hash is of
    // those), and `verify` is null because no later phase ran, not because the definition has none.
    ...(run.opts.until !== undefined ? { until: run.opts.until } : {}),
    definition: { source: ir.source, sha256: sha256(irToJson(ir)) },
    base: { name: ir.base.name, suite: ir.base.suite, variant: ir.base.variant, include: ir.base.include, source: base.describe, ...(base.kind === 'debootstrap' ? { mirror: base.mirror.uri, arch: base.arch } : {}) },
    artifacts: staged.map((a) => ({ output: a.output, format: a.format, sha256: a.sha256, bytes: a.bytes, ...(a.compression ? { compression: a.compression } : {}), ...(a.size ? { size: a.size } : {}), step: a.step })),
    facts: finalFacts(ir),
    verify: verifyResult ? { checked: verifyResult.checked, failed: verifyResult.failures.length } : null,
    skipped: run.summary.phases.flatMap((p) => p.notes ?? []),
    sbom: 'sbom.spdx.json',
    created,
  };
};

/** Writes the manifest, SBOM, reuse state and checksums into staging, then publishes them with the staged artifacts and `also` (staged outputs: the logs). */
export const publishBuild = async (run: BuildRun, work: Work, base: BaseSource, results: PhaseResults, also: readonly string[]): Promise<void> => {
  const { ir, outDir } = run;
  const { staged, reuseState, wantChecksums } = results;
  const { staging } = work;
  // SOURCE_DATE_EPOCH: the manifest and SBOM say when the sources were, so two builds of them are the same bytes.
  const epoch = sourceDateEpoch(run.env);
  const created = new Date(epoch !== undefined ? epoch * 1000 : Date.now()).toISOString().replace(/\.\d{3}Z$/, 'Z');
  const manifest = manifestOf(run, base, results, created);
  writeFileSync(path.join(staging, 'manifest.json'), `${JSON.stringify(manifest, null, 2)}\n`);
  const sbom = spdxOfRoot({ image: ir.name, distro: ir.base.distro, created, id: manifest.definition.sha256, root: work.root });
  writeFileSync(path.join(staging, 'sbom.spdx.json'), `${JSON.stringify(sbom, null, 2)}\n`);
  // Artifacts kept from the last build are in place already.
  const outputs = ['compiled', ...also, ...staged.filter((a) => !a.reused).map((a) => a.output), 'manifest.json', 'sbom.spdx.json'];
  if (Object.keys(reuseState.artifacts).length) {
    writeFileSync(path.join(staging, REUSE_STATE), `${JSON.stringify(reuseState)}\n`);
    outputs.push(REUSE_STATE);
  } else rmSync(path.join(outDir, REUSE_STATE), { force: true });
  if (wantChecksums) {
    writeFileSync(path.join(staging, 'SHA256SUMS'), sha256sums(staged));
    outputs.push('SHA256SUMS');
  }
  await publish(staging, outDir, outputs);
  run.display.info(`${staged.length} artifact${staged.length === 1 ? '' : 's'} in ${path.relative(run.cwd, outDir) || '.'}: ${staged.map((a) => a.output).join(', ')}, manifest.json, sbom.spdx.json${wantChecksums ? ', SHA256SUMS' : ''}`);
};
