// service: enables or disables a systemd unit (links only: works offline in a
// chroot; nothing is started while building).
import { z } from '../util/zod.js';
import { PackageName, UnitName, stepBase } from '../core/fields.js';
import { enablementLinks, isMasked } from '../core/root.js';
import { word } from '../emit/shell/quote.js';
import { bool, unsafe } from '../emit/ansible/quote.js';
import { map } from '../emit/ansible/yaml.js';
import { task } from '../emit/ansible/tasks.js';
import { labelText, stepTaskName } from '../emit/ansible/names.js';
import { fn } from '../emit/cloud-init/calls.js';
import { call, shellLine } from './shared.js';
import { unitName } from '../core/root.js';
import type { StepKind, MakeContext, StepInput } from './kind.js';
import { fact } from '../core/facts.js';
import { packageProviding } from '../core/catalog.js';

const schema = z
  .object({ ...stepBase, kind: z.literal('service'), name: UnitName, enabled: z.boolean(), package: PackageName.optional() })
  .strict();
type ServiceStep = z.infer<typeof schema>;

/**
 * Services that cannot run until the node joins a cluster: kubelet restarts
 * until `kubeadm join` writes its configuration, so waiting to restart holds.
 */
const waitsForBootstrap: ReadonlySet<string> = new Set(['kubelet']);

/**
 * Services that do something checkable once up: asked, beyond being active.
 * systemd-networkd: an interface gets an IPv4 address (DHCP may take a while
 * after the boot settles); cloud-final: cloud-init finished with no module failed.
 */
const serviceProbes: Readonly<Record<string, { fails: string; run: string }>> = {
  containerd: { fails: "'ctr version' failed", run: 'ctr version' },
  'systemd-networkd': {
    fails: 'no interface has an IPv4 address',
    run: 'i=0; until ip -4 -o addr show scope global | grep -q inet; do i=$((i+1)); [ $i -lt 60 ] || { echo no address after 60s:; ip -o addr show; exit 1; }; sleep 1; done; ip -4 -o addr show scope global',
  },
  'cloud-final': { fails: "'cloud-init status' is not done", run: 'cloud-init status --wait --long' },
};

export const service = {
  kind: 'service',
  schema,
  /** `package`: the package whose catalog entry brings the service, for hints. */
  make: ({ catalog }: MakeContext, name: string, enabled: boolean): StepInput<ServiceStep> => {
    const pkg = packageProviding(catalog, 'services', name);
    return { kind: 'service', name, enabled, ...(pkg ? { package: pkg } : {}), requires: [fact('service', name), fact('command', 'systemctl')] };
  },
  describe: (s) => `${s.enabled ? 'enable' : 'disable'} of service '${s.name}'`,
  comment: (s) => `${s.enabled ? 'enable' : 'disable'} ${s.name}`,
  touches: (s) => ({ needs: s.package !== undefined ? [{ kind: 'package', key: s.package }] : [], changes: [{ kind: 'service', key: s.name }] }),
  inRoot: true,
  unitPackage: (s) => s.package,
  setsDetails: (s) => [{ fact: fact('service', s.name), details: { enabled: s.enabled } }],

  shellHelpers: {
    enable: {
      deps: [],
      code: [
        '# imgc_enable UNIT: UNIT is enabled at boot (symlinks only: nothing is started).',
        'imgc_enable() {',
        '  if systemctl is-enabled --quiet "$1" 2>/dev/null; then',
        '    return 0',
        '  fi',
        '  systemctl enable "$1"',
        '  imgc_dirty=1',
        '}',
      ],
    },
    disable: {
      deps: [],
      code: [
        '# imgc_disable UNIT: UNIT is not enabled at boot (nothing is stopped).',
        'imgc_disable() {',
        '  if [ "$(systemctl is-enabled "$1" 2>/dev/null || :)" != enabled ]; then',
        '    return 0',
        '  fi',
        '  systemctl disable "$1"',
        '  imgc_dirty=1',
        '}',
      ],
    },
  },
  shell: (s) => (s.enabled ? shellLine(`imgc_enable ${word(s.name)}`, 'enable') : shellLine(`imgc_disable ${word(s.name)}`, 'disable')),
  ansible: (s, ctx) => {
    ctx.notes.add('Services are only enabled or disabled (symlinks, works offline in a chroot); nothing is started.');
    return [
      task({
        name: stepTaskName(`${s.enabled ? 'Enable' : 'Disable'} ${labelText(unitName(s.name))}`, s),
        module: 'ansible.builtin.systemd_service',
        args: map({ name: unsafe(unitName(s.name)), enabled: bool(s.enabled) }),
      }),
    ];
  },
  cloudInit: {
    run: (s) => [s.enabled ? call([fn('enable'), s.name], 'enable') : call([fn('disable'), s.name], 'disable')],
  },

  runtime: (s) => (s.enabled ? { creations: [{ token: s.id, kind: 'service', unit: unitName(s.name) }] } : { creations: [], kept: 'a disable is not undone' }),

  verify: {
    root: (s) => [
      {
        subject: `service-enabled:${s.name}`,
        what: `service '${s.name}' ${s.enabled ? 'enabled' : 'disabled'}`,
        check: (r) => {
          const links = enablementLinks(r.view, s.name);
          if (s.enabled) {
            if (isMasked(r.view, s.name)) return `${s.name} is masked (/etc/systemd/system/${s.name} → /dev/null)`;
            return links.length ? undefined : `no link to ${s.name} in /etc/systemd/system/*.wants or *.requires`;
          }
          return links.length ? `still enabled: ${links.join(', ')}` : undefined;
        },
      },
    ],
    boot: (s) => {
      const unit = s.name;
      if (!s.enabled) return [{ subject: `service:${unit}`, what: `service '${unit}' disabled`, script: `! systemctl is-enabled --quiet ${word(unit)} || { echo "is enabled"; exit 1; }` }];
      const probe = serviceProbes[unit];
      return [
        {
          subject: `service:${unit}`,
          what: `service '${unit}' active`,
          script:
            (waitsForBootstrap.has(unit) ? `st=$(systemctl is-active ${word(unit)}); [ "$st" = activating ] && exit 0\n` : '') +
            // A unit whose conditions were checked and found nothing to do this boot (sysprep's host keys when cloud-init made them) did as asked.
            `[ "$(systemctl show -p ConditionResult --value ${word(unit)})" = no ] && [ "$(systemctl show -p ConditionTimestampMonotonic --value ${word(unit)})" != 0 ] && exit 0\n` +
            // The unit's own last lines say why (containerd: "failed to load TOML: …"); systemd's lines
            // about it (-u) are restart noise for a crash loop, the fallback when the unit wrote nothing.
            `st=$(systemctl is-active ${word(unit)}) || { why=$(journalctl -b ${word(`_SYSTEMD_UNIT=${unitName(unit)}`)} -n 3 -o cat --no-pager 2>/dev/null | tr '\\n' ' '); ` +
            `[ -n "$why" ] || why=$(journalctl -b -u ${word(unit)} -n 3 -o cat --no-pager 2>&1 | tr '\\n' ' '); echo "is $st, not active: $why"; exit 1; }` +
            (probe ? `\nout=$(${probe.run} 2>&1) || { echo "active, but ${probe.fails.replace(/["$`\\]/g, '')}: $out"; exit 1; }` : ''),
        },
      ];
    },
  },
} as const satisfies StepKind<ServiceStep>;
