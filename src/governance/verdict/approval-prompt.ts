import { canonicalJson } from "../../core/canonical-json.ts";
import { showInvisible, showInvisibleInJson } from "../../core/visible-text.ts";
import { redact, redactText } from "../../telemetry/redact.ts";
import { previewChange, type ChangePreview, type ReadExisting } from "./change-preview.ts";

/** With somewhere to see the whole call, a prompt shows at most this many characters of arguments. */
export const PROMPT_ARGUMENTS_CHARS = 2_000;
/** …and at most this many of the diff. */
export const PROMPT_DIFF_CHARS = 3_000;
/** A shortened string keeps at least this many characters, half from each end. */
const MIN_KEPT_CHARS = 80;
/** How many shortened places the prompt names before "and N more". */
const NAMED_PLACES = 8;
/** What the arguments show where a text is in the diff below instead. */
export const IN_THE_DIFF = "(shown as the diff below)";
/**
 * Changed lines the question leads with, right under the headline (which names the file). Claude
 * Code's form shows three lines of a message, each cut at the terminal's width, then "… (+N more
 * lines)" (measured in its TUI, 2.1.330, at 80x24, 80x50 and 160x50: the same three whatever the
 * size; test/e2e/agents/claude-form-change.test.ts): the headline and two changed lines are what a
 * person reads there.
 */
const LEAD_CHANGED_LINES = 2;
/** A changed line in the lead is cut after this many characters (the terminal cuts it sooner; the whole diff follows). */
const LEAD_LINE_CHARS = 240;

export type PromptCall = { serverId: string; method: string; name: string; arguments: unknown; ruleId?: string | null };

export type PromptOptions = {
  /**
   * Where the person can read the whole call (the service: its approvals page and `thoughtgate
   * tasks --json`). Without one (a standalone shim, the arbiter) nothing is shortened: a person
   * must be able to read everything they approve.
   */
  seeAllAt?: string;
  /** How the old text of a file the call writes is read (change-preview.ts); absent: writes show no diff. */
  readExisting?: ReadExisting;
  /** The change as computed when the task was made (the service keeps it, so every channel shows the same); null: none. */
  change?: ChangePreview | null;
  /** The caller shows the diff apart (Slack, in a block of its own): the arguments still point at it. */
  diffApart?: boolean;
};

/**
 * The one builder of what a person is asked, on every channel (the agent's form, Slack, the
 * arbiter's terminal; the approvals page shows the same parts): it starts "ThoughtGate:", names the
 * tool (or method and target), the server, the file a change is to, and the rule; for an edit or a
 * write over an existing file, the first changed lines and how many lines go and come; then the
 * arguments one per line, and the whole change as a unified diff.
 *
 *     ThoughtGate: allow edit_file on server fs to change /p/notes.md? (rule default-destructive: approval required)
 *     -Status: draft
 *     +Status: final
 *     1 line removed, 1 added
 *     dryRun: false
 *     edits: [{"newText":"(shown as the diff below)","oldText":"(shown as the diff below)"}]
 *     path: "/p/notes.md"
 *     Change to /p/notes.md:
 *     --- /p/notes.md
 *     …
 *
 * The most important lines come first and each argument takes one line: Claude Code shows the
 * first three lines of a form's message, each cut at the terminal's width (LEAD_CHANGED_LINES), so
 * the change is read at a glance there too; the approvals page shows everything.
 *
 * - Credentials are redacted (src/telemetry/redact.ts) before anything is shown or diffed.
 * - Bidi controls, zero-width, tag and control characters are shown as escapes, so the text
 *   cannot reorder itself or hide a part (JSON escapes inside the arguments: the same value).
 * - Long arguments are shortened from the middle of their longest strings, never from the end (a
 *   padded prefix cannot push the dangerous part out of view), a long diff from its middle, and the
 *   prompt says how much was left out, where, and where to read all of it.
 */
export function approvalPrompt(call: PromptCall, reason?: string, options: PromptOptions = {}): string {
  const shownArgs = redact(call.arguments ?? {});
  const change = options.change !== undefined ? options.change : previewChange(shownArgs, options.readExisting);
  const args = shownArguments(change ? pointAtDiff(shownArgs, change.covers) : shownArgs, options.seeAllAt);
  const lines = [headline(call, reason, change?.path), ...(change ? changeLead(change) : []), args.text];
  if (change && options.diffApart !== true) lines.push(`Change to ${visible(change.path)}:`, shownDiff(change.diff, options.seeAllAt));
  if (args.note) lines.push(args.note);
  return lines.join("\n");
}

