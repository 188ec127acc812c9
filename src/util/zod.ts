// zod, as imgc's own modules and the definitions that import `z` from imgc get it.
export { z } from 'zod';
