// Every command's first step: load the definition, check its contracts, and
// say what exit code the diagnostics mean.
import { checkImage } from '../check/checker.js';
import { hasErrors, sortDiagnostics, type Diagnostic } from '../check/diagnostic.js';
import { loadDefinition, type LoadedDefinition, type LoadOptions } from '../load/index.js';

export const EXIT = { ok: 0, contract: 1, usage: 2 } as const;

export interface Checked {
  loaded: LoadedDefinition;
  diagnostics: Diagnostic[];
  exit: number;
}

/** Exit 2 when the definition cannot be loaded, 1 for contract or type errors, else 0. */
export const loadAndCheck = async (file: string, opts: LoadOptions): Promise<Checked> => {
  const loaded = await loadDefinition(file, opts);
  const contract = loaded.ir ? checkImage(loaded.ir) : [];
  const diagnostics = sortDiagnostics([...loaded.diagnostics, ...contract]);
  const loadFailed = !loaded.ir || loaded.diagnostics.some((d) => d.code !== 'IMGC1001');
  const exit = loadFailed ? EXIT.usage : hasErrors(diagnostics) ? EXIT.contract : EXIT.ok;
  return { loaded, diagnostics, exit };
};