/** What the call would change (change-preview.ts), from its arguments as a person is shown them (redacted). */
export function previewOf(args: unknown, readExisting?: ReadExisting): ChangePreview | null {
  return previewChange(redact(args ?? {}), readExisting);
}

/** A diff as every channel shows it: invisible and control characters as escapes, line by line. */
export function visibleDiff(diff: string): string {
  return diff
    .split("\n")
    .map((line) => showInvisible(line))
    .join("\n");
}

/**
 * The change in the lines right under the headline: the changed lines (no context; more than
 * LEAD_CHANGED_LINES: the first removed and the first added, what is replaced by what), then how
 * many lines go and come in all, and how many more the diff below shows.
 */
function changeLead(change: ChangePreview): string[] {
  const changed = change.diff.split("\n").filter((line) => (line.startsWith("-") && !line.startsWith("--- ")) || (line.startsWith("+") && !line.startsWith("+++ ")));
  if (changed.length === 0) return ["(no line of the file changes)"];
  const removed = changed.filter((line) => line.startsWith("-")).length;
  const firstRemoved = changed.findIndex((line) => line.startsWith("-"));
  const firstAdded = changed.findIndex((line) => line.startsWith("+"));
  const picked = changed.length <= LEAD_CHANGED_LINES ? changed.map((_, i) => i) : firstRemoved >= 0 && firstAdded >= 0 ? [firstRemoved, firstAdded].sort((a, b) => a - b) : [0, 1];
  const more = changed.length - picked.length;
  const counts = `${plural(removed, "line")} removed, ${changed.length - removed} added${more > 0 ? `; ${plural(more, "more changed line")} in the diff below` : ""}`;
  return [...picked.map((i) => leadLine(changed[i] ?? "")), counts];
}

function leadLine(line: string): string {
  const shown = showInvisible(line);
  return shown.length <= LEAD_LINE_CHARS ? shown : `${shown.slice(0, LEAD_LINE_CHARS)}…[${shown.length - LEAD_LINE_CHARS} characters more]`;
}

function plural(count: number, noun: string): string {
  return `${count} ${noun}${count === 1 ? "" : "s"}`;
}

/**
 * `ThoughtGate: allow delete_repo on server github? (rule deletes: approval required)`; other
 * methods name the method and target; a call that changes a file names the file
 * (`… on server fs to change /p/notes.md? …`).
 */
function headline(call: PromptCall, reason: string | undefined, changes?: string): string {
  // A resource URI can carry a credential too (`?token=…`, `user:password@`).
  const what = call.method === "tools/call" ? visible(call.name) : `${visible(call.method)} ${visible(call.name)}`;
  const why = ruleWords(call.ruleId ?? null, reason);
  const file = changes === undefined ? "" : ` to change ${visible(changes)}`;
  return `ThoughtGate: allow ${what} on server ${visible(call.serverId)}${file}?${why ? ` (${why})` : ""}`;
}

/** The engine's reason (`rule deletes: approval required`), the rule named when the reason does not name it. */
function ruleWords(ruleId: string | null, reason: string | undefined): string {
  const said = reason ? showInvisible(reason) : "";
  if (ruleId === null || said.startsWith("rule ")) return said;
  return `rule ${visible(ruleId)}${said ? `: ${said}` : ""}`;
}

function visible(text: string): string {
  return showInvisible(redactText(text));
}

/** A copy of the arguments with each text the diff shows replaced by a pointer to it. */
function pointAtDiff(value: unknown, covers: Array<Array<string | number>>): unknown {
  const copy = structuredClone(value) as Record<string | number, unknown>;
  for (const path of covers) {
    let node: unknown = copy;
    for (const step of path.slice(0, -1)) node = (node as Record<string | number, unknown>)[step];
    const last = path.at(-1);
    if (node !== null && typeof node === "object" && last !== undefined) (node as Record<string | number, unknown>)[last] = IN_THE_DIFF;
  }
  return copy;
}

