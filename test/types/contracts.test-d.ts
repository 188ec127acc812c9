import { expectTypeOf, test } from 'vitest';
import { debian12, image, variants, containerd, crictl, defineModule, event, kubernetes, kubernetesCni, variable, z, type FactsOf } from 'imgc';

const base = debian12({ include: ['systemd'] });

test('owner must be a user an earlier step or the base provides', () => {
  image('t')
    .base(base)
    .customize((p) =>
      p
        .user('kube')
        .file('/etc/kube.conf', { owner: 'kube', content: '' })
        // @ts-expect-error: no user 'kbue' exists
        .file('/etc/x', { owner: 'kbue', content: '' }),
    );
});

test('a user created in a later phase is not visible earlier', () => {
  image('t')
    .base(base)
    .customize((p) =>
      // @ts-expect-error: 'kube' is only created in provision
      p.file('/etc/x', { owner: 'kube', content: '' }),
    )
    .provision((p) => p.user('kube'));
});

test('facts flow from one phase to the next', () => {
  image('t')
    .base(base)
    .customize((p) => p.group('admins').user('ops', { groups: ['admins'] }))
    .provision((p) => p.file('/etc/y', { owner: 'ops', group: 'admins', content: '' }));
});

test('services come from installed packages', () => {
  image('t')
    .base(base)
    .provision((p) => p.packages(['containerd']).enableService('containerd'));
  image('t')
    .base(base)
    // @ts-expect-error: nothing provides service 'containerd'
    .provision((p) => p.enableService('containerd'));
});

test('a package the typed catalog lists brings its facts, and only those', () => {
  image('t')
    .base(base)
    .provision((p) => p.packages(['openssh-server']).enableService('ssh').lineInFile('/etc/ssh/sshd_config', { line: 'PermitRootLogin no' }));
  image('t')
    .base(base)
    // @ts-expect-error: chrony brings services 'chrony' and 'chrony-wait', not 'chronyd'
    .provision((p) => p.packages(['chrony']).enableService('chronyd'));
});

test('a package outside the typed catalog declares what it provides, or leaves its facts to the checker', () => {
  image('t')
    .base(base)
    .provision((p) => p.packages(['chrony-custom'], { provides: { service: ['chrony'], command: ['chronyc'] } }).enableService('chrony'));
  // The types do not carry every archive package: after one they do not, any service is accepted, and
  // the checker (which reads the archive) judges it.
  image('t')
    .base(base)
    .provision((p) => p.packages(['haproxy']).enableService('haproxy').lineInFile('/etc/haproxy/haproxy.cfg', { line: '    maxconn 4096' }));
});

test('modules add their facts', () => {
  image('t')
    .base(base)
    .provision((p) => p.use(containerd()).enableService('containerd'));
});

test('the facts of a module reach the caller without a type argument', () => {
  const chrony = defineModule((p) =>
    p.user('_chrony', { system: true }).directory('/etc/chrony', { owner: '_chrony' }).file('/etc/chrony/chrony.conf', { owner: 'root', content: '' }),
  );
  image('t')
    .base(base)
    .customize((p) => p.user('ops'))
    .provision((p) =>
      p
        .use(chrony)
        .file('/etc/chrony/x', { owner: '_chrony', content: '' })
        // the caller's user, unknown to the module, stays known after it
        .file('/etc/y', { owner: 'ops', content: '' })
        // @ts-expect-error: the module did not create user 'chrony'
        .file('/etc/z', { owner: 'chrony', content: '' }),
    );
  // A module body may refer to facts it does not create: the caller's (the checker checks them).
  const usesCallers = defineModule((p) => p.file('/etc/w', { owner: 'whoever', content: '' }));
  image('t')
    .base(base)
    .provision((p) =>
      p
        .use(usesCallers)
        .symlink('/etc/v', '/etc/w')
        // @ts-expect-error: the module added path '/etc/w', not user 'whoever'
        .file('/etc/u', { owner: 'whoever', content: '' }),
    );
});

