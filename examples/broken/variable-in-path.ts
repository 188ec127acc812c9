// expect: IMGC0011 line 11
// exit: 1
// A path is a fact key other steps refer to: it must be a literal.
import { debian12, image, variable, z } from 'imgc';

const dir = variable('data_dir', z.string(), { default: 'data' });

export default image('variable-in-path')
  .base(debian12())
  .customize((p) =>
    p.directory(`/srv/${dir}`),
  );
