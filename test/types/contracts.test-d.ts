import { expectTypeOf, test } from 'vitest';
import { debian12, image, containerd, type FactsOf } from 'imgc';

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

test('modules add their facts', () => {
  image('t')
    .base(base)
    .provision((p) => p.use(containerd()).enableService('containerd'));
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