test('a module written inline (a function of the builder) sees the caller\'s facts and adds its own', () => {
  image('t')
    .base(base)
    .customize((p) => p.user('ops'))
    .provision((p) =>
      p
        .use((q) => q.user('inl').file('/etc/i', { owner: 'ops', content: '' }))
        .use(containerd())
        .enableService('containerd')
        .file('/etc/j', { owner: 'inl', content: '' })
        // @ts-expect-error: no user 'nope' exists, inside an inline module too
        .use((q) => q.file('/etc/k', { owner: 'nope', content: '' })),
    );
});

test('a used module\'s facts reach every step after it: references, removals, conditions, the next phase', () => {
  const app = defineModule((p) =>
    p
      .user('app')
      .group('appgrp')
      .directory('/etc/app', { owner: 'app' })
      .unit('app.service', '[Service]\nExecStart=/bin/true\n')
      .packages(['chrony']),
  );
  const wraps = defineModule((p) => p.use(app).file('/etc/app/w', { owner: 'app', content: '' }));
  image('t')
    .base(base)
    .customize((p) => {
      const q = p.use(wraps);
      expectTypeOf<'app' | 'root'>().toExtend<FactsOf<typeof q>['user']>();
      expectTypeOf<'/etc/app' | '/etc/app/w' | '/etc/systemd/system/app.service'>().toExtend<FactsOf<typeof q>['path']>();
      expectTypeOf<'chrony'>().toExtend<FactsOf<typeof q>['package']>();
      expectTypeOf<'nope'>().not.toExtend<FactsOf<typeof q>['user']>();
      return q
        .file('/etc/app/x', { owner: 'app', group: 'appgrp', content: '' })
        .user('svc', { groups: ['appgrp'] })
        .enableService('app')
        .hold(['chrony'])
        .lineInFile('/etc/app/w', { line: 'x' })
        .dropIn('app', 'limits.conf', '[Service]\n')
        .when(variable('strict', z.boolean()), (r) => r.file('/etc/app/y', { owner: 'app', content: '' }))
        .file('/etc/app/z', { owner: 'app', content: '' })
        // @ts-expect-error: no user 'ap' exists, among the modules' users or the caller's
        .file('/etc/app/v', { owner: 'ap', content: '' });
    })
    // What the phase's modules added reaches the next phase, and a removal there takes it away.
    .provision((p) =>
      p
        .enableService('app')
        .maskService('app')
        .removePackages(['chrony'])
        .file('/etc/app/u', { owner: 'app', content: '' })
        // @ts-expect-error: service 'app' was masked
        .enableService('app'),
    );
  image('t')
    .base(base)
    .customize((p) =>
      p
        .use(app)
        .maskService('app')
        // @ts-expect-error: service 'app' was masked
        .enableService('app'),
    );
  image('t')
    .base(base)
    .customize((p) =>
      p
        .use(app)
        .removePackages(['chrony'])
        // @ts-expect-error: package 'chrony' was removed
        .hold(['chrony']),
    );
  image('t')
    .base(base)
    .customize((p) =>
      p
        .use(defineModule((q) => q.directory('/run/app')))
        .reboot()
        // @ts-expect-error: /run is empty after a reboot
        .lineInFile('/run/app', { line: 'x' }),
    );
  image('t')
    .base(base)
    .customize((p) =>
      p
        .use(app)
        .remove(['/etc/app'])
        // @ts-expect-error: /etc/app and what is below it were removed
        .lineInFile('/etc/app', { line: 'x' }),
    );
  image('t')
    .base(base)
    .customize((p) =>
      p
        .use(app)
        .command('userdel app', { removes: { user: ['app'] } })
        .file('/etc/app/t', { owner: 'root', content: '' })
        // @ts-expect-error: the command declares it removes user 'app'
        .file('/etc/app/s', { owner: 'app', content: '' }),
    );
});

test('non-literal strings fall back to the runtime checker', () => {
  const who: string = process.env['WHO'] ?? 'x';
  image('t')
    .base(base)
    .customize((p) => p.file('/etc/z', { owner: who, content: '' }));
});

