import { SEVERITIES, type Severity } from "../../core/severity.ts";
import { showInvisible } from "../../core/visible-text.ts";
import { CHARACTER_RULES, isStandardName, lookalikeNameCharacter, nameSkeleton } from "./characters.ts";
import type { DefinitionKind } from "./definition.ts";
import { COMBINING, TEXT_RULES } from "./text-rules.ts";

/**
 * A poisoning finding: which rule, how bad, and where (the JSON path of the string inside the
 * definition, and the offending span in it as UTF-16 offsets), with a short excerpt a person can read
 * (invisible characters shown as escapes).
 */
export type Finding = { rule: string; severity: Severity; path: string; start: number; end: number; excerpt: string; message: string };

/**
 * Another governed server's definition, from its pins: for shadowing. `sameId`: a server with this
 * one's id but another identity (another command): its names are not "another server's tool of
 * this name" (a new version of the same server has them too), its look-alikes still are.
 */
export type OtherDefinition = { serverId: string; name: string; digest: string; sameId?: boolean };

/** A description this many times longer than the median of its server's others, and longer than `LONG_DESCRIPTION_CHARS`, stands out. */
const LONG_DESCRIPTION_RATIO = 5;
const LONG_DESCRIPTION_CHARS = 1_500;
const MIN_PEERS = 3;
/** Another server's tool name is looked for in text only when it cannot be an ordinary word. */
const DISTINCTIVE_NAME = /^(?=.{6,})(?=.*(?:[_.-]|[a-z][A-Z]))[A-Za-z0-9_.-]+$/;
const EXCERPT_CONTEXT = 30;

/** What the checks know besides the definition itself: its server's other definitions, other servers' tools. */
export class FindingContext {
  private readonly byName = new Map<string, OtherDefinition[]>();
  private readonly bySkeleton = new Map<string, OtherDefinition[]>();
  private readonly mentions: RegExp | null;

  constructor(
    /** This server's own definition names of the same kind (they are never "another server's"). */
    readonly ownNames: ReadonlySet<string>,
    /** Description lengths of this server's definitions of the same kind. */
    readonly peerDescriptionLengths: readonly number[],
    others: readonly OtherDefinition[] = [],
  ) {
    const distinctive = new Set<string>();
    for (const other of others) {
      if (!other.sameId) push(this.byName, other.name, other);
      push(this.bySkeleton, nameSkeleton(other.name), other);
      if (DISTINCTIVE_NAME.test(other.name) && !ownNames.has(other.name)) distinctive.add(other.name);
    }
    const alternatives = [...distinctive].map((name) => name.replace(/[.*+?^${}()|[\]\\]/g, "\\$&"));
    this.mentions = alternatives.length > 0 ? new RegExp(`(?<![\\w-])(?:${alternatives.join("|")})(?![\\w-])`, "gu") : null;
  }

  sameName(name: string): OtherDefinition[] {
    return this.byName.get(name) ?? [];
  }

  lookalikes(name: string): OtherDefinition[] {
    return (this.bySkeleton.get(nameSkeleton(name)) ?? []).filter((other) => other.name !== name);
  }

  get otherToolMentions(): RegExp | null {
    return this.mentions;
  }
}

/** Every finding of one definition (its name, every string and key in it), worst first. */
export function findingsOf(kind: DefinitionKind, name: string, definition: unknown, digest: string, context: FindingContext): Finding[] {
  const findings: Finding[] = [];
  findings.push(...nameFindings(kind, name, digest, context));
  walkStrings(definition, "", (text, path) => findings.push(...stringFindings(text, path, context)));
  const description = (definition as { description?: unknown } | null)?.description;
  if (typeof description === "string") {
    const long = longDescription(description, context.peerDescriptionLengths);
    if (long) findings.push(long);
  }
  return findings.sort((a, b) => rank(b.severity) - rank(a.severity));
}

export function worstSeverity(findings: readonly Finding[]): Severity | null {
  let worst: Severity | null = null;
  for (const finding of findings) if (worst === null || rank(finding.severity) > rank(worst)) worst = finding.severity;
  return worst;
}

/** Whether findings this bad hide a definition under `threshold` (`none`: nothing hides). */
export function reaches(severity: Severity | null, threshold: Severity | "none"): boolean {
  return severity !== null && threshold !== "none" && rank(severity) >= rank(threshold);
}

/** One line per finding: `high tag-characters at description[12..40]: … "excerpt"`. */
export function describeFinding(finding: Finding): string {
  return `${finding.severity} ${finding.rule} at ${finding.path || "(definition)"}[${finding.start}..${finding.end}]: ${finding.message}: "${finding.excerpt}"`;
}

