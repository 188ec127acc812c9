// The definition's variables in the template: one `variable` block each (a
// non-sensitive one defaults to its value at compile time; a sensitive one is
// `sensitive = true` with no default, so `-var` must give it), references in
// strings as `${var.NAME}` (quote.ts), and every provisioner hands them to the
// embedded backend: shell scripts read IMGC_VAR_<NAME> from
// environment_vars, the playbook reads NAME from `-e`.
import type { Image } from '../../ir/schema.js';
import { envName } from '../../ir/variables.js';
import { attr, list, ref, str, tmpl, type Item, type Value } from './hcl.js';
import { jsonencodeVariables } from './quote.js';
import type { VariableSpec } from './sources.js';

const hclType = { string: 'string', number: 'number', boolean: 'bool' } as const;

/** The IR's variables as the template's variable blocks. */
export const irVariables = (ir: Image): VariableSpec[] =>
  (ir.variables ?? []).map((v) => ({
    name: v.name,
    type: hclType[v.type],
    description: v.description ?? `Variable ${v.name} of ${ir.source}${v.sensitive ? ' (sensitive)' : ''}.`,
    ...(v.sensitive ? { sensitive: true } : { default: v.value }),
  }));

/** `if root then sh else sudo sh`, with Packer's {{ .Vars }} (the environment_vars) passed through `env`. */
export const EXECUTE_AS_ROOT_WITH_VARS = `if [ $(id -u) -eq 0 ]; then env {{ .Vars }} sh '{{ .Path }}'; else sudo env {{ .Vars }} sh '{{ .Path }}'; fi`;

const isAttr = (i: Item, name: string): boolean => i.kind === 'attr' && i.name === name;

/** Provisioner blocks with the variables added: environment_vars (shell, shell-local) or one JSON `-e` (ansible). */
export const withVariables = (ir: Image, provisioners: readonly Item[], embedded: Readonly<Record<string, string>>): Item[] => {
  const vars = ir.variables ?? [];
  if (!vars.length) return [...provisioners];
  /** The embedded script a shell provisioner runs (`${path.root}/FILE`). */
  const scriptOf = (body: readonly Item[]): string => {
    const script = body.find((i) => isAttr(i, 'script'));
    const tail = script?.kind === 'attr' && script.value.kind === 'template' ? script.value.parts[1] : undefined;
    return typeof tail === 'string' ? (embedded[tail.replace(/^\//, '')] ?? '') : '';
  };
  return provisioners.map((p) => {
    if (p.kind !== 'block' || p.type !== 'provisioner') return p;
    const kind = p.labels[0];
    if (kind === 'shell' || kind === 'shell-local') {
      // Only the variables the script reads: a hook that needs no secret is not given it.
      const script = scriptOf(p.body);
      const used = vars.filter((v) => script.includes(`\${${envName(v.name)}`));
      if (!used.length) return p;
      const env: Value = list(used.map((v) => tmpl(`${envName(v.name)}=`, { expr: `var.${v.name}` })));
      const body = p.body.map((i) => (kind === 'shell' && isAttr(i, 'execute_command') ? attr('execute_command', str(EXECUTE_AS_ROOT_WITH_VARS)) : i));
      const at = body.findIndex((i) => isAttr(i, 'script')) + 1;
      return { ...p, body: [...body.slice(0, at), attr('environment_vars', env), ...body.slice(at)] };
    }
    if (kind === 'ansible') {
      // One JSON -e: ansible-playbook splits `-e name=value` at white space and reads every value as a string.
      const extra = [str('-e'), ref(jsonencodeVariables(vars.map((v) => v.name)))];
      return {
        ...p,
        body: p.body.map((i) => (i.kind === 'attr' && i.name === 'extra_arguments' && i.value.kind === 'list' ? attr('extra_arguments', list([...i.value.items, ...extra])) : i)),
      };
    }
    return p;
  });
};