test('the builder type lists known users', () => {
  image('t')
    .base(base)
    .customize((p) => {
      const q = p.user('kube');
      expectTypeOf<'kube'>().toExtend<FactsOf<typeof q>['user']>();
      expectTypeOf<'root'>().toExtend<FactsOf<typeof q>['user']>();
      expectTypeOf<'kbue'>().not.toExtend<FactsOf<typeof q>['user']>();
      expectTypeOf<'kube'>().toExtend<FactsOf<typeof q>['group']>();
      expectTypeOf<'/home/kube'>().toExtend<FactsOf<typeof q>['path']>();
      return q;
    });
});

test('a pinned package (apt name[:arch][=version]) provides what the unpinned one does', () => {
  image('t')
    .base(base)
    .provision((p) => p.packages(['containerd=1.6.20~ds1-1+b1', 'runc:amd64']).enableService('containerd').removePackages(['runc']));
  image('t')
    .base(base)
    // @ts-expect-error: the package is named 'containerd'; the pin is not part of its name
    .provision((p) => p.packages(['containerd=1.6.20~ds1-1+b1']).removePackages(['containerd=1.6.20~ds1-1+b1']));
});

test('types follow removals: a removed user, group, package, service or path is a type error later', () => {
  image('t')
    .base(base)
    .customize((p) =>
      p
        .user('kube')
        .command('userdel kube', { removes: { user: ['kube'] } })
        // @ts-expect-error: user 'kube' was removed
        .file('/etc/a', { owner: 'kube', content: '' }),
    );
  image('t')
    .base(base)
    .customize((p) => p.group('ops').command('groupdel ops', { removes: { group: ['ops'] } }))
    // @ts-expect-error: group 'ops' was removed in customize
    .provision((p) => p.file('/etc/a', { group: 'ops', content: '' }));
  image('t')
    .base(base)
    .provision((p) =>
      p
        .packages(['containerd'])
        .removePackages(['containerd'])
        // @ts-expect-error: service 'containerd' went with its package
        .enableService('containerd'),
    );
  image('t')
    .base(base)
    .provision((p) =>
      p
        .packages(['containerd'])
        .removePackages(['containerd'])
        // @ts-expect-error: package 'containerd' is no longer installed
        .removePackages(['containerd']),
    );
  image('t')
    .base(base)
    .provision((p) =>
      p
        .packages(['containerd'])
        .command('systemctl mask containerd', { removes: { service: ['containerd'] } })
        // @ts-expect-error: service 'containerd' was removed
        .disableService('containerd'),
    );
});

test('made again after a removal, it is known again; a removal of a plain string leaves the types alone', () => {
  const who: string = 'kube';
  image('t')
    .base(base)
    .customize((p) =>
      p
        .user('kube')
        .command('userdel kube', { removes: { user: ['kube'] } })
        .user('kube')
        .file('/etc/a', { owner: 'kube', content: '' })
        .command('userdel', { removes: { user: [who] } })
        .file('/etc/b', { owner: 'kube', content: '' }),
    );
});

test('a directory removed takes the paths below it out of the types too', () => {
  image('t')
    .base(base)
    .customize((p) => {
      const q = p.directory('/opt/t').directory('/opt/t/bin').command('rm -rf /opt/t', { removes: { path: ['/opt/t'] } });
      expectTypeOf<Extract<FactsOf<typeof q>['path'], '/opt/t' | '/opt/t/bin'>>().toBeNever();
      expectTypeOf<Extract<FactsOf<typeof q>['path'], '/opt'>>().toEqualTypeOf<'/opt'>();
      return q;
    });
});

test('a fact provided under a condition is not known after the block, unless both branches provide it', () => {
  const gpu = variable('gpu_types', z.boolean(), { default: false });
  const runtime = variable('runtime_types', z.enum(['containerd', 'crio']), { default: 'containerd' });
  image('t')
    .base(base)
    .customize((p) =>
      p
        .when(gpu, (p) => p.user('gpu').file('/etc/gpu', { owner: 'gpu', content: '' }))
        // @ts-expect-error: 'gpu' exists only when gpu_types is true
        .file('/etc/x', { owner: 'gpu', content: '' })
        .when(
          runtime.is('crio'),
          (p) => p.user('runner').group('crio'),
          (p) => p.user('runner'),
        )
        .file('/etc/y', { owner: 'runner', content: '' })
        // @ts-expect-error: group 'crio' exists only on one branch
        .file('/etc/z', { group: 'crio', content: '' }),
    );
});

