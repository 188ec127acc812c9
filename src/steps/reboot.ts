// reboot: restarts the machine between two steps (a new kernel, a changed
// cgroup setting) and goes on once it is back. Only a runner that can wait
// for a machine to come back can do that: Packer (the build runs in a VM:
// the phase's script is split at the reboot, see src/compilers/packer) and
// Ansible on a live host (ansible.builtin.reboot). A chroot has no kernel of
// its own, provision.sh over `ssh host sh -s` dies with its session, and
// cloud-init does not resume runcmd after a reboot: those refuse (IMGC2002).
//
// Facts: it provides nothing. It removes what lies under /run (a tmpfs on
// every systemd system, empty after a boot); everything else imgc tracks
// (files on disk, packages, users, enabled services) survives a reboot.
import { z } from '../util/zod.js';
import { fact } from '../core/facts.js';
import { OneLine, stepBase } from '../core/fields.js';
import { int, unsafe } from '../emit/ansible/quote.js';
import { map } from '../emit/ansible/yaml.js';
import { task } from '../emit/ansible/tasks.js';
import { stepTaskName } from '../emit/ansible/names.js';
import type { Refusal, StepInput, StepKind } from './kind.js';

/** How long to wait for the machine to come back when the step does not say (Ansible's default too). */
export const DEFAULT_TIMEOUT = 600;

const schema = z
  .object({
    ...stepBase,
    kind: z.literal('reboot'),
    /** Why: in comments, task names and the message logged-in users see. */
    reason: OneLine.optional(),
    /** Seconds to wait for the machine to come back and answer (default 600). */
    timeout: z.number().int().min(1).max(86400).optional(),
  })
  .strict();
type RebootStep = z.infer<typeof schema>;

export interface RebootOptions {
  /** Why the machine reboots here (a new kernel, a cgroup change): shown in outputs and logs. */
  reason?: string;
  /** Seconds to wait for the machine to come back (default 600). */
  timeout?: number;
}

const timeoutOf = (s: RebootStep): number => s.timeout ?? DEFAULT_TIMEOUT;
const why = (s: RebootStep): string => (s.reason !== undefined ? ` (${s.reason})` : '');

const elsewhere = 'build the image with --target packer (its VM reboots and Packer reconnects), or move the reboot to a runtime phase and compile with --target ansible --runtime';

const chroot: Refusal = {
  refuse: 'an image build in a chroot runs on the build machine\'s kernel: there is no machine of its own to reboot, and the steps after the reboot would run without one',
  hint: elsewhere,
};

export const reboot = {
  kind: 'reboot',
  schema,
  make: (opts: RebootOptions = {}): StepInput<RebootStep> => ({
    kind: 'reboot',
    ...(opts.reason !== undefined ? { reason: opts.reason } : {}),
    ...(opts.timeout !== undefined ? { timeout: opts.timeout } : {}),
    removes: [fact('path', '/run/*')],
  }),

  describe: (s) => `reboot${why(s)}`,
  comment: (s) => `reboot${why(s)}, then wait up to ${timeoutOf(s)}s for the machine to come back`,
  // Nothing may move across it: what runs after it expects the rebooted machine.
  opaque: true,
  inRoot: true,
  needsMachine: true,

  // provision.sh runs as one `ssh host sh -s` session: the reboot ends it, and
  // nothing would run the steps after it. A resume protocol (exit "run me
  // again", skip up to the reboot by boot id) is more machinery than a
  // refusal is worth while Ansible does it properly (docs/reboot.md).
  shell: (_s, ctx) =>
    ctx.liveHost
      ? {
          refuse: 'provision.sh runs in one session (ssh host sh -s), which the reboot ends: the steps after it would never run',
          hint: 'compile the runtime phases with --target ansible --runtime (ansible.builtin.reboot waits for the host and goes on), or reboot the host yourself after provision.sh',
        }
      : chroot,
  ansible: (s, ctx) =>
    ctx.liveHost
      ? [
          task({
            name: stepTaskName('Reboot and wait for the host', s),
            module: 'ansible.builtin.reboot',
            args: map({ ...(s.reason !== undefined ? { msg: unsafe(s.reason) } : {}), reboot_timeout: int(timeoutOf(s)) }),
          }),
        ]
      : chroot,
  cloudInit: {
    refuse: 'cloud-init runs its runcmd once per instance: a reboot in the middle stops it, and the entries after the reboot never run',
    hint: elsewhere,
  },
  packer: {
    comment: (s) => `reboot${why(s)}`,
    // Packer's shell provisioner docs, "Handling Reboots": the reboot ends
    // the connection (expect_disconnect); removing the uploaded script
    // afterwards is retried for start_retry_timeout, until the machine is
    // back. The next provisioner waits first (pause_before), so that it does
    // not start on the machine still going down, then retries to connect.
    provisioners: (s) => [
      // Each side says its boot id, so Packer's output shows the machine came back from a reboot.
      { comment: `reboot${why(s)}`, inline: ['echo "imgc: rebooting (boot $(cat /proc/sys/kernel/random/boot_id))"', 'reboot'], expectDisconnect: true, startRetryTimeout: `${timeoutOf(s)}s` },
      { comment: `wait up to ${timeoutOf(s)}s for the machine to come back`, inline: ['echo "imgc: back (boot $(cat /proc/sys/kernel/random/boot_id)), up $(cut -d. -f1 /proc/uptime)s"'], pauseBefore: '10s', startRetryTimeout: `${timeoutOf(s)}s` },
    ],
  },

  runtime: () => ({ creations: [], kept: 'a reboot is not undone' }),

  verify: {},
} as const satisfies StepKind<RebootStep> & { make(opts?: RebootOptions): StepInput<RebootStep> };
