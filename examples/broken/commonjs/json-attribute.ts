// expect: IMGC1001 line 8
// exit: 1
// This directory's package.json has no "type": "module", so TypeScript takes
// the file for CommonJS, where an import attribute is refused (TS2856). In an
// ES module package it checks clean: the type-check's answer, and its cache,
// follow the package.json files above the definition.
import { debian12, image } from 'imgc';
import motd from './motd.json' with { type: 'json' };

export default image('commonjs-json-attribute')
  .base(debian12())
  .customize((p) => p.file('/etc/motd', { content: motd.text }));
