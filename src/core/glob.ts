// Path patterns of the remove and truncate steps: POSIX sh globs (`*`, `?`,
// `[...]`) in the last segment only, matched the way sh matches them: no
// segment crosses a `/`, and a leading `.` is matched only by a pattern that
// starts with one. The checker and the targets read them the same way.

/** Whether a path holds a glob character. */
export const isGlob = (path: string): boolean => /[*?[]/.test(path);

const escape = (c: string): string => (/[\\^$.*+?()[\]{}|/]/.test(c) ? `\\${c}` : c);

/** The regular expression a pattern's last segment stands for. */
const segmentRegex = (seg: string): string => {
  let out = seg.startsWith('.') ? '' : '(?!\\.)';
  for (let i = 0; i < seg.length; i++) {
    const c = seg[i]!;
    if (c === '*') out += '[^/]*';
    else if (c === '?') out += '[^/]';
    else if (c === '[') {
      const end = seg.indexOf(']', i + 2);
      if (end < 0) out += '\\[';
      else {
        const body = seg.slice(i + 1, end);
        out += `[${body.startsWith('!') ? `^${body.slice(1)}` : body.replace(/\\/g, '\\\\')}]`;
        i = end;
      }
    } else out += escape(c);
  }
  return out;
};

/** Whether `path` is one the pattern names (a plain path names itself). */
export const globMatches = (pattern: string, path: string): boolean => {
  if (!isGlob(pattern)) return pattern === path;
  const slash = pattern.lastIndexOf('/');
  const dir = pattern.slice(0, slash + 1);
  if (!path.startsWith(dir) || path.slice(dir.length).includes('/')) return false;
  return new RegExp(`^${segmentRegex(pattern.slice(slash + 1))}$`).test(path.slice(dir.length));
};

/** The directory a pattern's matches lie in, and the last segment's pattern. */
export const globParts = (pattern: string): { dir: string; name: string } => {
  const slash = pattern.lastIndexOf('/');
  return { dir: slash === 0 ? '/' : pattern.slice(0, slash), name: pattern.slice(slash + 1) };
};
