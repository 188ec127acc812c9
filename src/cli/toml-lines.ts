// Where a key is in a TOML file's text, for messages that name the line: the
// TOML parser gives values, not their positions.

/** The line (1-based) where `key` is set or its table starts, for messages. */
export const lineOf = (text: string, keyPath: readonly PropertyKey[]): number | undefined => {
  const lines = text.split('\n');
  const last = String(keyPath[keyPath.length - 1] ?? '');
  const table = keyPath.length > 1 ? String(keyPath[0]) : undefined;
  let inTable = table === undefined;
  for (let i = 0; i < lines.length; i++) {
    const l = lines[i]!.trim();
    const header = /^\[([^\]]+)\]$/.exec(l);
    if (header) {
      inTable = header[1]!.trim() === table;
      if (inTable && keyPath.length === 1 && header[1]!.trim() === last) return i + 1;
      continue;
    }
    if (inTable && new RegExp(`^"?${last.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}"?\\s*=`).test(l)) return i + 1;
  }
  return undefined;
};
