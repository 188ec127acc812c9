// The definition's variables in the template: one `variable` block each (a
// non-sensitive one defaults to its value at compile time; a sensitive one is
// `sensitive = true` with no default, so `-var` must give it), references in
// strings as `${var.NAME}` (quote.ts), and every provisioner hands them to the
// embedded backend: shell scripts read IMGC_VAR_<NAME>, the playbook reads
// NAME from `-e`. Packer renders provisioner strings (environment_vars,
// inline) with its own `{{ }}` engine, more than once, so a value goes in as
// base64 (which holds no `{{`) and is decoded where the script runs; and never
// on a command line: the target's shell provisioner reads them from Packer's
// env var file (use_env_var_file), shell-local from its inline script file,
// ansible-playbook from an extra-vars file (`-e @FILE`, mode 0600) that a
// shell-local step writes before the first ansible provisioner and removes
// after the last.
import type { Image } from '../../ir/schema.js';
import { envName, type IRVariable } from '../../core/variables.js';
import { packageSpecPattern } from '../../core/packages.js';
import { attr, block, bool, list, str, tmpl, type Item, type Value } from './hcl.js';
import { allMatch, base64Of, jsonencodeVariables, oneOf, type TemplatePart } from './quote.js';
import type { VariableSpec } from './sources.js';

const hclType = { string: 'string', number: 'number', boolean: 'bool', list: 'list(string)' } as const;

/**
 * A list variable's items are package specs (src/steps/package-list.ts): Packer
 * refuses any other value before a build starts (the scripts and plays check
 * again). Not for Packer 1.6, whose validation conditions have no `regex`.
 */
const listValidation = (name: string): VariableSpec['validation'] => ({
  condition: allMatch(name, packageSpecPattern),
  message: `Each item of ${name} must be a package spec: name[:arch][=version].`,
});

/**
 * A string variable of a z.enum schema takes only its values: Packer refuses
 * another before a build starts (the scripts and plays check again, and alone
 * for values an HCL condition cannot hold plainly).
 */
const oneOfValidation = (v: IRVariable): VariableSpec['validation'] | undefined => {
  const condition = v.oneOf && oneOf(v.name, v.oneOf);
  return condition ? { condition, message: `The value of ${v.name} must be one of: ${v.oneOf!.map((o) => JSON.stringify(o)).join(', ')}.` } : undefined;
};

/** The IR's variables as the template's variable blocks (`legacy`: for Packer 1.6). */
export const irVariables = (ir: Image, legacy: boolean): VariableSpec[] =>
  (ir.variables ?? []).map((v) => {
    const validation = v.type === 'list' ? (legacy ? undefined : listValidation(v.name)) : oneOfValidation(v);
    return {
      name: v.name,
      type: hclType[v.type],
      description: v.description ?? `Variable ${v.name} of ${ir.source}${v.sensitive ? ' (sensitive)' : ''}.`,
      ...(v.sensitive ? { sensitive: true } : { default: v.value }),
      ...(validation ? { validation } : {}),
    };
  });

/** A variable for a shell script's IMGC_VAR_<NAME>, in base64: a list as its items separated by spaces (`valueText`). */
const shellValue = (v: IRVariable): string => base64Of(v.type === 'list' ? `join(" ", var.${v.name})` : `var.${v.name}`);

/**
 * `if root then sh else sudo sh` of the uploaded script ({{ .Path }}, $0),
 * after sourcing Packer's env var file ({{ .EnvVarFile }}, $1) and decoding
 * each of `names` from base64 (a trailing `.` keeps trailing newlines).
 */
export const executeAsRootWithVars = (names: readonly string[]): string => {
  const decode = `set -a; . "$1"; set +a; for n in ${names.join(' ')}; do eval "v=\\\${$n}"; v=$(printf %s "$v" | base64 -d && echo .) || exit 1; export "$n=\${v%.}"; done; exec sh "$0"`;
  const run = `sh -c '${decode}' '{{ .Path }}' '{{ .EnvVarFile }}'`;
  return `if [ $(id -u) -eq 0 ]; then ${run}; else sudo ${run}; fi`;
};

/** shell-local: lines of its inline script that set each variable from its base64, then run `file` (under path.root). */
const localInline = (used: readonly IRVariable[], file: string): Value =>
  list([
    ...used.flatMap((v) => [
      tmpl(`${envName(v.name)}=$(printf %s '`, { expr: shellValue(v) }, `' | base64 -d && echo .) || exit 1`),
      str(`export ${envName(v.name)}="\${${envName(v.name)}%.}"`),
    ]),
    tmpl(`exec /bin/sh "$(printf %s '`, { expr: base64Of('path.root') }, `' | base64 -d)${file}"`),
  ]);

const isAttr = (i: Item, name: string): boolean => i.kind === 'attr' && i.name === name;

