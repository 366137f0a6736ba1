import { isDeepStrictEqual } from "node:util";
import { isMap, isSeq, parseDocument, YAMLSeq, type Node } from "yaml";
import { parseYaml } from "../../core/config/yaml.ts";
import { showInvisible } from "../../core/visible-text.ts";

/** A rule as it is written into a policy file: strings, the server's program (a list of strings, or a URL), and the project it is kept to. */
export type RuleText = {
  id: string;
  match: string;
  method: string;
  source: string;
  server?: { command: string[] } | { url: string };
  project?: string;
  action: "forward" | "policy";
  policy_id?: string;
};

export type EditResult = { ok: true; text: string } | { ok: false; reason: string };

/**
 * Insert one rule into a policy file's `governance.rules` at `index` (the length: at the end),
 * with `comment` on the line above it, changing nothing else: the text is spliced, so the file's
 * comments, quoting and layout stay as they were. A block list gets a `- { … }` line at its items'
 * indentation, above any comment lines that belong to the rule it goes before; a flow list gets
 * the rule between its items. A file without a list of rules gets one through the YAML document
 * (comments kept, layout normalised). Either way the result is parsed again and must be the same
 * document with the one rule added, or nothing is written.
 */
export function insertRule(text: string, index: number, given: RuleText, note: string): EditResult {
  const rule = Object.fromEntries(Object.entries(given).filter(([, value]) => value !== undefined)) as RuleText;
  // One line, whatever the names in it hold: a line break would end the comment and start YAML.
  const comment = showInvisible(note);
  const spliced = splice(text, index, rule, comment);
  const edited = spliced ?? viaDocument(text, rule, comment);
  if (edited === null) return { ok: false, reason: "the file's governance section is not a mapping" };
  return sameButTheRule(text, edited, index, rule) ? { ok: true, text: edited } : { ok: false, reason: "the rule could not be added without changing something else in the file" };
}

function splice(text: string, index: number, rule: RuleText, comment: string): string | null {
  const doc = parseDocument(text, { keepSourceTokens: false });
  if (doc.errors.length > 0) return null;
  const rules = doc.getIn(["governance", "rules"], true) as Node | undefined;
  if (!isSeq(rules) || rules.items.length === 0) return null;
  const items = rules.items as Node[];
  const flowRule = flowMap(rule);
  if (rules.flow) {
    const commented = commentAbove(text, lineStart(text, rules.range?.[0] ?? 0), comment);
    const shift = commented.length - text.length;
    if (index < items.length) {
      const at = (items[index]?.range?.[0] ?? -1) + shift;
      return at < shift ? null : `${commented.slice(0, at)}${flowRule}, ${commented.slice(at)}`;
    }
    const at = (items.at(-1)?.range?.[1] ?? -1) + shift;
    return at < shift ? null : `${commented.slice(0, at)}, ${flowRule}${commented.slice(at)}`;
  }
  const dashLine = (item: Node | undefined): { start: number; indent: string } | null => {
    const at = item?.range?.[0];
    if (at === undefined) return null;
    const start = lineStart(text, at);
    const head = /^( *)- +$/.exec(text.slice(start, at));
    return head ? { start, indent: head[1] ?? "" } : null;
  };
  const first = dashLine(items[0]);
  if (!first) return null;
  const lines = (indent: string) => `${indent}# ${comment}\n${indent}- ${flowRule}\n`;
  if (index < items.length) {
    const before = dashLine(items[index]);
    if (!before) return null;
    // Comment lines right above a rule, at its indentation, are about that rule: stay with it.
    let at = before.start;
    for (;;) {
      const previous = lineStart(text, Math.max(0, at - 1));
      if (at === 0 || !new RegExp(`^${before.indent}#`).test(text.slice(previous, at))) break;
      at = previous;
    }
    return `${text.slice(0, at)}${lines(before.indent)}${text.slice(at)}`;
  }
  const end = items.at(-1)?.range?.[2];
  if (end === undefined) return null;
  const newline = text[end - 1] === "\n" ? "" : "\n";
  return `${text.slice(0, end)}${newline}${lines(first.indent)}${text.slice(end)}`;
}

/** `governance` or `governance.rules` is missing, empty or null: add them through the document. */
function viaDocument(text: string, rule: RuleText, comment: string): string | null {
  const doc = parseDocument(text);
  if (doc.errors.length > 0) return null;
  const governance = doc.get("governance", true);
  if (governance !== undefined && governance !== null && !isMap(governance) && !(isScalarNull(governance))) return null;
  // The rule as spliced elsewhere (double-quoted values), not as the library would choose to write it.
  const node = parseDocument(flowMap(rule)).contents;
  if (node === null) return null;
  node.commentBefore = ` ${comment}`;
  const list = new YAMLSeq<Node>();
  list.items.push(node);
  doc.setIn(["governance", "rules"], list);
  return doc.toString({ lineWidth: 0 });
}

function isScalarNull(node: unknown): boolean {
  return typeof node === "object" && node !== null && "value" in node && (node as { value: unknown }).value === null;
}

/** Parsed again, the new text is the old document with `rule` at `index` of `governance.rules`, and nothing else changed. */
function sameButTheRule(before: string, after: string, index: number, rule: RuleText): boolean {
  const old = parseYaml(before);
  const now = parseYaml(after);
  if (!old.ok || !now.ok) return false;
  const expected = structuredClone(old.value ?? {}) as Record<string, unknown>;
  const governance = (expected.governance ??= {}) as Record<string, unknown>;
  if (governance === null || typeof governance !== "object") return false;
  const rules = Array.isArray(governance.rules) ? governance.rules : [];
  rules.splice(index, 0, rule);
  governance.rules = rules;
  return isDeepStrictEqual(now.value, expected);
}

function lineStart(text: string, at: number): number {
  return text.lastIndexOf("\n", at - 1) + 1;
}

function commentAbove(text: string, at: number, comment: string): string {
  const indent = /^ */.exec(text.slice(at))?.[0] ?? "";
  return `${text.slice(0, at)}${indent}# ${comment}\n${text.slice(at)}`;
}

/** `{ id: "…", match: "…", server: { command: ["…", …] }, … }` with every string YAML double-quoted. */
function flowMap(rule: RuleText | Record<string, unknown>): string {
  return `{ ${Object.entries(rule)
    .filter(([, value]) => value !== undefined)
    .map(([key, value]) => `${key}: ${flowValue(value)}`)
    .join(", ")} }`;
}

function flowValue(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(flowValue).join(", ")}]`;
  if (value !== null && typeof value === "object") return flowMap(value as Record<string, unknown>);
  return yamlString(String(value));
}

/**
 * A YAML double-quoted scalar: JSON's escapes are YAML's, and the characters YAML does not allow
 * raw (DEL, C1 controls, U+2028/U+2029, U+FFFE/U+FFFF) are escaped too. Names come from MCP
 * servers: no character of theirs can end the string or the line.
 */
export function yamlString(value: string): string {
  return JSON.stringify(value).replace(/[\u007f-\u009f\u2028\u2029\ufffe\uffff]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, "0")}`);
}