test('a removal under a condition is a removal after the block', () => {
  const strip = variable('strip_types', z.boolean(), { default: true });
  image('t')
    .base(base)
    .customize((p) =>
      p
        .file('/etc/app.ini', { content: '' })
        .when(strip, (p) => p.remove(['/etc/app.ini']))
        // @ts-expect-error: /etc/app.ini may be gone
        .iniKey('/etc/app.ini', 'k', { value: 'v' }),
    );
});

test('a condition compares a variable with a value of its type', () => {
  const runtime = variable('runtime_types2', z.enum(['containerd', 'crio']), { default: 'containerd' });
  const n = variable('n_types', z.number(), { default: 1 });
  // @ts-expect-error: runtime_types2 is a string
  runtime.is(3);
  // @ts-expect-error: n_types is a number
  n.is('1');
  expectTypeOf(n.isNot(2)).toMatchObjectType<{ negate: boolean }>();
});

test('bootstrap sees the phases before it; what it makes stays on the host, out of the image', () => {
  image('t')
    .base(base)
    .customize((p) => p.user('ops'))
    .bootstrap((p) =>
      p
        .user('joiner')
        .file('/etc/joined', { owner: 'ops', content: '' })
        .file('/etc/joined-by', { owner: 'joiner', content: '' })
        // @ts-expect-error: no user 'opz' exists
        .file('/etc/x', { owner: 'opz', content: '' }),
    )
    .provision((p) =>
      // @ts-expect-error: 'joiner' exists on bootstrapped hosts only, never in the image
      p.file('/etc/y', { owner: 'joiner', content: '' }),
    );
});

test('drain sees the image phases before it; what it makes stays on the host, out of the image', () => {
  image('t')
    .base(base)
    .customize((p) => p.user('ops'))
    .drain((p) =>
      p
        .pre(event('stdout'))
        .file('/var/lib/drained', { owner: 'ops', content: '' })
        // @ts-expect-error: no user 'nobody-here' exists
        .file('/var/lib/x', { owner: 'nobody-here', content: '' }),
    );
  image('t')
    .base(base)
    .drain((p) => p.user('drainer'))
    .provision((p) =>
      // @ts-expect-error: 'drainer' exists on drained hosts only, never in the image
      p.file('/etc/y', { owner: 'drainer', content: '' }),
    );
});

test('decommission takes hooks only: its steps are the inverse of the runtime phases', () => {
  image('t')
    .base(base)
    .provision((p) => p.user('kube'))
    .decommission((d) => d.pre(event('stdout')).post(event('stdout')));
  image('t')
    .base(base)
    // @ts-expect-error: no steps on the decommission edge
    .decommission((d) => d.user('kube'));
});

test('a reboot is a step of the phases that change the root, and /run is empty after it', () => {
  image('t')
    .base(base)
    .customize((p) => p.file('/etc/motd', { content: '' }).reboot({ reason: 'new kernel', timeout: 300 }).lineInFile('/etc/motd', { line: 'x' }))
    // @ts-expect-error: artifacts are made from the finished root; there is no machine to reboot
    .artifact((a) => a.reboot());
  image('t')
    .base(base)
    .customize((p) =>
      p
        .file('/run/imgc.flag', { content: '' })
        .reboot()
        // @ts-expect-error: /run is a tmpfs, emptied by the reboot
        .lineInFile('/run/imgc.flag', { line: 'x' }),
    );
  // @ts-expect-error: verify checks the built image; it reboots nothing
  image('t').base(base).verify((v) => v.reboot());
});

