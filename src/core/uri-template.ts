/**
 * Whether a URI is one a URI template (RFC 6570, the form MCP resource templates use) expands to.
 * Each expression matches what its operator can produce: `{x}`, `{.x}`, `{;x}`, `{?x}`, `{&x}` no
 * `/`; `{/x}` path segments; `{+x}` and `{#x}` anything (reserved expansion). Literal text must
 * match exactly.
 */
export function uriTemplateMatches(template: string, uri: string): boolean {
  let pattern = "^";
  let last = 0;
  for (const match of template.matchAll(/\{([+#./;?&]?)[^}]*\}/g)) {
    pattern += escape(template.slice(last, match.index));
    const operator = match[1];
    pattern += operator === "+" || operator === "#" ? ".*" : operator === "/" ? "(?:/[^?#]*)*" : "[^/]*";
    last = match.index + match[0].length;
  }
  pattern += `${escape(template.slice(last))}$`;
  try {
    return new RegExp(pattern, "su").test(uri);
  } catch {
    return false;
  }
}

function escape(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\/]/g, "\\$&");
}
