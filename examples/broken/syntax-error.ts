// expect: IMGC1006 line 8
// exit: 2
// A missing closing parenthesis.
import { debian12, image } from 'imgc';

export default image('syntax-error')
  .base(debian12()
  .customize((p) => p.user('ops'));
