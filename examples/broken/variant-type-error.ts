// expect: IMGC0003 line 14 (also a type error)
// exit: 1
// A typo TypeScript sees in the file and the contract checker in the one combination that takes that branch:
// one diagnostic, named by that combination, that says TypeScript saw it too.
import { debian12, image, variants } from 'imgc';

export default variants({ role: ['db', 'web'] }, (v) =>
  image(`app-${v.role}`)
    .base(debian12())
    .customize((p) => {
      const q = p.user('www');
      return v.role === 'db'
        ? q.file('/srv/index.html', { content: 'hi\n' })
        : q.file('/srv/index.html', { owner: 'wwww', content: 'hi\n' });
    }),
);
