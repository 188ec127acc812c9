import type { Diagnostic } from '../check/diagnostic.js';
import type { Image } from '../ir/schema.js';
import type { PackerVersion } from './targets.js';

/** Relative path → file contents. Compilers are pure: same IR, same files. */
export type CompiledFiles = Record<string, string>;

export interface CompileOptions {
  /** Packer: run the phases through the shell scripts (default) or the Ansible playbook. */
  provisioner?: 'shell' | 'ansible';
  /** Packer: also emit the JSON form of the template. */
  json?: boolean;
  /**
   * Packer: the release the template is for. '1.10' (the default) is today's
   * Packer, which installs builders as plugins and needs them pinned in a
   * `packer { required_plugins }` block; '1.6' is Debian 12's packer 1.6.6, with
   * them built in (and no such block).
   */
  packerVersion?: PackerVersion;
  /**
   * Shell, ansible: the image build's phases run on a booted machine of the
   * image's own (Packer's VM), not in a chroot, so steps that need a running
   * init render (set by the packer target for its embedded outputs).
   */
  booted?: boolean;
  /** Shell, ansible: the runtime phases for existing hosts, with a preflight of the host contract (provision.sh / runtime.yml). */
  runtime?: boolean;
  /** Shell, ansible: the inverse of the runtime phases, undoing what the host's record lists (decommission.sh / decommission.yml). */
  decommission?: boolean;
  /**
   * Ansible --runtime/--decommission: hosts per batch (Ansible's `serial`: a
   * number or a percentage; default all at once) and the percentage of a
   * batch that may fail before the run stops (`max_fail_percentage`; default
   * 100: a failing host never stops the others). `-e imgc_serial=…` and
   * `-e imgc_max_fail=…` override both when the playbook runs.
   */
  serial?: string;
  maxFail?: number;
}

export interface Compiler {
  readonly target: string;
  readonly description: string;
  compile(ir: Image, opts: CompileOptions): CompiledFiles;
}

/** A value the target cannot carry safely; the diagnostics say which and where. */
export class CompileError extends Error {
  constructor(readonly diagnostics: Diagnostic[]) {
    super(diagnostics.map((d) => d.message).join('\n'));
    this.name = 'CompileError';
  }
}
