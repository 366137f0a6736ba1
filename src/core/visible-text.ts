/**
 * Text a person reads (an approval prompt, the approvals page, a CLI line) comes in part from
 * agents and servers, and characters that render as nothing, or reorder what follows them, can make
 * a call look like another: bidi embeddings, overrides and isolates (the "Trojan Source" attack,
 * CVE-2021-42574), zero-width characters, Unicode tag characters (invisible ASCII look-alikes),
 * and control characters that drive a terminal. Each is shown as a visible escape instead.
 *
 * The set: C0 and C1 controls, U+061C, U+180E, U+200B–U+200F, U+2028–U+2029, U+202A–U+202E,
 * U+2060–U+206F, U+FEFF, U+FFF9–U+FFFB, and the tag block U+E0000–U+E007F.
 */
export const INVISIBLE_CHARACTERS_SOURCE =
  "[\\u0000-\\u001f\\u007f-\\u009f\\u061c\\u180e\\u200b-\\u200f\\u2028-\\u202e\\u2060-\\u206f\\ufeff\\ufff9-\\ufffb\\u{e0000}-\\u{e007f}]";

const INVISIBLE = new RegExp(INVISIBLE_CHARACTERS_SOURCE, "gu");

function hex4(code: number): string {
  return code.toString(16).padStart(4, "0");
}

/** `a\u202eb` shows as `a\u202eb` (six visible characters), a tag character as `\u{e0041}`. */
export function showInvisible(text: string): string {
  return text.replace(INVISIBLE, (c) => {
    const code = c.codePointAt(0) ?? 0;
    return code > 0xffff ? `\\u{${code.toString(16)}}` : `\\u${hex4(code)}`;
  });
}

/**
 * The same for JSON text (from `JSON.stringify`), with JSON's own escapes (`\u202e`, a tag
 * character as its surrogate pair): the result parses to exactly the same value, so it suits
 * `--json` output and a prompt's arguments. Such a character can only sit inside a string, where
 * escaping it is lossless; raw newlines and tabs can only be layout (stringify escapes them in strings).
 */
export function showInvisibleInJson(json: string): string {
  return json.replace(INVISIBLE, (c) => {
    if (c === "\n" || c === "\t") return c;
    let out = "";
    for (let i = 0; i < c.length; i++) out += `\\u${hex4(c.charCodeAt(i))}`;
    return out;
  });
}
