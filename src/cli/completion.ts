// `imgc completion bash|zsh|fish`: completion scripts generated from the
// command table, so that they offer exactly the flags each command takes.
import { commands, flagsOf, type Command, type Flag } from './commands.js';

const words = (xs: readonly string[]) => xs.join(' ');

/** What follows a flag that takes a value, as a shell-neutral description. */
const valueKind = (f: Flag): { choices: readonly string[] } | { files: 'file' | 'dir' } | undefined =>
  f.type !== 'string' ? undefined : f.choices ? { choices: f.choices } : f.complete ? { files: f.complete } : undefined;

/** Positional completion of a command: definitions, directories, command names or shells. */
const positional = (c: Command): 'ts' | 'dir' | 'commands' | 'shells' | 'none' =>
  c.name === 'help' ? 'commands' : c.name === 'completion' ? 'shells' : c.name === 'init' ? 'dir' : c.args.includes('FILE') ? 'ts' : 'none';

const bash = (): string => {
  const cases = commands.map((c) => {
    const values = flagsOf(c)
      .map((f) => ({ f, kind: valueKind(f) }))
      .filter((x) => x.kind)
      .map(({ f, kind }) => {
        const names = [`--${f.name}`, ...(f.short ? [`-${f.short}`] : [])].join('|');
        const body = kind && 'choices' in kind ? `COMPREPLY=($(compgen -W '${words(kind.choices)}' -- "$cur"))` : kind && kind.files === 'dir' ? 'COMPREPLY=($(compgen -d -- "$cur"))' : 'COMPREPLY=($(compgen -f -- "$cur"))';
        return `        ${names}) ${body}; return ;;`;
      });
    const pos = positional(c);
    const posBody =
      pos === 'commands'
        ? `COMPREPLY=($(compgen -W '${words(commands.map((k) => k.name))}' -- "$cur"))`
        : pos === 'shells'
          ? `COMPREPLY=($(compgen -W 'bash zsh fish' -- "$cur"))`
          : pos === 'dir'
            ? 'COMPREPLY=($(compgen -d -- "$cur"))'
            : pos === 'ts'
              ? 'COMPREPLY=($(compgen -f -X "!*.ts" -- "$cur") $(compgen -d -- "$cur"))'
              : 'COMPREPLY=()';
    return [
      `    ${c.name})`,
      '      case "$prev" in',
      ...values,
      '      esac',
      `      if [[ "$cur" == -* ]]; then COMPREPLY=($(compgen -W '${words(flagsOf(c).map((f) => `--${f.name}`))}' -- "$cur")); else ${posBody}; fi`,
      '      ;;',
    ].join('\n');
  });
  return `# bash completion for imgc: source it, or put it in /etc/bash_completion.d/imgc
_imgc() {
  local cur="\${COMP_WORDS[COMP_CWORD]}" prev="\${COMP_WORDS[COMP_CWORD-1]}"
  if [ "$COMP_CWORD" -eq 1 ]; then
    COMPREPLY=($(compgen -W '${words([...commands.map((c) => c.name), '--help', '--version'])}' -- "$cur"))
    return
  fi
  case "\${COMP_WORDS[1]}" in
${cases.join('\n')}
  esac
}
complete -o filenames -F _imgc imgc
`;
};

const zshQuote = (s: string) => s.replace(/[\\[\]:']/g, (c) => (c === "'" ? "'\\''" : `\\${c}`));

const zsh = (): string => {
  const fns = commands.map((c) => {
    const specs = flagsOf(c).map((f) => {
      const kind = valueKind(f);
      const arg = f.type === 'boolean' ? '' : !kind ? ':value: ' : 'choices' in kind ? `:${f.name}:(${words(kind.choices)})` : kind.files === 'dir' ? `:${f.name}:_files -/` : `:${f.name}:_files`;
      const desc = `[${zshQuote(f.help)}]${arg}`;
      if (f.short) return `    ${f.multiple ? "'*'" : `'(-${f.short} --${f.name})'`}{-${f.short},--${f.name}}'${desc}'`;
      return `    '${f.multiple ? '*' : ''}--${f.name}${desc}'`;
    });
    const pos = positional(c);
    const posSpec =
      pos === 'commands' ? `'1:command:(${words(commands.map((k) => k.name))})'` : pos === 'shells' ? "'1:shell:(bash zsh fish)'" : pos === 'dir' ? "'1:directory:_files -/'" : pos === 'ts' ? "'1:definition:_files -g \"*.ts\"'" : '';
    return `_imgc_${c.name.replace(/-/g, '_')}() {\n  _arguments -s \\\n${[...specs, ...(posSpec ? [`    ${posSpec}`] : [])].join(' \\\n')}\n}`;
  });
  return `#compdef imgc
# zsh completion for imgc: put it on $fpath as _imgc, or source it after compinit.
${fns.join('\n\n')}

_imgc() {
  local -a cmds
  cmds=(
${commands.map((c) => `    '${c.name}:${zshQuote(c.summary)}'`).join('\n')}
  )
  if (( CURRENT == 2 )); then
    _describe 'imgc command' cmds
    return
  fi
  local cmd="\${words[2]}"
  shift words
  (( CURRENT-- ))
  case "$cmd" in
${commands.map((c) => `    ${c.name}) _imgc_${c.name.replace(/-/g, '_')} ;;`).join('\n')}
  esac
}

if [ "$funcstack[1]" = "_imgc" ]; then
  _imgc "$@"
else
  compdef _imgc imgc
fi
`;
};

const fishQuote = (s: string) => `'${s.replace(/\\/g, '\\\\').replace(/'/g, "\\'")}'`;

const fish = (): string => {
  const lines = [
    '# fish completion for imgc: put it in ~/.config/fish/completions/imgc.fish',
    'complete -c imgc -f',
    ...commands.map((c) => `complete -c imgc -n __fish_use_subcommand -a ${c.name} -d ${fishQuote(c.summary)}`),
  ];
  for (const c of commands) {
    const cond = `'__fish_seen_subcommand_from ${c.name}'`;
    for (const f of flagsOf(c)) {
      const kind = valueKind(f);
      const value = !kind ? (f.type === 'string' ? ' -r' : '') : 'choices' in kind ? ` -x -a ${fishQuote(words(kind.choices))}` : kind.files === 'dir' ? " -x -a '(__fish_complete_directories)'" : ' -r -F';
      lines.push(`complete -c imgc -n ${cond} -l ${f.name}${f.short ? ` -s ${f.short}` : ''}${value} -d ${fishQuote(f.help)}`);
    }
    const pos = positional(c);
    if (pos === 'commands') lines.push(`complete -c imgc -n ${cond} -a ${fishQuote(words(commands.map((k) => k.name)))}`);
    if (pos === 'shells') lines.push(`complete -c imgc -n ${cond} -a 'bash zsh fish'`);
    if (pos === 'ts') lines.push(`complete -c imgc -n ${cond} -F -a '(__fish_complete_suffix .ts)'`);
    if (pos === 'dir') lines.push(`complete -c imgc -n ${cond} -x -a '(__fish_complete_directories)'`);
  }
  return `${lines.join('\n')}\n`;
};

export const completionScript = (shell: 'bash' | 'zsh' | 'fish'): string => ({ bash, zsh, fish })[shell]();
