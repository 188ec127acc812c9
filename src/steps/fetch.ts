// What the kinds that fetch a file by URL (download, archive) share: the
// URL's and the sum's fields, what fetching needs in the root, and the
// command a fetched file becomes.
import { z } from '../util/zod.js';
import { fact, parentDir, type Fact } from '../core/facts.js';
import { oneWord, oneWordMessage, urlOrReference } from '../core/fields.js';
import { pathDirs } from '../core/root.js';

/** A sha256 as hex (64 digits), or a variable reference that holds one when the output runs. */
export const Sha256 = z.string().regex(/^(?:[0-9a-f]{64}|\uE000var:[a-z][a-z0-9_]*\uE001)$/, 'a sha256 is 64 lower-case hex digits, or a variable holding them');
/** A URL of a download: one word, http(s) or a variable reference. */
export const DownloadUrl = urlOrReference(z.string().regex(oneWord, oneWordMessage).url());

/** What fetching by URL needs in the root when the build does not hand the file over: curl. */
export const fetchNeeds: readonly Fact[] = [fact('command', 'curl')];

/**
 * The command a file at `path` is: one directly in a PATH directory (kubectl
 * downloaded to /usr/local/bin), as the base's commands are found. A download
 * says so only with an executable mode (the owner's x bit); an archive's
 * declared paths keep the modes the archive gave them.
 */
export const commandAt = (path: string, mode?: string): Fact[] => {
  if (mode !== undefined && (parseInt(mode, 8) & 0o100) === 0) return [];
  return (pathDirs as readonly string[]).includes(parentDir(path)) ? [fact('command', path.slice(parentDir(path).length + 1))] : [];
};
