// expect: IMGC0016 line 20
// exit: 1
// kubectl pinned to one version in provision and to an older one in a later
// phase: apt refuses the downgrade, so the build would fail there.
import { debian12, image } from 'imgc';

const uri = 'https://pkgs.k8s.io/core:/stable:/v1.31/deb/';

export default image('pinned-twice')
  .base(debian12({ include: ['curl', 'ca-certificates'] }))
  .provision((p) =>
    p
      .aptRepository('kubernetes', { uri, suites: ['/'], keyUrl: `${uri}Release.key` })
      .packages(['kubectl=1.31.3-1.1']),
  )
  .phase('tools', (p) =>
    p
      .command('kubectl version --client', { requires: { command: ['kubectl'] } })
      // another pin of the same package
      .packages(['kubectl=1.31.1-1.1']),
  );
