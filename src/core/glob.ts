/**
 * Tool-name globs: `*` matches any run of characters (including `/` and `.`), `?` one character,
 * everything else itself. Case-sensitive, byte-for-byte (a tool named `Delete` is not `delete`).
 */
export type Glob = { source: string; test(name: string): boolean };

export function compileGlob(pattern: string): Glob {
  if (!/[*?]/.test(pattern)) return { source: pattern, test: (name) => name === pattern };
  // `*` alone (the most common rule) matches every name: no expression to run per call.
  if (pattern === "*") return { source: pattern, test: () => true };
  const body = pattern.replace(/[.+^${}()|[\]\\*?]/g, (c) => (c === "*" ? "[\\s\\S]*" : c === "?" ? "[\\s\\S]" : `\\${c}`));
  const regex = new RegExp(`^${body}$`, "u");
  return { source: pattern, test: (name) => regex.test(name) };
}
