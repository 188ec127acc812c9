// expect: IMGC1004 line 9
// exit: 2
// useradd refuses upper case and blanks: caught when the definition loads.
import { debian12, image } from 'imgc';

export default image('bad-user-name')
  .base(debian12())
  .customize((p) =>
    p.user('Kube Admin'),
  );
