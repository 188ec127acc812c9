// expect: IMGC0003 line 15
// exit: 1
// A matrix with one broken combination: only app-web-large writes a file owned by a user no step
// creates. imgc check names that combination in its diagnostic and says nothing of the others.
import { debian12, image, variants } from 'imgc';

// A non-literal name: the types cannot see it, the contract checker can.
const owner: string = ['www'][0]!;

export default variants(
  { role: ['db', 'web'], size: ['small', 'large'] },
  (v) =>
    image(`app-${v.role}-${v.size}`)
      .base(debian12())
      .customize((p) => (v.role === 'web' && v.size === 'large' ? p.file('/srv/index.html', { owner, content: 'hi\n' }) : p.file('/srv/index.html', { content: 'hi\n' }))),
  { exclude: [{ role: 'db', size: 'large' }] },
);