function shownDiff(diff: string, seeAllAt: string | undefined): string {
  const text = visibleDiff(diff);
  if (seeAllAt === undefined || text.length <= PROMPT_DIFF_CHARS) return text;
  const half = Math.floor(PROMPT_DIFF_CHARS / 2);
  return `${text.slice(0, half)}\n…[${text.length - 2 * half} characters of the diff not shown; the whole diff: ${seeAllAt}]…\n${text.slice(text.length - half)}`;
}

type Shown = { text: string; note?: string };

function shownArguments(value: unknown, seeAllAt: string | undefined): Shown {
  const whole = render(value);
  if (seeAllAt === undefined || whole.length <= PROMPT_ARGUMENTS_CHARS) return { text: whole };
  // The largest per-string length that fits (binary search); strings longer than it lose their middle.
  let low = MIN_KEPT_CHARS;
  let high = Math.max(MIN_KEPT_CHARS, longestString(value));
  while (low < high) {
    const mid = Math.ceil((low + high) / 2);
    if (render(shorten(value, mid, "$", [])).length <= PROMPT_ARGUMENTS_CHARS) low = mid;
    else high = mid - 1;
  }
  const cuts: Cut[] = [];
  let text = render(shorten(value, low, "$", cuts));
  // Still too long (many small values): the middle of the whole text goes, both ends stay.
  if (text.length > PROMPT_ARGUMENTS_CHARS) {
    const half = Math.floor(PROMPT_ARGUMENTS_CHARS / 2);
    const cut = text.length - 2 * half;
    cuts.push({ path: "the arguments as a whole", chars: cut });
    text = `${text.slice(0, half)}…[${cut} characters not shown]…${text.slice(text.length - half)}`;
  }
  const total = cuts.reduce((sum, c) => sum + c.chars, 0);
  const places = cuts.slice(0, NAMED_PLACES).map((c) => showInvisible(c.path));
  const more = cuts.length > NAMED_PLACES ? ` and ${cuts.length - NAMED_PLACES} more` : "";
  return { text, note: `Shortened to fit: ${total} characters not shown, from the middle of ${places.join(", ")}${more}. The whole call: ${seeAllAt}.` };
}

type Cut = { path: string; chars: number };

/**
 * The arguments one per line, `name: value`, names in canonical order (UTF-16 code units, as
 * canonical-json.ts), each value as canonical JSON with invisible characters as JSON escapes (the
 * same value). A name that is not a plain identifier is shown quoted. Anything but an object of
 * arguments is shown as its JSON.
 */
function render(value: unknown): string {
  if (value === null || typeof value !== "object" || Array.isArray(value)) return showInvisibleInJson(canonicalJson(value));
  const names = Object.keys(value).sort();
  if (names.length === 0) return "(no arguments)";
  return names
    .map((name) => `${/^[A-Za-z_][A-Za-z0-9_]*$/.test(name) ? name : showInvisibleInJson(JSON.stringify(name))}: ${showInvisibleInJson(canonicalJson((value as Record<string, unknown>)[name]))}`)
    .join("\n");
}

function longestString(value: unknown): number {
  if (typeof value === "string") return value.length;
  if (value === null || typeof value !== "object") return 0;
  let longest = 0;
  for (const item of Object.values(value)) longest = Math.max(longest, longestString(item));
  return longest;
}

/** A copy with every string longer than `keep` cut to its first and last `keep / 2` characters. */
function shorten(value: unknown, keep: number, path: string, cuts: Cut[]): unknown {
  if (typeof value === "string") {
    if (value.length <= keep) return value;
    const half = Math.floor(keep / 2);
    const chars = value.length - 2 * half;
    cuts.push({ path, chars });
    return `${value.slice(0, half)}…[${chars} characters not shown]…${value.slice(value.length - half)}`;
  }
  if (value === null || typeof value !== "object") return value;
  if (Array.isArray(value)) return value.map((item, i) => shorten(item, keep, `${path}[${i}]`, cuts));
  const out: Record<string, unknown> = Object.create(null);
  for (const [key, item] of Object.entries(value)) out[key] = shorten(item, keep, `${path}${/^[A-Za-z_][A-Za-z0-9_]*$/.test(key) ? `.${key}` : `[${JSON.stringify(key)}]`}`, cuts);
  return out;
}
