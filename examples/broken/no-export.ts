// expect: IMGC1003
// exit: 2
// The image is built but never exported.
import { debian12, image } from 'imgc';

image('no-export').base(debian12());
