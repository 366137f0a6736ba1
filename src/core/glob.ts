/**
 * Globs, for tool names, server ids, methods, URIs and argument values: `*` matches any run of
 * characters (including `/` and `.`), `?` one character, `{a,b,c}` any one of the alternatives
 * (each a glob itself, nested groups included), everything else itself. Case-sensitive,
 * byte-for-byte (a tool named `Delete` is not `delete`). Braces without a comma at their own level,
 * or without their partner, are plain characters, as in a shell: `{x}` matches `{x}`.
 */
export type Glob = { source: string; test(name: string): boolean };

export function compileGlob(pattern: string): Glob {
  if (!/[*?{]/.test(pattern)) return { source: pattern, test: (name) => name === pattern };
  // `*` alone (the most common rule) matches every name: no expression to run per call.
  if (pattern === "*") return { source: pattern, test: () => true };
  const groups = braceGroups(pattern);
  let body = "";
  for (let i = 0; i < pattern.length; i++) {
    const c = pattern[i] as string;
    const group = groups.get(i);
    if (group === "open") body += "(?:";
    else if (group === "close") body += ")";
    else if (group === "comma") body += "|";
    else if (c === "*") body += "[\\s\\S]*";
    else if (c === "?") body += "[\\s\\S]";
    else body += c.replace(/[.+^${}()|[\]\\]/g, (x) => `\\${x}`);
  }
  const regex = new RegExp(`^${body}$`, "u");
  return { source: pattern, test: (name) => regex.test(name) };
}

/**
 * Which braces and commas of the pattern form alternations: a `{` with its matching `}` and at
 * least one comma between them at that level. Everything else is literal.
 */
function braceGroups(pattern: string): Map<number, "open" | "close" | "comma"> {
  const roles = new Map<number, "open" | "close" | "comma">();
  const stack: Array<{ open: number; commas: number[] }> = [];
  for (let i = 0; i < pattern.length; i++) {
    const c = pattern[i];
    if (c === "{") stack.push({ open: i, commas: [] });
    else if (c === "," && stack.length > 0) stack[stack.length - 1]?.commas.push(i);
    else if (c === "}" && stack.length > 0) {
      const group = stack.pop() as { open: number; commas: number[] };
      if (group.commas.length === 0) continue;
      roles.set(group.open, "open");
      roles.set(i, "close");
      for (const comma of group.commas) roles.set(comma, "comma");
    }
  }
  return roles;
}