function nameFindings(kind: DefinitionKind, name: string, digest: string, context: FindingContext): Finding[] {
  const out: Finding[] = [];
  const lookalike = lookalikeNameCharacter(name);
  if (lookalike) {
    out.push(finding("homoglyph-name", "high", "name", name, lookalike.index, lookalike.index + lookalike.char.length, `the name has a letter from another script that passes for Latin (${showInvisible(escapeCodePoint(lookalike.char))})`));
  } else if (kind === "tool" && !isStandardName(name)) {
    out.push(finding("nonstandard-name", "medium", "name", name, 0, name.length, "the name has characters MCP tool names do not use (only A-Z, a-z, 0-9, _, -, .)"));
  }
  if (kind !== "tool") return out;
  const twins = context.sameName(name).filter((other) => other.digest !== digest);
  if (twins.length > 0) {
    out.push(finding("shadowed-name", "medium", "name", name, 0, name.length, `another server has a different tool of this name (${serverList(twins)})`));
  }
  const lookalikes = context.lookalikes(name);
  if (lookalikes.length > 0) {
    out.push(finding("confusable-name", "high", "name", name, 0, name.length, `the name looks like ${lookalikes.map((o) => `${o.serverId}.${showInvisible(o.name)}`).join(", ")} of another server`));
  }
  return out;
}

function stringFindings(text: string, path: string, context: FindingContext): Finding[] {
  const out: Finding[] = [];
  for (const rule of CHARACTER_RULES) {
    for (const match of text.matchAll(rule.pattern)) {
      if (rule.allowed?.(text, match.index)) continue;
      out.push(finding(rule.rule, rule.severity, path, text, match.index, match.index + match[0].length, rule.message));
      break;
    }
  }
  const combining: Finding[] = [];
  for (const rule of TEXT_RULES) {
    const match = first(text, rule.pattern);
    if (!match) continue;
    const found = finding(rule.rule, rule.severity, path, text, match.index, match.index + match[0].length, rule.message);
    out.push(found);
    if (COMBINING.has(rule.rule)) combining.push(found);
  }
  const mentions = context.otherToolMentions;
  const mention = mentions ? first(text, mentions) : null;
  if (mention) {
    const found = finding("other-server-tool", "medium", path, text, mention.index, mention.index + mention[0].length, `names another server's tool (${mention[0]})`);
    out.push(found);
    combining.push(found);
  }
  if (combining.length >= 2) {
    const start = Math.min(...combining.map((f) => f.start));
    const end = Math.max(...combining.map((f) => f.end));
    out.push(finding("combined-signals", "high", path, text, start, end, `instructions that move data: ${combining.map((f) => f.rule).join(" + ")}`));
  }
  return out;
}

function longDescription(description: string, peers: readonly number[]): Finding | null {
  if (peers.length < MIN_PEERS || description.length <= LONG_DESCRIPTION_CHARS) return null;
  const sorted = [...peers].sort((a, b) => a - b);
  const median = sorted[Math.floor(sorted.length / 2)] ?? 0;
  if (description.length <= LONG_DESCRIPTION_RATIO * Math.max(median, 1)) return null;
  return finding("long-description", "medium", "description", description, 0, description.length, `${description.length} characters, ${Math.round(description.length / Math.max(median, 1))}× the median of its server's others (${median})`);
}

/** Every string of a JSON value with its path; object keys too (a parameter's name is read by the model). */
function walkStrings(value: unknown, path: string, visit: (text: string, path: string) => void): void {
  if (typeof value === "string") {
    visit(value, path);
    return;
  }
  if (value === null || typeof value !== "object") return;
  if (Array.isArray(value)) {
    value.forEach((item, i) => walkStrings(item, `${path}[${i}]`, visit));
    return;
  }
  for (const [key, item] of Object.entries(value)) {
    const at = /^[A-Za-z_$][\w$]*$/.test(key) ? (path ? `${path}.${key}` : key) : `${path}[${JSON.stringify(key)}]`;
    visit(key, `${at} (key)`);
    walkStrings(item, at, visit);
  }
}

function finding(rule: string, severity: Severity, path: string, text: string, start: number, end: number, message: string): Finding {
  const from = Math.max(0, start - EXCERPT_CONTEXT);
  const to = Math.min(text.length, end + EXCERPT_CONTEXT);
  const excerpt = `${from > 0 ? "…" : ""}${showInvisible(text.slice(from, to))}${to < text.length ? "…" : ""}`;
  return { rule, severity, path, start, end, excerpt, message };
}

function first(text: string, pattern: RegExp): RegExpExecArray | null {
  pattern.lastIndex = 0;
  const match = pattern.exec(text);
  pattern.lastIndex = 0;
  return match;
}

function rank(severity: Severity): number {
  return SEVERITIES.indexOf(severity);
}

function push<K, V>(map: Map<K, V[]>, key: K, value: V): void {
  const list = map.get(key);
  if (list) list.push(value);
  else map.set(key, [value]);
}

function serverList(others: readonly OtherDefinition[]): string {
  return [...new Set(others.map((o) => o.serverId))].join(", ");
}

function escapeCodePoint(char: string): string {
  return `U+${(char.codePointAt(0) ?? 0).toString(16).toUpperCase().padStart(4, "0")} ${char}`;
}
