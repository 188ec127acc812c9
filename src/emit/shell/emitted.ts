// What a shell rendering of a step is: its lines and the helper functions
// (src/compilers/shell/helpers.ts, which defines one body per name here) they call.

/** The shell functions a step's lines may call (`imgc_<name>`); their code is the shell frame's. */
export type HelperName =
  | 'attrs'
  | 'checked'
  | 'checkSudoers'
  | 'checkSshd'
  | 'file'
  | 'parent'
  | 'dir'
  | 'symlink'
  | 'line'
  | 'sysctl'
  | 'module'
  | 'swapoff'
  | 'remove'
  | 'truncate'
  | 'group'
  | 'user'
  | 'member'
  | 'userShell'
  | 'enable'
  | 'disable'
  | 'mask'
  | 'unmask'
  | 'fetch'
  | 'get'
  | 'download'
  | 'archive'
  | 'serviceNow'
  | 'aptState'
  | 'aptInstalled'
  | 'aptInstall'
  | 'aptRemove'
  | 'hold'
  | 'unhold'
  | 'eol'
  | 'lineinfile'
  | 'blockinfile'
  | 'inifile'
  | 'keyedit'
  | 'aptUpgrade'
  | 'puppet';


/** Shell lines for a step's body and the helpers they call. */
export interface Emitted {
  readonly lines: string[];
  readonly helpers: HelperName[];
}

/** How a package manager's operations are written in a phase script (src/steps/package-managers.ts). */
export interface ShellPackageManager {
  install(names: readonly string[]): Emitted;
  /** Installs the function's positional parameters (checked package specs); nothing for none. */
  readonly installArgs: Emitted;
  remove(names: readonly string[]): Emitted;
  /** Appended to a repository step: lets the next install see what the step changed. */
  readonly repositoryChanged: Emitted;
  /** Holds (`held`) or releases installed packages at their version. */
  hold(names: readonly string[], held: boolean): Emitted;
  /** The installed packages at the newest versions of the sources; `dist`: dependencies may change. */
  upgrade(dist: boolean): Emitted;
}

