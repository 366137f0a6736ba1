import { canonicalJson } from "../../core/canonical-json.ts";
import { showInvisible, showInvisibleInJson } from "../../core/visible-text.ts";
import { redact, redactText } from "../../telemetry/redact.ts";

/** With somewhere to see the whole call, a prompt shows at most this many characters of arguments. */
export const PROMPT_ARGUMENTS_CHARS = 2_000;
/** A shortened string keeps at least this many characters, half from each end. */
const MIN_KEPT_CHARS = 80;
/** How many shortened places the prompt names before "and N more". */
const NAMED_PLACES = 8;

export type PromptCall = { serverId: string; method: string; name: string; arguments: unknown };

export type PromptOptions = {
  /**
   * Where the person can read the whole call (the service: its approvals page and `thoughtgate
   * tasks --json`). Without one (a standalone shim, the arbiter) nothing is shortened: a person
   * must be able to read everything they approve.
   */
  seeAllAt?: string;
};

/**
 * The one builder of what a person is asked, on every channel (elicitation through the agent, the
 * arbiter's terminal): which server, which tool (or method and target), with which arguments, and
 * why. "Allow github.delete_repo with {"repo":"x"}? (rule destructive: approval required)".
 *
 * - Credentials are redacted (src/telemetry/redact.ts).
 * - Bidi controls, zero-width, tag and control characters are shown as escapes, so the text
 *   cannot reorder itself or hide a part (JSON escapes inside the arguments: the same value).
 * - Long arguments are shortened from the middle of their longest strings, never from the end (a
 *   padded prefix cannot push the dangerous part out of view), and the prompt says how much was
 *   left out, where, and where to read all of it.
 */
export function approvalPrompt(call: PromptCall, reason?: string, options: PromptOptions = {}): string {
  const target = call.method === "tools/call" ? `${call.serverId}.${call.name}` : `${call.serverId} ${call.method} ${call.name}`;
  const args = shownArguments(redact(call.arguments ?? {}), options.seeAllAt);
  // A resource URI can carry a credential too (`?token=…`, `user:password@`).
  const question = `Allow ${showInvisible(redactText(target))} with ${args.text}?${reason ? ` (${showInvisible(reason)})` : ""}`;
  return args.note ? `${question}\n${args.note}` : question;
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

function render(value: unknown): string {
  return showInvisibleInJson(canonicalJson(value));
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
  const out: Record<string, unknown> = {};
  for (const [key, item] of Object.entries(value)) out[key] = shorten(item, keep, `${path}${/^[A-Za-z_][A-Za-z0-9_]*$/.test(key) ? `.${key}` : `[${JSON.stringify(key)}]`}`, cuts);
  return out;
}
