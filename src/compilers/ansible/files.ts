// The files every playbook directory imgc writes carries beside its playbook
// (site.yml, runtime.yml, decommission.yml): Ansible's settings and the
// image's names and variable defaults.
import type { Image } from '../../ir/schema.js';
import { unsafe } from '../../emit/ansible/quote.js';
import { document, map } from '../../emit/ansible/yaml.js';
import { variableDefaults } from './variables.js';

export const groupVars = (ir: Image): string =>
  document(
    map({
      imgc_image: unsafe(ir.name),
      imgc_base: unsafe(ir.base.name),
      imgc_source: unsafe(ir.source),
      ...variableDefaults(ir),
    }),
    [
      'The definition\'s names, for hooks (imgc_image is in every event) and your own tasks.',
      ...(ir.variables?.length ? ['Then its variables\' values (-e overrides them); sensitive ones are not here: give them with -e or a vault file.'] : []),
    ],
  );

export const ansibleCfg = [
  '# Written by imgc: settings for running site.yml from this directory. Nothing here',
  '# needs network; no collection or role is fetched.',
  '[defaults]',
  '# The roles next to site.yml (relative to this file).',
  'roles_path = ./roles',
  '# Every play sets gather_facts: false; no module here needs facts.',
  'gathering = explicit',
  "# The target's /usr/bin/python3 runs the modules; do not warn about finding it.",
  'interpreter_python = auto_silent',
  '',
].join('\n');
