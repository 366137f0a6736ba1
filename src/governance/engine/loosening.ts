import type { Rule, ThoughtGateConfig } from "../../core/config/schema.ts";
import { compileGlob } from "../../core/glob.ts";
import type { AnnotationHint } from "../../core/tool-hints.ts";

/**
 * Project rules that can never take effect where they would loosen the user's policy
 * (docs/governance.md, "Where the policy comes from"): a project's `thoughtgate.yaml` may only
 * restrict the user's policy, so its `forward` for calls the user's policy asks about or denies
 * changes nothing, silently, while the file reads as if it did. Found without running anything: for each project rule that forwards, the first rule of the
 * user's policy (or its default) that may decide some of the same calls and does not forward.
 *
 * "May decide some of the same calls" is judged on what can be judged without the calls: the
 * globs (two globs overlap when some name matches both), the annotation filters (contradictory
 * values cannot both hold), `project:` (a user rule kept to another project). Arguments are taken
 * to overlap. So a report may name a rule that overlaps only in part; it never misses one whose
 * globs overlap.
 */
export type Loosening = {
  /** The project rule: its id, and the rule itself. */
  ruleId: string;
  rule: Rule;
  /** The user's rule (null: its default) that asks about or denies those calls, and what it does. */
  overriddenBy: { ruleId: string; action: string; rule: Rule | null };
};

export function looseningRules(user: ThoughtGateConfig, project: ThoughtGateConfig, projectDir: string): Loosening[] {
  const found: Loosening[] = [];
  project.governance.rules.forEach((rule, i) => {
    if (rule.action !== "forward") return;
    const by = firstStricter(user, rule, projectDir);
    if (by) found.push({ ruleId: rule.id ?? `rules[${i}]`, rule, overriddenBy: by });
  });
  return found;
}

function firstStricter(user: ThoughtGateConfig, wanted: Rule, projectDir: string): Loosening["overriddenBy"] | null {
  for (const [i, rule] of user.governance.rules.entries()) {
    if (!mayOverlap(rule, wanted, projectDir)) continue;
    if (rule.action !== "forward") return { ruleId: rule.id ?? `rules[${i}]`, action: rule.action, rule };
    // A user rule that forwards every call the project rule names decides them all: nothing to report.
    if (covers(rule, wanted)) return null;
  }
  const action = user.governance.defaults.action;
  return action === "forward" ? null : { ruleId: "defaults", action, rule: null };
}

function mayOverlap(a: Rule, b: Rule, projectDir: string): boolean {
  if (!globsOverlap(a.method, b.method) || !globsOverlap(a.match, b.match)) return false;
  if (a.source !== undefined && b.source !== undefined && !globsOverlap(a.source, b.source)) return false;
  if (a.project !== undefined && !a.project.startsWith("${") && a.project !== projectDir) return false;
  return annotationsCompatible(a.annotations, b.annotations);
}

/** `a` forwards at least every call `b` names: no narrower condition than `b`'s. */
function covers(a: Rule, b: Rule): boolean {
  return contains(a.method, b.method) && contains(a.match, b.match) && contains(a.source, b.source) && a.annotations === undefined && a.arguments === undefined && a.project === undefined;
}

/** Every name `inner` matches, `outer` matches too: known when `outer` is absent or `*`, or `inner` is a list of names `outer` matches. */
function contains(outer: string | undefined, inner: string | undefined): boolean {
  if (outer === undefined || outer === "*" || outer === inner) return true;
  if (inner === undefined) return false;
  const names = alternatives(inner);
  if (names === null || names.some((name) => /[*?]/.test(name))) return false;
  const glob = compileGlob(outer);
  return names.every((name) => glob.test(name));
}

/**
 * Two annotation filters that cannot both hold: the same hint wanted both ways, or a tool both
 * read-only and destructive (MCP: the destructive hint means something only for tools that write).
 */
function annotationsCompatible(a: Rule["annotations"], b: Rule["annotations"]): boolean {
  if (!a || !b) return true;
  const merged: Partial<Record<AnnotationHint, boolean>> = { ...a };
  for (const [hint, value] of Object.entries(b) as Array<[AnnotationHint, boolean | undefined]>) {
    if (value === undefined) continue;
    if (merged[hint] !== undefined && merged[hint] !== value) return false;
    merged[hint] = value;
  }
  return !(merged.readOnlyHint === true && merged.destructiveHint === true);
}

/** Most alternatives a glob is expanded into; beyond that, two globs are taken to overlap. */
const MAX_ALTERNATIVES = 256;

/** Whether some name matches both globs (src/core/glob.ts: `*`, `?`, `{a,b}`). */
export function globsOverlap(a: string, b: string): boolean {
  const left = alternatives(a);
  const right = alternatives(b);
  if (left === null || right === null) return true;
  return left.some((p) => right.some((q) => simpleOverlap(p, q)));
}

/** The brace-free globs a glob stands for, or null when there are too many. */
function alternatives(glob: string): string[] | null {
  const open = findGroup(glob);
  if (!open) return [glob];
  const out: string[] = [];
  for (const choice of open.choices) {
    const expanded = alternatives(glob.slice(0, open.start) + choice + glob.slice(open.end + 1));
    if (expanded === null) return null;
    out.push(...expanded);
    if (out.length > MAX_ALTERNATIVES) return null;
  }
  return out;
}

/** The outermost `{…,…}` group that comes first (balanced, with a comma at its own level), as glob.ts reads them. */
function findGroup(glob: string): { start: number; end: number; choices: string[] } | null {
  const stack: Array<{ start: number; commas: number[] }> = [];
  let first: { start: number; end: number; choices: string[] } | null = null;
  for (let i = 0; i < glob.length; i++) {
    const c = glob[i];
    if (c === "{") stack.push({ start: i, commas: [] });
    else if (c === "," && stack.length > 0) stack[stack.length - 1]?.commas.push(i);
    else if (c === "}" && stack.length > 0) {
      const group = stack.pop() as { start: number; commas: number[] };
      if (group.commas.length === 0) continue;
      // A group that encloses an earlier one starts before it: the smallest start is the outermost.
      if (first === null || group.start < first.start) {
        const cuts = [group.start, ...group.commas, i];
        first = { start: group.start, end: i, choices: cuts.slice(1).map((cut, k) => glob.slice((cuts[k] as number) + 1, cut)) };
      }
    }
  }
  return first;
}

/** Whether two globs of `*` and `?` only have a name in common. */
function simpleOverlap(p: string, q: string): boolean {
  const memo = new Map<number, boolean>();
  const at = (i: number, j: number): boolean => {
    const key = i * (q.length + 1) + j;
    const known = memo.get(key);
    if (known !== undefined) return known;
    let result: boolean;
    if (i === p.length && j === q.length) result = true;
    else if (i < p.length && p[i] === "*") result = at(i + 1, j) || (j < q.length && at(i, j + 1));
    else if (j < q.length && q[j] === "*") result = at(i, j + 1) || (i < p.length && at(i + 1, j));
    else if (i === p.length || j === q.length) result = false;
    else result = (p[i] === "?" || q[j] === "?" || p[i] === q[j]) && at(i + 1, j + 1);
    memo.set(key, result);
    return result;
  };
  return at(0, 0);
}
