// expect: IMGC0001 line 16
// expect: IMGC0001 line 17
// expect: IMGC0001 line 17
// exit: 1
// Fetching by URL needs curl in the root (a chroot build hands the file over,
// the other targets fetch on the host), and a .tar.xz needs xz: nothing here
// installs them (the fix, before them: .packages(['curl'])
// .packages(['xz-utils'], { provides: { command: ['xz'] } })).
import { debian12, image } from 'imgc';

const sha256 = '2b2fd0b5c9d4d4b3f0f5c1c6c1d1b0e1f5a4c3d2e1f0a9b8c7d6e5f4a3b2c1d0';

export default image('url-without-curl')
  .base(debian12())
  .provision((p) =>
    p.download('https://downloads.example.org/kubectl', '/usr/local/bin/kubectl', { sha256, mode: '0755' })
      .archive('https://downloads.example.org/tool.tar.xz', '/opt/tool', { sha256, creates: ['/opt/tool/bin/tool'] }),
  );
