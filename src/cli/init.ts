// `imgc init [dir]`: a project that checks clean and type-checks in an editor.
import { execFileSync } from 'node:child_process';
import { copyFileSync, existsSync, mkdirSync, readFileSync, readdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { packageRoot } from '../util/package-root.js';

// The files copied as they are; templates/init/node-image.ts is type-checked with the repository.
const templates = path.join(packageRoot, 'templates', 'init');
const template = (name: string): string => readFileSync(path.join(templates, name), 'utf8');

const tsconfig = `${JSON.stringify(
  {
    compilerOptions: {
      target: 'ES2022',
      module: 'NodeNext',
      moduleResolution: 'NodeNext',
      lib: ['ES2022'],
      types: [],
      strict: true,
      noEmit: true,
      skipLibCheck: true,
      // A contract's typed module imports its JSON (imgc contract --out x.contract.json).
      resolveJsonModule: true,
    },
    include: ['*.ts'],
  },
  null,
  2,
)}\n`;

/** What a project's package.json needs for imgc: the dependency and the scripts. */
const projectNeeds = (imgc: ImgcInstall) => ({
  scripts: { check: 'imgc check', compile: 'imgc compile', 'check:sarif': 'imgc check --format sarif > imgc.sarif' },
  devDependencies: { imgc: imgc.spec, typescript: imgc.typescript },
});

/** The imgc that is running, as the scaffold's package.json should depend on it. */
export interface ImgcInstall {
  /** An npm dependency spec: `^0.1.0` from the registry, `file:vendor/imgc-0.1.0.tgz` for a copy in the project, else `file:` a checkout. */
  spec: string;
  /** The TypeScript this imgc is built against, for the editor. */
  typescript: string;
  /**
   * The tarball or package directory imgc was installed from, when that is
   * neither the registry nor a checkout: init puts a tarball of it in the
   * project's vendor/ and depends on that, so a clean clone's `npm ci` finds it.
   */
  vendorFrom?: string;
}

/** Where the scaffold keeps its copy of imgc, relative to the project. */
const vendorDir = 'vendor';

interface Lockfile {
  packages?: Record<string, { resolved?: string; link?: boolean; version?: string }>;
}

/**
 * How the project should get the imgc at `root` (its package directory): as
 * it was itself installed. Installed in a project's node_modules, npm's lockfile
 * there says whence (the registry, a tarball, a directory); anywhere else (a
 * checkout, a global install) it is the directory itself.
 */
export const imgcInstall = (root: string): ImgcInstall => {
  const pkg = JSON.parse(readFileSync(path.join(root, 'package.json'), 'utf8')) as { version: string; dependencies?: Record<string, string> };
  const typescript = pkg.dependencies?.['typescript'] ?? 'latest';
  const marker = `${path.sep}node_modules${path.sep}`;
  const at = root.lastIndexOf(marker);
  if (at >= 0) {
    const project = root.slice(0, at);
    const lock = path.join(project, 'package-lock.json');
    const entry = existsSync(lock) ? (JSON.parse(readFileSync(lock, 'utf8')) as Lockfile).packages?.[path.relative(project, root).split(path.sep).join('/')] : undefined;
    const resolved = entry?.resolved;
    if (resolved && /^https?:/.test(resolved)) return { spec: `^${pkg.version}`, typescript };
    if (resolved) {
      const from = path.resolve(project, resolved.replace(/^file:/, ''));
      const tarball = from.endsWith('.tgz') ? path.basename(from) : `imgc-${pkg.version}.tgz`;
      return { spec: `file:${vendorDir}/${tarball}`, typescript, vendorFrom: from };
    }
  }
  return { spec: `file:${root}`, typescript };
};

/** Files a project may already have: init merges into them instead of refusing. */
const mergeable = new Set(['package.json', '.gitignore', 'tsconfig.json']);

/** package.json with imgc's dependency and scripts added where the project has none of its own. */
const mergedPackageJson = (text: string, file: string, imgc: ImgcInstall): string => {
  let pkg: { scripts?: Record<string, string>; devDependencies?: Record<string, string>; dependencies?: Record<string, string> };
  try {
    pkg = JSON.parse(text) as typeof pkg;
  } catch (e) {
    throw new Error(`${file} is not valid JSON (${(e as Error).message}); fix it, then run imgc init again`);
  }
  const needs = projectNeeds(imgc);
  const scripts = { ...needs.scripts, ...pkg.scripts };
  const has = (name: string) => pkg.dependencies?.[name] !== undefined || pkg.devDependencies?.[name] !== undefined;
  const added = Object.fromEntries(Object.entries(needs.devDependencies).filter(([name]) => !has(name)));
  const indent = /^\{\n([ \t]+)"/.exec(text)?.[1] ?? 2;
  // The project's own `file:` dependency on imgc (npm install ../imgc/imgc-0.1.0.tgz) points outside it, where a clone has nothing: the vendored copy replaces it.
  const vendored = (deps: Record<string, string> | undefined) =>
    imgc.vendorFrom && deps?.['imgc']?.startsWith('file:') ? { ...deps, imgc: imgc.spec } : deps;
  const dependencies = vendored(pkg.dependencies);
  return `${JSON.stringify({ ...pkg, ...(dependencies ? { dependencies } : {}), scripts, devDependencies: vendored({ ...pkg.devDependencies, ...added }) }, null, indent)}\n`;
};

/** .gitignore with the scaffold's lines it lacks appended. */
const mergedGitignore = (text: string): string => {
  const have = new Set(text.split('\n').map((l) => l.trim()));
  const missing = template('gitignore').split('\n').filter((l) => l && !have.has(l));
  return missing.length ? `${text}${text.endsWith('\n') || !text ? '' : '\n'}${missing.join('\n')}\n` : text;
};

export interface Scaffolded {
  created: string[];
  updated: string[];
  /** Existing files left as they are, each with why. */
  kept: string[];
}

/**
 * Writes the scaffold into `dir`. A project's own package.json and .gitignore
 * get what imgc needs added, an existing tsconfig.json is kept; an existing
 * node-image.ts, imgc.toml or workflow is never overwritten: then nothing is
 * written at all.
 */
export const scaffold = (dir: string, imgc: ImgcInstall): Scaffolded => {
  const name = path.basename(path.resolve(dir)).toLowerCase().replace(/[^a-z0-9._-]/g, '-') || 'node-image';
  const files: Record<string, string> = {
    'node-image.ts': template('node-image.ts'),
    'imgc.toml': template('imgc.toml'),
    'tsconfig.json': tsconfig,
    'package.json': `${JSON.stringify({ name, private: true, type: 'module', ...projectNeeds(imgc) }, null, 2)}\n`,
    '.gitignore': template('gitignore'),
    '.github/workflows/imgc.yml': template('imgc.yml'),
  };
  const exists = (rel: string) => existsSync(path.join(dir, rel));
  const clashing = Object.keys(files).filter((f) => exists(f) && !mergeable.has(f));
  if (clashing.length) throw new Error(`refusing to overwrite ${clashing.join(', ')} in ${dir}`);
  if (imgc.vendorFrom && !existsSync(imgc.vendorFrom)) throw new Error(`imgc was installed from ${imgc.vendorFrom}, which is gone: install imgc again (npm install PATH-TO/imgc-VERSION.tgz), then run imgc init`);
  const result: Scaffolded = { created: [], updated: [], kept: [] };
  const writes: [string, string][] = [];
  for (const [rel, content] of Object.entries(files)) {
    if (!exists(rel)) {
      writes.push([rel, content]);
      result.created.push(rel);
      continue;
    }
    const current = readFileSync(path.join(dir, rel), 'utf8');
    if (rel === 'tsconfig.json') {
      result.kept.push('tsconfig.json (yours: node-image.ts needs "module": "NodeNext" and "strict": true to be checked as imgc checks it)');
      continue;
    }
    const merged = rel === 'package.json' ? mergedPackageJson(current, path.join(dir, rel), imgc) : mergedGitignore(current);
    if (merged !== current) {
      writes.push([rel, merged]);
      result.updated.push(rel);
    }
  }
  // Every merge is computed before anything is written: a bad package.json leaves the directory as it was.
  for (const [rel, content] of writes) {
    mkdirSync(path.dirname(path.join(dir, rel)), { recursive: true });
    writeFileSync(path.join(dir, rel), content);
  }
  if (imgc.vendorFrom) {
    const rel = imgc.spec.replace(/^file:/, '');
    const had = exists(rel);
    vendor(imgc.vendorFrom, path.join(dir, rel));
    (had ? result.updated : result.created).push(rel);
  }
  return result;
};

/**
 * imgc's tarball at `to`: a copy of the one it was installed from, or one
 * packed from the package directory it was installed from (as installed:
 * built, so no build script runs).
 */
const vendor = (from: string, to: string): void => {
  mkdirSync(path.dirname(to), { recursive: true });
  if (!statSync(from).isDirectory()) {
    copyFileSync(from, to);
    return;
  }
  const staging = path.join(path.dirname(to), `.imgc-pack-${process.pid}`);
  mkdirSync(staging);
  try {
    execFileSync('npm', ['pack', '--ignore-scripts', '--silent', '--pack-destination', staging], { cwd: from, stdio: ['ignore', 'ignore', 'pipe'] });
    const [packed] = readdirSync(staging);
    if (!packed) throw new Error(`npm pack wrote no tarball for ${from}`);
    copyFileSync(path.join(staging, packed), to);
  } finally {
    rmSync(staging, { recursive: true, force: true });
  }
};
