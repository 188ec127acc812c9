// What a runtime step may create on a live host (a user, a group, a path, a
// package, an enabled service, a line or a block of a file), each with the token the
// host's record keeps when the step really created it there: decommission
// undoes recorded creations only, in reverse order (src/compilers/runtime.ts).
// Step kinds say what they create (src/steps, `runtime`); the shell and
// ansible frames undo each kind of creation.

/** A path as a creation: a file, a directory, a symlink, or a file of lines a step owns one of. */
export type CreationPathType = 'file' | 'directory' | 'symlink' | 'lineFile';

export type Creation =
  /** A user; `home` is set when the step makes its home: a recorded home is removed with the user (userdel --remove). */
  | { readonly token: string; readonly kind: 'user'; readonly name: string; readonly home?: { readonly token: string; readonly path: string } }
  | { readonly token: string; readonly kind: 'group'; readonly name: string }
  | { readonly token: string; readonly kind: 'path'; readonly path: string; readonly type: CreationPathType }
  | { readonly token: string; readonly kind: 'package'; readonly name: string }
  | { readonly token: string; readonly kind: 'service'; readonly unit: string }
  /** The line of `file` whose key is `key` (text before `sep`; the whole line when sep is ''). */
  | { readonly token: string; readonly kind: 'line'; readonly file: string; readonly sep: '=' | ''; readonly key: string }
  /** The block of `file` between the marker lines `marker` makes ({mark} as BEGIN and END). */
  | { readonly token: string; readonly kind: 'block'; readonly file: string; readonly marker: string };

/** The begin and end marker lines of a block (`{mark}` as BEGIN and END): the blockInFile step's and its creation's. */
export const blockMarkers = (s: { readonly marker: string }): [string, string] => [s.marker.replaceAll('{mark}', 'BEGIN'), s.marker.replaceAll('{mark}', 'END')];