// shell-local's default command breaks on a path with a space; the script is
// handed to sh as $0 instead. {{ .Vars }} and {{ .Script }} are Packer's own.
export const LOCAL_EXECUTE = ['/bin/sh', '-c', '{{ .Vars }} /bin/sh "$0"', '{{ .Script }}'];

/**
 * The ansible provisioners' extra-vars file, where packer runs: one per
 * source, as Packer builds its sources at once. Never under the root of a
 * path with `{{` in it: path.root goes into the shell through base64.
 */
const extraVarsFile = (root: TemplatePart[]): TemplatePart[] => [...root, '/ansible/.extra-vars-', { expr: 'source.name' }, '.json'];
const rootInShell: TemplatePart[] = [`"$(printf %s '`, { expr: base64Of('path.root') }, `' | base64 -d)`];

/**
 * shell-local steps around the ansible provisioners: the first writes the
 * variables as JSON into the extra-vars file (umask 077: only the user running
 * packer reads it; the values reach it in the inline script, never on a
 * command line), the second removes it.
 */
const extraVarsSteps = (names: readonly string[]): { write: Item; remove: Item } => {
  const file = tmpl('f=', ...extraVarsFile(rootInShell), '"');
  const step = (lines: Value[], comment: string): Item => block('provisioner', ['shell-local'], [attr('inline', list([file, ...lines])), attr('execute_command', list(LOCAL_EXECUTE.map(str)))], [comment]);
  return {
    write: step(
      [str('umask 077'), tmpl(`printf %s '`, { expr: base64Of(jsonencodeVariables(names)) }, `' | base64 -d > "$f.tmp" && mv -f "$f.tmp" "$f"`)],
      "The variables for ansible-playbook (-e @FILE), in a file only packer's user reads: values stay off every command line.",
    ),
    remove: step([str('rm -f "$f"')], 'The variables file is removed once the last play ran.'),
  };
};

/** Provisioner blocks with the variables added: environment_vars (shell, shell-local) or a JSON extra-vars file, written and removed around them (ansible). */
export const withVariables = (ir: Image, provisioners: readonly Item[], embedded: Readonly<Record<string, string>>): Item[] => {
  const vars = ir.variables ?? [];
  if (!vars.length) return [...provisioners];
  /** `/FILE` of the embedded script a shell provisioner runs (`${path.root}/FILE`). */
  const scriptFile = (body: readonly Item[]): string => {
    const script = body.find((i) => isAttr(i, 'script'));
    const tail = script?.kind === 'attr' && script.value.kind === 'template' ? script.value.parts[1] : undefined;
    return typeof tail === 'string' ? tail : '';
  };
  const scriptOf = (body: readonly Item[]): string => embedded[scriptFile(body).replace(/^\//, '')] ?? '';
  const out = provisioners.map((p) => {
    if (p.kind !== 'block' || p.type !== 'provisioner') return p;
    const kind = p.labels[0];
    if (kind === 'shell' || kind === 'shell-local') {
      // Only the variables the script reads: a hook that needs no secret is not given it.
      const script = scriptOf(p.body);
      const used = vars.filter((v) => script.includes(`\${${envName(v.name)}`));
      if (!used.length) return p;
      if (kind === 'shell-local') {
        // The script becomes the tail of an inline script Packer writes to a file and runs: values stay off every command line.
        const file = scriptFile(p.body);
        return { ...p, body: p.body.map((i) => (isAttr(i, 'script') ? attr('inline', localInline(used, file)) : i)) };
      }
      const env: Value = list(used.map((v) => tmpl(`${envName(v.name)}=`, { expr: shellValue(v) })));
      const body = p.body.map((i) => (isAttr(i, 'execute_command') ? attr('execute_command', str(executeAsRootWithVars(used.map((v) => envName(v.name))))) : i));
      const at = body.findIndex((i) => isAttr(i, 'script')) + 1;
      return { ...p, body: [...body.slice(0, at), attr('environment_vars', env), attr('use_env_var_file', bool(true)), ...body.slice(at)] };
    }
    if (kind === 'ansible') {
      // One JSON file: ansible-playbook splits `-e name=value` at white space and reads every value as a string.
      const extra = [str('-e'), tmpl('@', ...extraVarsFile([{ expr: 'path.root' }]))];
      return {
        ...p,
        body: p.body.map((i) => (i.kind === 'attr' && i.name === 'extra_arguments' && i.value.kind === 'list' ? attr('extra_arguments', list([...i.value.items, ...extra])) : i)),
      };
    }
    return p;
  });
  const isAnsible = (p: Item) => p.kind === 'block' && p.labels[0] === 'ansible';
  const first = out.findIndex(isAnsible);
  if (first < 0) return out;
  const last = out.length - 1 - [...out].reverse().findIndex(isAnsible);
  const { write, remove } = extraVarsSteps(vars.map((v) => v.name));
  return [...out.slice(0, first), write, ...out.slice(first, last + 1), remove, ...out.slice(last + 1)];
};
