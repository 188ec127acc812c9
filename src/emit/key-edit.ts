// One key of a TOML or YAML file, set or removed by a real parser of the
// format in the root: tomlkit and ruamel.yaml, the Python libraries that read
// and write a file keeping its comments, order and layout (Debian and Ubuntu
// ship both; tomllib in Python 3.11 only reads, and PyYAML drops comments).
// The program is written once here: the shell helper runs it with
// `/usr/bin/python3 -c` (the interpreter the distribution's packages install
// the libraries for; a python3 earlier on PATH, a venv's, may lack them),
// Ansible's command task runs the same text, so every target leaves the same
// bytes. It holds no single quote (the shell helper quotes it
// whole) and takes every value as an argument, the key path and the value as
// JSON, so no user text is ever part of code.
//
//   /usr/bin/python3 -c PROGRAM FORMAT FILE KEYS_JSON VALUE_JSON STATE
//
// It prints `changed` when it rewrote the file, nothing when the key already
// was as asked, and exits non-zero with `imgc: FILE: why` when it cannot.

/** The Python packages (Debian and Ubuntu names; dnf spells ruamel's `python3-ruamel-yaml`) the program imports per format. */
export const keyEditParsers = {
  toml: { apt: 'python3-tomlkit', dnf: 'python3-tomlkit' },
  yaml: { apt: 'python3-ruamel.yaml', dnf: 'python3-ruamel-yaml' },
} as const;

export type KeyFormat = keyof typeof keyEditParsers;

export const keyEditProgram = [
  'import io, json, os, sys, tempfile',
  'from collections.abc import MutableMapping',
  'fmt, path, state = sys.argv[1], sys.argv[2], sys.argv[5]',
  'keys, value = json.loads(sys.argv[3]), json.loads(sys.argv[4])',
  'def fail(why):',
  '    sys.exit("imgc: %s: %s" % (path, why))',
  'real = os.path.realpath(path)',
  'if not os.path.isfile(real):',
  '    fail("no such file (a key is set in an existing file)")',
  'with open(real, encoding="utf-8", newline="") as f:',
  '    text = f.read()',
  'if fmt == "toml":',
  '    import tomlkit',
  '    load, dump, table = tomlkit.parse, tomlkit.dumps, tomlkit.table',
  'else:',
  '    from ruamel.yaml import YAML',
  '    from ruamel.yaml.comments import CommentedMap as table',
  '    yaml = YAML()',
  '    yaml.preserve_quotes = True',
  '    yaml.width = 4096',
  '    # A float as YAML 1.1 readers (PyYAML, so Ansible) take it too: with a point before an exponent.',
  '    def floating(r, v):',
  '        t = repr(v)',
  '        return r.represent_scalar("tag:yaml.org,2002:float", t.replace("e", ".0e", 1) if "." not in t else t)',
  '    yaml.representer.add_representer(float, floating)',
  '    def load(t):',
  '        docs = list(yaml.load_all(t))',
  '        if len(docs) > 1:',
  '            fail("holds %d YAML documents; a key is set in a file of one" % len(docs))',
  '        return table() if not docs or docs[0] is None else docs[0]',
  '    def dump(d):',
  '        out = io.StringIO()',
  '        yaml.dump(d, out)',
  '        return out.getvalue()',
  '# A value with its type: true is not 1, 1 is not "1" (Python says True == 1).',
  'def typed(v):',
  '    v = v.unwrap() if hasattr(v, "unwrap") else v',
  '    for t in (bool, int, float, str):',
  '        if isinstance(v, t):',
  '            return (t, v)',
  '    return (type(v), v)',
  'def walk(doc, make):',
  '    node = doc',
  '    if not isinstance(node, MutableMapping):',
  '        fail("its top level is not a table of keys")',
  '    for i, k in enumerate(keys[:-1]):',
  '        if k not in node:',
  '            if not make:',
  '                return None',
  '            node[k] = table()',
  '        node = node[k]',
  '        if not isinstance(node, MutableMapping):',
  '            fail("%s holds a value, not a table of keys" % json.dumps(keys[:i + 1], ensure_ascii=False))',
  '    return node',
  'try:',
  '    doc = load(text)',
  'except Exception as e:',
  '    fail("not %s: %s" % (fmt.upper(), str(e).splitlines()[0] if str(e) else type(e).__name__))',
  'node = walk(doc, state == "present")',
  'last = keys[-1]',
  'if state == "present":',
  '    if last in node and isinstance(node[last], MutableMapping):',
  '        fail("%s is a table of keys; a value does not replace it" % json.dumps(keys, ensure_ascii=False))',
  '    if last in node and typed(node[last]) == typed(value):',
  '        sys.exit(0)',
  '    node[last] = value',
  'else:',
  '    if node is None or last not in node:',
  '        sys.exit(0)',
  '    del node[last]',
  'new = dump(doc)',
  '# Read back before it replaces the file: a writer bug never leaves a broken file.',
  'back = walk(load(new), False)',
  'if (last in back and typed(back[last]) == typed(value)) if state == "present" else (back is None or last not in back):',
  '    pass',
  'else:',
  '    fail("the edited text does not read back as asked; the file is left as it was")',
  'if new == text:',
  '    sys.exit(0)',
  'st = os.stat(real)',
  'fd, tmp = tempfile.mkstemp(dir=os.path.dirname(real), prefix=".imgc-")',
  'try:',
  '    with os.fdopen(fd, "w", encoding="utf-8", newline="") as f:',
  '        f.write(new)',
  '    os.chown(tmp, st.st_uid, st.st_gid)',
  '    os.chmod(tmp, st.st_mode & 0o7777)',
  '    os.replace(tmp, real)',
  'except BaseException:',
  '    os.unlink(tmp)',
  '    raise',
  'print("changed")',
].join('\n');
