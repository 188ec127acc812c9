// expect: IMGC0005 line 11
// exit: 1
// curl is removed in customize, but the upstream repository's key is
// downloaded with it later.
import { debian12, image } from 'imgc';

export default image('removed-then-required')
  .base(debian12({ include: ['curl', 'ca-certificates'] }))
  .customize((p) => p.removePackages(['curl']))
  .provision((p) =>
    p.aptRepository('kubernetes', {
      uri: 'https://pkgs.k8s.io/core:/stable:/v1.30/deb/',
      suites: ['/'],
      keyUrl: 'https://pkgs.k8s.io/core:/stable:/v1.30/deb/Release.key',
    }),
  );
