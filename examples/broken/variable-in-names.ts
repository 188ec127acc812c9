// expect: IMGC0011 line 19
// expect: IMGC0011 line 20
// expect: IMGC0011 line 20
// expect: IMGC0011 line 20
// expect: IMGC0011 line 21
// expect: IMGC0011 line 22
// expect: IMGC0011 line 23
// expect: IMGC0011 line 24
// expect: IMGC0011 line 25
// exit: 1
// Names are fact keys other steps refer to: each must be a literal, and
// each field holding a variable is reported, naming it.
import { debian12, image, variable, z } from 'imgc';

const who = variable('who', z.string(), { default: 'ops' });

export default image('variable-in-names')
  .base(debian12({ include: ['systemd'] }))
  .customize((p) => p.group(`${who}`)
    .user(`${who}-svc`, { groups: [`${who}`] })
    .file('/etc/owned', { content: '', owner: `${who}`, group: 'root' })
    .packages([`${who}-tools`])
    .enableService(String(who))
    .sysctl(`net.${who}`, 1)
    .kernelModule(`${who}`),
  );
