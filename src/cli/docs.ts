// `imgc docs`: the stdlib reference, generated from the stdlib's own
// declarations and doc comments, so it cannot drift from the code. The README
// embeds this output (a test keeps them equal).
import type { ChildProcess } from 'node:child_process';
import { existsSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { isArrowFunction, isFunctionExpression, isFunctionTypeNode, isIdentifier, isVariableStatement, SyntaxKind, type Node, type SourceFile } from 'typescript/unstable/ast';
import { debian12Listed } from '../../stdlib/catalog.js';
import { debian12Archive } from '../../stdlib/archive/debian-12.js';
import { typedPackages } from '../../stdlib/archive/typed-packages.js';
import type { PackageCatalog } from '../dsl/types.js';
import { cacheDir, writeCached } from '../util/cache.js';

const here = path.dirname(fileURLToPath(import.meta.url));
/** The stdlib's sources in a checkout, else the shipped declarations. */
const stdlibFiles = (): string[] => {
  for (const dir of [path.resolve(here, '../../stdlib'), path.resolve(here, '../../../stdlib'), path.resolve(here, '../../../dist/stdlib')]) {
    const names = ['bases', 'modules', 'catalog'].map((n) => path.join(dir, `${n}.ts`));
    if (names.every(existsSync)) return names;
    const dts = ['bases', 'modules', 'catalog'].map((n) => path.join(dir, `${n}.d.ts`));
    if (dts.every(existsSync)) return dts;
  }
  throw new Error('cannot find the stdlib sources or declarations');
};

interface Entry {
  name: string;
  params: string;
  doc: string;
}

const entriesOf = (sf: SourceFile): Entry[] => {
  const out: Entry[] = [];
  const docOf = (node: Node) =>
    ((node.jsDoc ?? []) as readonly { comment?: string | readonly { text: string }[] }[])
      .map((d) => (typeof d.comment === 'string' ? d.comment : [...(d.comment ?? [])].map((c) => c.text).join('')))
      .join(' ')
      .replace(/\s+/g, ' ')
      .trim();
  for (const stmt of sf.statements) {
    const exported = ((stmt as { modifiers?: readonly Node[] }).modifiers ?? []).some((m) => m.kind === SyntaxKind.ExportKeyword);
    if (!exported || !isVariableStatement(stmt)) continue;
    for (const decl of stmt.declarationList.declarations) {
      if (!isIdentifier(decl.name)) continue;
      const init = decl.initializer;
      const fn = init && (isArrowFunction(init) || isFunctionExpression(init)) ? init : decl.type && isFunctionTypeNode(decl.type) ? decl.type : undefined;
      // A parameter typed by the function's own type parameter (`<const K extends KubernetesSource>(k8s: K)`) shows the constraint.
      const constraints = new Map((fn?.typeParameters ?? []).flatMap((t) => (t.constraint ? [[t.name.text, t.constraint.getText(sf)] as const] : [])));
      const param = (p: NonNullable<typeof fn>['parameters'][number]) => {
        const bound = p.type && constraints.get(p.type.getText(sf));
        return (bound ? `${p.name.getText(sf)}${p.questionToken ? '?' : ''}: ${bound}` : p.getText(sf)).replace(/\s+/g, ' ');
      };
      const params = fn ? `(${fn.parameters.map(param).join(', ')})` : '';
      out.push({ name: decl.name.text, params, doc: docOf(stmt) });
    }
  }
  return out;
};

const cell = (s: string) => s.replace(/\|/g, '\\|');

type Api = InstanceType<typeof import('typescript/unstable/sync').API>;

/** The API's tsc process, where this version of the (unstable) API keeps it. */
export const serverOf = (api: Api): ChildProcess | undefined => (api as unknown as { client?: { channel?: { child?: ChildProcess } } }).client?.channel?.child;

/**
 * Closes the API and waits for its tsc process to end. `close()` ends the
 * process's stdin and signals it at once, and tsc, signalled, sometimes printed
 * "context canceled" on the stderr it shares with imgc (4 runs of `imgc docs`
 * in 120). The end of its stdin alone stops it quietly; it is killed only if
 * it has not ended 5 s later.
 */
export const closeQuietly = async (api: Api): Promise<void> => {
  const server = serverOf(api);
  if (!server || server.exitCode !== null || server.signalCode !== null) return api.close();
  const signal = server.kill.bind(server);
  server.kill = () => true;
  const exited = new Promise<void>((resolve) => server.once('exit', () => resolve()));
  try {
    api.close();
  } finally {
    let bound: NodeJS.Timeout | undefined;
    await Promise.race([exited, new Promise<void>((resolve) => (bound = setTimeout(resolve, 5000)))]);
    clearTimeout(bound);
    if (server.exitCode === null && server.signalCode === null) signal('SIGKILL');
  }
};

/** The stdlib's files parsed by TypeScript 7, through its API (a tsc process, ended before this returns). */
const parsed = async (files: string[]): Promise<Map<string, Entry[]>> => {
  const { API } = await import('typescript/unstable/sync');
  const config = JSON.stringify({ compilerOptions: { noEmit: true, types: [], noResolve: true }, files });
  writeCached('tsconfig', 'stdlib-docs.json', config);
  const api = new API({ cwd: here });
  try {
    const project = api.updateSnapshot({ openProjects: [path.join(cacheDir(), 'tsconfig', 'stdlib-docs.json')] }).getProjects()[0];
    return new Map(files.map((f) => [f, project?.program.getSourceFile(f) ? entriesOf(project.program.getSourceFile(f)!) : []]));
  } finally {
    await closeQuietly(api);
  }
};

export const stdlibReference = async (): Promise<string> => {
  const sections: string[] = [];
  for (const [file, all] of await parsed(stdlibFiles())) {
    const entries = all.filter((e) => e.doc);
    if (!entries.length) continue;
    const title = path.basename(file).replace(/\.d\.ts$|\.ts$/, '');
    sections.push(
      [`#### ${title}`, '', '| export | parameters | what it is |', '|---|---|---|', ...entries.map((e) => `| \`${e.name}\` | ${e.params ? `\`${cell(e.params)}\`` : '—'} | ${cell(e.doc)} |`)].join('\n'),
    );
  }
  sections.push(catalogTable());
  return `${sections.join('\n\n')}\n`;
};

/** What the checker knows of Debian's packages: the typed ones by name, the facts listed by hand with them, and the archive. */
const catalogTable = (): string => {
  const rows = Object.entries(debian12Listed as PackageCatalog)
    .sort(([a], [b]) => a.localeCompare(b))
    .map(([name, f]) => {
      const parts = [
        ...(f.services ?? []).map((x) => `service ${x}`),
        ...(f.commands ?? []).map((x) => `command ${x}`),
        ...(f.paths ?? []).map((x) => `path ${x}`),
        ...(f.users ?? []).map((x) => `user ${x}`),
        ...(f.groups ?? []).map((x) => `group ${x}`),
        ...(f.repo ? [`needs repo ${f.repo}`] : []),
      ];
      return `| \`${name}\` | ${cell(parts.join(', ') || '—')} |`;
    });
  return [
    '#### apt packages the checker knows',
    '',
    `Every package of ${debian12Archive.describe}: its commands, systemd units and files under /etc and /opt, read from the archive's indexes by \`npm run gen:packages\` (\`stdlib/archive/\`). The builder's types know these: ${typedPackages.map((n) => `\`${n}\``).join(', ')}. Listed by hand, what the archive cannot say:`,
    '',
    '| package | provides |',
    '|---|---|',
    ...rows,
  ].join('\n');
};
