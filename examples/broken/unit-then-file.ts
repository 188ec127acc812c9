// expect: IMGC0006 line 13
// exit: 1
// A unit and a later file write one path: the file would silently replace the unit in every target.
import { debian12, image } from 'imgc';

export default image('unit-then-file')
  .base(debian12())
  .customize((p) =>
    p.unit('node-exporter.service', '[Service]\nExecStart=/usr/local/bin/node_exporter\n'),
  )
  .provision((p) =>
    p
      .file('/etc/systemd/system/node-exporter.service', { content: '[Service]\nExecStart=/usr/bin/prometheus-node-exporter\n' }),
  );
