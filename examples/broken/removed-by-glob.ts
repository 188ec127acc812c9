// expect: IMGC0005 line 14
// exit: 1
// A glob removes every path it names with what lies below it: the
// configuration directory is gone when its file is written.
import { debian12, image } from 'imgc';

export default image('removed-by-glob')
  .base(debian12())
  .customize((p) =>
    p
      .directory('/opt/app')
      .directory('/opt/app/conf')
      .remove(['/opt/app/*'])
      .file('/opt/app/conf/app.toml', { content: 'x = 1\n' }),
  );