test("the release sources' services, commands and paths reach later steps", () => {
  const sum = 'a'.repeat(64);
  const tag = variable('k8s_version', z.string(), { default: '1.36.1' });
  image('t')
    .base(base)
    .provision((p) => {
      const q = p
        .packages(['curl'])
        .use(containerd({ source: 'release', url: 'https://example.org/containerd.tar.gz', sha256: sum, runc: { url: 'https://example.org/runc', sha256: sum } }))
        .use(crictl({ url: 'https://example.org/crictl.tar.gz', sha256: sum }))
        .use(kubernetesCni({ url: 'https://example.org/cni.tgz', sha256: sum }))
        .use(kubernetes({ source: 'release', version: tag, sha256: { kubeadm: sum, kubelet: sum, kubectl: sum } }))
        .dropIn('containerd', '20-x.conf', '[Service]\n')
        .enableService('kubelet');
      expectTypeOf<'kubeadm' | 'kubelet' | 'kubectl' | 'crictl' | 'ctr' | 'containerd' | 'runc'>().toExtend<FactsOf<typeof q>['command']>();
      expectTypeOf<'/etc/containerd/config.toml' | '/opt/cni/bin/bridge' | '/etc/kubernetes-version'>().toExtend<FactsOf<typeof q>['path']>();
      return q;
    });
  image('t')
    .base(base)
    .provision((p) => {
      const q = p.use(kubernetes({ source: 'debian' }));
      // Debian ships kubectl, not kubeadm.
      expectTypeOf<'kubeadm'>().not.toExtend<FactsOf<typeof q>['command']>();
      return q;
    });
  image('t')
    .base(base)
    .provision((p) => {
      const q = p.packages(['curl']).download('https://example.org/kubeadm', '/usr/local/bin/kubeadm', { sha256: sum });
      // Downloaded without an executable mode it is a file, not a command.
      expectTypeOf<'kubeadm'>().not.toExtend<FactsOf<typeof q>['command']>();
      return q;
    });
});

test('a list variable is a package list: packages(list) type-checks and adds no package fact; it is no string and no condition', () => {
  const extraDebs = variable('extra_debs_types', z.array(z.string()), { default: [] });
  expectTypeOf(extraDebs.type).toEqualTypeOf<'list'>();
  // @ts-expect-error: a list variable's default is a list of strings
  variable('extra_debs_types2', z.array(z.string()), { default: 'tree bc' });
  image('t')
    .base(base)
    .customize((p) => {
      const q = p.packages(extraDebs).packages(['jq']).hold(['jq']);
      // The list's names are known only when the output runs: no package fact.
      expectTypeOf<Extract<FactsOf<typeof q>['package'], 'tree'>>().toBeNever();
      return (
        q
          // @ts-expect-error: no package 'tree' is known, whatever the list holds when the output runs
          .hold(['tree'])
          // @ts-expect-error: a list variable is no string (in a template literal TypeScript allows any value: imgc refuses it when the definition runs, IMGC1002)
          .file('/etc/x', { content: extraDebs })
          // @ts-expect-error: a list variable decides no condition
          .when(extraDebs, (p) => p)
      );
    });
  // @ts-expect-error: a list variable has no is()
  extraDebs.is(['tree']);
});

test('a matrix: each combination typed with the axes\' literal values, exclusions checked against them', () => {
  variants(
    { k8s: ['1.30', '1.31'], source: ['upstream', 'debian'] },
    (v) => {
      expectTypeOf(v.k8s).toEqualTypeOf<'1.30' | '1.31'>();
      // @ts-expect-error: '1.29' is not a value of the axis k8s
      if (v.k8s === '1.29') return image('never').base(base);
      return image(`k8s-node-${v.k8s}-${v.source}`).base(base);
    },
    {
      exclude: [
        { k8s: '1.30', source: 'debian' },
        // @ts-expect-error: '1.29' is not a value of the axis k8s
        { k8s: '1.29' },
        // @ts-expect-error: there is no axis arch
        { arch: 'arm64' },
      ],
    },
  );
  // @ts-expect-error: an axis needs at least one value
  variants({ k8s: [] }, () => image('t').base(base));
});
