/**
 * A server command given as one string, as Gemini CLI's and Qwen Code's `mcp.serverCommand` is:
 * split into words the way they split it (the `shell-quote` package's `parse`: spaces separate,
 * '…' is literal, "…" and bare words expand `$VAR` and `${VAR}` from the environment, a backslash
 * escapes), and a shim put in front of it by prefixing quoted words, so the original string stays
 * byte for byte what follows. Only what the agents accept is read: an operator, a glob or a comment
 * (which `parse` returns as objects, and the agents refuse) gives null.
 */

/** The words of `text`, or null when the agent would refuse it (or it is something this reading does not follow). */
export function splitCommandLine(text: string, env: Record<string, string | undefined>): string[] | null {
  const words: string[] = [];
  let word: string | null = null;
  const add = (chars: string) => {
    word = (word ?? "") + chars;
  };
  for (let i = 0; i < text.length; i++) {
    const c = text[i] as string;
    if (/\s/.test(c)) {
      if (word !== null) words.push(word);
      word = null;
    } else if (c === "'") {
      const end = text.indexOf("'", i + 1);
      if (end < 0) return null;
      add(text.slice(i + 1, end));
      i = end;
    } else if (c === '"') {
      let j = i + 1;
      let inner = "";
      for (; j < text.length && text[j] !== '"'; j++) {
        if (text[j] === "\\" && j + 1 < text.length) inner += text[++j];
        else if (text[j] === "$") {
          const ref = variable(text, j, env);
          if (!ref) return null;
          inner += ref.value;
          j = ref.end - 1;
        } else inner += text[j];
      }
      if (j >= text.length) return null;
      add(inner);
      i = j;
    } else if (c === "\\") {
      if (i + 1 >= text.length) return null;
      add(text[++i] as string);
    } else if (c === "$") {
      const ref = variable(text, i, env);
      if (!ref) return null;
      add(ref.value);
      i = ref.end - 1;
    } else if (/[|&;<>()`*?[\]#{}]/.test(c)) {
      return null;
    } else add(c);
  }
  if (word !== null) words.push(word);
  return words.length > 0 ? words : null;
}

/** `$NAME` or `${NAME}` at `at`: its value (unset: empty, as `parse` makes it) and where it ends. */
function variable(text: string, at: number, env: Record<string, string | undefined>): { value: string; end: number } | null {
  const braced = /^\$\{([A-Za-z_][A-Za-z0-9_]*)\}/.exec(text.slice(at));
  const bare = braced ? null : /^\$([A-Za-z_][A-Za-z0-9_]*)/.exec(text.slice(at));
  const match = braced ?? bare;
  if (!match?.[1]) return null;
  return { value: env[match[1]] ?? "", end: at + match[0].length };
}

/** Words quoted so `splitCommandLine` (and the agents) read them back exactly, with no expansion. */
export function quoteCommandLine(words: readonly string[]): string {
  return words.map((word) => (/^[\w@%+=:,./-]+$/.test(word) ? word : `'${word.replaceAll("'", `'"'"'`)}'`)).join(" ");
}
