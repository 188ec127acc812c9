// The tag-free text of YAML scalars that both YAML backends' quote modules
// build on (ansible/quote.ts, cloud-init/quote.ts): which characters are never
// written raw, their double-quoted escapes, and single quoting. Choosing a
// style, folding, tags (Ansible's `!unsafe`) and what a backend refuses stay
// in each backend's quote module.

/**
 * Code points never written raw: C0 controls (tab and newline included: the
 * caller decides where they may go raw), DEL, C1 controls with NEL, NBSP and
 * soft hyphen, the invisible and bidirectional controls a reviewer would not
 * see, U+2028/9 (line breaks to YAML 1.1), U+FEFF, U+FFFE/F and lone surrogates.
 */
export const mustEscape = (cp: number): boolean =>
  cp < 0x20 ||
  cp === 0x7f ||
  (cp >= 0x80 && cp <= 0x9f) ||
  cp === 0xa0 ||
  cp === 0xad ||
  cp === 0x061c ||
  (cp >= 0x200b && cp <= 0x200f) ||
  (cp >= 0x2028 && cp <= 0x202e) ||
  (cp >= 0x2060 && cp <= 0x2064) ||
  (cp >= 0x2066 && cp <= 0x2069) ||
  cp === 0xfeff ||
  cp === 0xfffe ||
  cp === 0xffff ||
  (cp >= 0xd800 && cp <= 0xdfff);

/** Upper-case hex digits of `cp`, zero-padded to `width`. */
export const hex = (cp: number, width: number): string => cp.toString(16).toUpperCase().padStart(width, '0');

/** One code point as it goes inside a double-quoted scalar: itself, or its escape. */
export const escapeChar = (ch: string): string => {
  switch (ch) {
    case '\\':
      return '\\\\';
    case '"':
      return '\\"';
    case '\t':
      return '\\t';
    case '\n':
      return '\\n';
    case '\r':
      return '\\r';
    case '\u0085':
      return '\\N';
    case '\u00a0':
      return '\\_';
    case '\u2028':
      return '\\L';
    case '\u2029':
      return '\\P';
  }
  const cp = ch.codePointAt(0)!;
  if (!mustEscape(cp)) return ch;
  return cp <= 0xff ? `\\x${hex(cp, 2)}` : `\\u${hex(cp, 4)}`;
};

/**
 * Words that some YAML reader takes for something other than a string when
 * they are written plain: booleans and nulls of YAML 1.1 (PyYAML) and 1.2,
 * and an exponent without a mantissa ("E0", "e+5"), which the yaml
 * package's YAML 1.1 schema reads as a float (NaN). Plain-scalar rules that
 * let a word start with a letter must also check this.
 */
export const notAStringWhenPlain = /^(?:y|Y|yes|Yes|YES|n|N|no|No|NO|true|True|TRUE|false|False|FALSE|on|On|ON|off|Off|OFF|null|Null|NULL|~|[eE][-+]?[0-9]+)$/;

/** A single-quoted scalar (the caller checked that `s` is one printable line). */
export const singleQuoted = (s: string): string => `'${s.replaceAll("'", "''")}'`;
