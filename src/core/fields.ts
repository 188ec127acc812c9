// The field types of step schemas, shared by every step kind (src/steps): what
// a valid image may hold, whatever the target. Each value below ends up as a
// word of a command line, a line of a file or a file name, so a value outside
// these shapes is refused when the definition is loaded (IMGC1004), not by
// each backend.
import { z } from '../util/zod.js';
import { Fact, SourceLocation } from './facts.js';
import { Condition } from './conditions.js';
import { packageSpecPattern, packageSpecRule } from './packages.js';

export const Mode = z.string().regex(/^0?[0-7]{3,4}$/, 'mode is an octal string such as "0644"');
/** What Linux allows: a name (one path component) of 255 bytes, a path of 4,096 (NAME_MAX, PATH_MAX). */
export const NAME_MAX = 255;
export const PATH_MAX = 4096;

/** `/a/./b/../c//d/` as the kernel resolves it (no symlinks followed): `/a/c/d`, one spelling of it. */
export const normalPath = (p: string): string => {
  const parts: string[] = [];
  for (const seg of p.split('/')) {
    if (seg === '' || seg === '.') continue;
    if (seg === '..') parts.pop();
    else parts.push(seg);
  }
  return `/${parts.join('/')}`;
};

const bytes = (s: string): number => Buffer.byteLength(s, 'utf8');

/**
 * Why `p` is refused as a path of the image (IMGC2003), if it is: not written
 * as it resolves (the conflict checks compare spellings, so `/tmp/a/../f`
 * would hide a second writer of `/tmp/f`), or longer than the filesystem
 * allows (found here rather than by mktemp halfway through a build).
 */
export const pathProblem = (p: string): string | undefined => {
  const long = p.split('/').find((seg) => bytes(seg) > NAME_MAX);
  if (long !== undefined) return `a component of the path is ${bytes(long)} bytes long ('${long.slice(0, 24)}…'); a file name is at most ${NAME_MAX} bytes`;
  if (bytes(p) > PATH_MAX) return `the path is ${bytes(p)} bytes long; a path is at most ${PATH_MAX} bytes`;
  const normal = normalPath(p);
  return p === normal ? undefined : `'${p}' is not written as it resolves: write '${normal}'`;
};

/** An absolute path, written as it resolves, within the filesystem's limits (the diagnostics' code rides on the issue: ../check/validate.ts). */
export const AbsPath = z
  .string()
  .regex(/^\//, 'paths are absolute')
  .superRefine((p, ctx) => {
    if (!p.startsWith('/')) return;
    const problem = pathProblem(p);
    if (problem) ctx.addIssue({ code: 'custom', message: problem, params: { imgc: 'IMGC2003' } });
  });
export const Name = z.string().min(1);

/** useradd/groupadd's default NAME_REGEX on Debian, and its 32-character limit. */
export const AccountName = z
  .string()
  .max(32, 'user and group names are at most 32 characters')
  .regex(/^[a-z_][a-z0-9_-]*\$?$/, 'user and group names are lower-case letters, digits, "_" or "-", start with a letter or "_" and may end in "$"');
/** A package name of apt or dnf. */
export const PackageName = z.string().regex(/^[A-Za-z0-9][A-Za-z0-9+._-]*$/, 'package names are letters, digits, "+", ".", "_" or "-", starting with a letter or digit');
/**
 * A package name, optionally qualified by architecture and pinned to a
 * version: apt's `name[:arch][=version]`, the version possibly ending in `*`
 * (see src/core/packages.ts).
 */
export const PackageSpec = z.string().regex(packageSpecPattern, packageSpecRule);
/** A systemd unit name (a bare name means a .service). */
export const UnitName = z.string().regex(/^[A-Za-z0-9@._:\\-]+$/, 'service names are systemd unit names: letters, digits, "@", ".", "_", ":", "-" or "\\"');
/** One line of a file: no line break. */
export const OneLine = z.string().regex(/^[^\r\n]*$/, 'the value is written as one line of a file: no line breaks');
/** One field word of a deb822 .sources file. */
export const oneWord = /^\S+$/;
export const oneWordMessage = 'a deb822 field value is one word: no white space or line breaks';
export const Word = z.string().regex(oneWord, oneWordMessage);

/**
 * A URL, or a string that references variables (U+E000 "var:NAME" U+E001,
 * see ./variables.ts) and becomes a URL when the output runs: `${mirror}/debian`
 * is no URL until `mirror` has its value. Two branches, so a consumer checking
 * `format: uri` (ajv-formats) accepts the references and still checks the rest.
 */
export const urlOrReference = (url: z.ZodString) =>
  z.union([url, z.string().regex(/^[^\s]*$/, oneWordMessage).regex(/\uE000var:[a-z][a-z0-9_]*\uE001/, 'not a URL').describe('a URL with variable references, resolved when the output runs')], {
    // The URL branch's own message: a reference-free string is meant as a URL.
    error: (issue) => (issue.code === 'invalid_union' ? issue.errors[0]?.[0]?.message : undefined),
  });

/** Owner, group and mode of a path a step makes. */
export const Ownership = { owner: AccountName.optional(), group: AccountName.optional(), mode: Mode.optional() };

/** The fields every step has, whatever its kind: spread into each kind's schema. */
export const stepBase = {
  /** `<phase>.<n>.<kind>`: one word, it names the step in progress lines and logs. */
  id: z.string().regex(/^[A-Za-z0-9._-]+$/, 'step ids are one word of letters, digits, ".", "_" or "-"'),
  loc: SourceLocation.optional(),
  description: z.string().optional(),
  provides: z.array(Fact),
  requires: z.array(Fact),
  removes: z.array(Fact),
  /** The step runs only when all of these hold (`p.when(...)`, src/core/conditions.ts). */
  conditions: z.array(Condition).min(1).optional(),
};
