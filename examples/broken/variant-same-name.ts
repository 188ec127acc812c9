// expect: IMGC1002 line 6
// exit: 2
// Two combinations make the same image name (the size is left out of it): the matrix is refused where it is declared.
import { debian12, image, variants } from 'imgc';

export default variants(
  { role: ['db', 'web'], size: ['small', 'large'] },
  (v) => image(`app-${v.role}`).base(debian12()),
);
