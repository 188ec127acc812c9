// `imgc init [dir]`: a project that checks clean and type-checks in an editor.
import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';

const definition = `// A Kubernetes node image. \`npx imgc check\` proves its contracts;
// \`npx imgc compile --target packer|ansible|shell\` emits it.
import { containerd, debian12, image, kubernetes, kubernetesNetworking, sshHardening } from 'imgc';

export default image('k8s-node')
  .base(debian12({ include: ['systemd', 'systemd-sysv', 'kmod', 'procps', 'sudo'] }))
  .customize((p) =>
    p
      .user('ops', { groups: ['sudo'], shell: '/bin/bash' })
      .use(sshHardening()),
  )
  .provision((p) =>
    p
      .use(kubernetesNetworking())
      .swapOff()
      .use(containerd())
      .use(kubernetes({ source: 'upstream', minor: '1.30' })),
  )
  .artifact((a) => a.tar('rootfs.tar.zst').qcow2('disk.qcow2', { size: '8G' }))
  .verify((v) => v.facts().checksums().manifest());
`;

const toml = `# imgc project settings (https://www.npmjs.com/package/imgc)
definition = "node-image.ts"

[compile]
target = "packer"
out = "out/packer"
`;

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
    },
    include: ['*.ts'],
  },
  null,
  2,
)}\n`;

const packageJson = (name: string, imgcVersion: string) =>
  `${JSON.stringify(
    {
      name,
      private: true,
      type: 'module',
      scripts: { check: 'imgc check', compile: 'imgc compile', 'check:sarif': 'imgc check --format sarif > imgc.sarif' },
      devDependencies: { imgc: `^${imgcVersion}`, typescript: '^7.0.2' },
    },
    null,
    2,
  )}\n`;

const gitignore = `node_modules/
out/
imgc.sarif
`;

const workflow = `# Contract lint on every push: results appear as code-scanning alerts.
name: imgc
on: [push, pull_request]
permissions:
  contents: read
  security-events: write
jobs:
  check:
    runs-on: ubuntu-latest
    steps:
      - uses: actions/checkout@v4
      - uses: actions/setup-node@v4
        with:
          node-version: 20
      - run: npm ci
      - run: npx imgc check --format sarif > imgc.sarif
      - if: always()
        uses: github/codeql-action/upload-sarif@v3
        with:
          sarif_file: imgc.sarif
`;

/** Writes the scaffold; refuses to overwrite any existing file. Returns the paths written. */
export const scaffold = (dir: string, imgcVersion: string): string[] => {
  const name = path.basename(path.resolve(dir)).toLowerCase().replace(/[^a-z0-9._-]/g, '-') || 'node-image';
  const files: Record<string, string> = {
    'node-image.ts': definition,
    'imgc.toml': toml,
    'tsconfig.json': tsconfig,
    'package.json': packageJson(name, imgcVersion),
    '.gitignore': gitignore,
    '.github/workflows/imgc.yml': workflow,
  };
  const existing = Object.keys(files).filter((f) => existsSync(path.join(dir, f)));
  if (existing.length) throw new Error(`refusing to overwrite ${existing.join(', ')} in ${dir}`);
  for (const [rel, content] of Object.entries(files)) {
    mkdirSync(path.dirname(path.join(dir, rel)), { recursive: true });
    writeFileSync(path.join(dir, rel), content);
  }
  return Object.keys(files);
};
