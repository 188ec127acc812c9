// packageList: installs the packages a list variable names
// (`p.packages(extraDebs)`, image-builder's `extra_debs="a b"`). The names are
// known only when the output runs, so the step provides no fact (nothing may
// require what it installs) and every target checks each item against the
// package-spec pattern before using it: a hostile value is refused, never
// run (docs/variables.md, "List variables").
import { z } from '../util/zod.js';
import { stepBase } from '../core/fields.js';
import { packageName, packageSpecPattern } from '../core/packages.js';
import { envName, hasMarker, listItems, referencedIn, wholeReference } from '../core/variables.js';
import { task } from '../emit/ansible/tasks.js';
import { stepTaskName } from '../emit/ansible/names.js';
import { bool, str, template } from '../emit/ansible/quote.js';
import { entry, map, seq } from '../emit/ansible/yaml.js';
import { str as ciStr } from '../emit/cloud-init/quote.js';
import { packageManagers } from './package-managers.js';
import { packageExpectation } from './shared.js';
import type { StepInput, StepKind } from './kind.js';

const schema = z
  .object({
    ...stepBase,
    kind: z.literal('packageList'),
    /** The list variable, as its marker (one reference, nothing else); replaced by its items where the value is known (cloud-init, verify). */
    list: z.string(),
  })
  .strict();
type PackageListStep = z.infer<typeof schema>;

/** The variable's name (the step as the definition made it). */
const variableOf = (s: PackageListStep): string => referencedIn(s.list)[0] ?? s.list;

/** The items, where the value has replaced the reference (cloud-init's compile, verify with the IR's values); undefined before. */
const items = (s: PackageListStep): string[] | undefined => (hasMarker(s.list) ? undefined : listItems(s.list));

/** The pattern without anchors, for `grep -Ex` (POSIX ERE: the pattern has no backslash or JS-only syntax). */
const ere = packageSpecPattern.source.replace(/^\^|\$$/g, '');

export const packageList = {
  kind: 'packageList',
  schema,
  make: (reference: string): StepInput<PackageListStep> => ({ kind: 'packageList', list: reference }),

  describe: (s) => (hasMarker(s.list) ? `install of the packages of variable '${variableOf(s)}'` : `install of the listed packages ${s.list || '(none)'}`),
  // Where the value has replaced the reference (cloud-init), the items.
  comment: (s) => (hasMarker(s.list) ? `install the packages listed in variable ${variableOf(s)}` : `install ${s.list || 'nothing'} (a list variable's value)`),
  touches: () => ({ packageManager: true }),
  inRoot: true,
  takesLists: true,
  chroot: { mounts: () => true, network: () => true },
  variables: ['list'],
  variablesIn: (value) => wholeReference.test(value),

  // The value is read as the script runs: its words, with globbing off; each
  // checked before any is used (the helper installs what is missing and runs
  // nothing for an empty list).
  shell: (s, ctx) => {
    const name = envName(variableOf(s));
    const install = ctx.pm.installArgs;
    return {
      lines: [
        'set -f',
        `# shellcheck disable=SC2086 # a list variable: one item per word`,
        `set -- \${${name}}`,
        'set +f',
        'for imgc_p in "$@"; do',
        `  if ! printf '%s\\n' "$imgc_p" | LC_ALL=C grep -Eqx '${ere}'; then`,
        `    printf 'imgc: %s: item %s is not a package spec (name[:arch][=version])\\n' '${name}' "$imgc_p" >&2`,
        '    exit 2',
        '  fi',
        'done',
        ...install.lines,
      ],
      helpers: install.helpers,
    };
  },
  ansible: (s, ctx) => {
    const pm = packageManagers[ctx.base.packageManager].ansible;
    const v = variableOf(s);
    // `-e extra_debs="a b"` gives a string; group_vars and `-e @file.json` a list.
    const names = `(${v}.split() if ${v} is string else ${v})`;
    const refresh = ctx.refresh;
    ctx.refresh = false;
    return [
      task({
        name: stepTaskName(`Check the items of ${v}`, s),
        module: 'ansible.builtin.assert',
        args: map({
          that: seq([{ value: str('item is string') }, { value: str(`item is match('^${ere}$')`) }]),
          fail_msg: str(`an item of ${v} is not a package spec (name[:arch][=version])`),
          quiet: bool(true),
        }),
        keywords: [entry('loop', template(names))],
      }),
      task({
        name: stepTaskName(`Install the packages of ${v}`, s),
        module: pm.module,
        // Not pm.refreshNote: that install reads package_facts first; these items are known only when the play runs.
        ...(refresh ? { comments: ['Refresh the package index first (the first install of the phase, or the first after a repository was added), whatever is installed: the items are known only when the play runs.'] } : {}),
        args: map([...pm.install([], refresh ? bool(true) : undefined).entries.map((e) => (e.key === 'name' ? entry('name', template(names)) : e))]),
        keywords: [entry('when', str(`${names} | length > 0`))],
      }),
    ];
  },
  cloudInit: {
    // user-data takes the value at compile time: the items, or nothing for an empty list.
    stages: (s, opts) => (opts.packagesModule && items(s)?.length ? ['packages'] : []),
    run: (s, ctx) => {
      const names = items(s) ?? [];
      return names.length ? [ctx.packageManager().install(names)] : [];
    },
    entries: (s) => (items(s) ?? []).map(ciStr),
  },
  packer: { comment: (s) => `install the packages of variable ${variableOf(s)}` },

  // What decommission can name: the value's items at compile time that the
  // step installs on the host (recorded only if absent before and present
  // after, so a value the environment changed at run time removes nothing it
  // did not install).
  runtime: (s, { mine, resolved }) => ({
    creations: listItems(resolved(s.list))
      .filter((spec) => packageSpecPattern.test(spec))
      .map((spec, i) => ({ n: packageName(spec), i }))
      .filter(({ n }) => mine({ kind: 'package', key: n }))
      .map(({ n, i }) => ({ token: `${s.id}#${i}`, kind: 'package' as const, name: n })),
    kept: "decommission removes the packages of the list's value at compile time that provisioning installed; packages a value given at run time adds are kept",
  }),

  verify: {
    root: (s) => (items(s) ?? []).map((spec) => packageExpectation(packageName(spec), true)),
  },
} as const satisfies StepKind<PackageListStep> & { make(reference: string): StepInput<PackageListStep> };
