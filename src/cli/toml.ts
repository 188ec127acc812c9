// TOML for imgc.toml and --var-file: parsed with @iarna/toml (loaded only when
// a file is read: most runs have none), errors and lines that name the file.
import { createRequire } from 'node:module';

const require = createRequire(import.meta.url);

/** `text` parsed; a syntax error becomes `fail('FILE:LINE:COL: message')`. */
export const parseToml = (text: string, file: string, fail: (message: string) => Error): unknown => {
  try {
    return (require('@iarna/toml') as typeof import('@iarna/toml')).parse(text);
  } catch (e) {
    const err = e as { line?: number; col?: number; message: string };
    throw fail(`${file}:${(err.line ?? 0) + 1}:${(err.col ?? 0) + 1}: ${err.message.split('\n')[0]}`);
  }
};

// The parser gives values, not their positions: messages find the line here.

/** The line (1-based) where `key` is set or its table starts, for messages. */
export const lineOf = (text: string, keyPath: readonly PropertyKey[]): number | undefined => {
  const lines = text.split('\n');
  const last = String(keyPath[keyPath.length - 1] ?? '');
  // The table the key is in ('' for the top level, 'compile.packer' for [compile.packer]), and the key as a table of its own.
  const table = keyPath.slice(0, -1).map(String).join('.');
  const whole = keyPath.map(String).join('.');
  let inTable = table === '';
  for (let i = 0; i < lines.length; i++) {
    const l = lines[i]!.trim();
    const header = /^\[([^\]]+)\]$/.exec(l);
    if (header) {
      const name = header[1]!.replace(/\s+/g, '');
      if (name === whole) return i + 1;
      inTable = name === table;
      continue;
    }
    if (inTable && new RegExp(`^"?${last.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}"?\\s*=`).test(l)) return i + 1;
  }
  return undefined;
};
