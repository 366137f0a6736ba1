import { canonicalJson } from "./canonical-json.ts";
import { showInvisibleInJson } from "./visible-text.ts";

/**
 * A call's arguments in one short line, for every display that has room for a glance only (the
 * `tasks` table, a summary line, a notification): what the call acts on is what stays. The
 * argument that says where — a path, a URL, a query, a command — comes first and keeps both ends
 * when it must be cut; bulky content (`content`, `text`, `body`, …) comes last and is cut first.
 * The other keys keep the order the agent sent them in (sorting them, as canonical JSON does,
 * put `content` before `path` and cut the path away).
 *
 * The caller redacts first (src/telemetry/redact.ts); invisible and control characters are shown
 * as JSON escapes here (src/core/visible-text.ts), so what fits is measured as it is shown. A
 * string is cut in its middle, never at its end, so a padded start cannot push the end of a path
 * out of view. The full arguments are for the places that show everything (the approval prompt,
 * `tasks --json`, the page).
 */
export type BriefArguments = {
  text: string;
  /** False when anything was cut or left out: say where to read all of it. */
  complete: boolean;
};

/** Where a call acts: the key alone says so, or its last word does (`file_path`, `targetUrl`). */
const WHERE_KEY = /^(path|paths|file|files|filename|dir|directory|folder|cwd|uri|url|urls|href|link|endpoint|host|hostname|repo|repository|query|q|search|pattern|glob|regex|sql|statement|command|cmd|args|argv|script|source|destination|target)$/;
const WHERE_SUFFIX = /(path|file|filename|dir|directory|uri|url|query|command)$/;
/** Bulk: what a call carries rather than where it goes. */
const BULK_KEY = /^(content|contents|text|body|data|input|message|patch|diff|edits|newstring|oldstring|newstr|oldstr|code|html|markdown|payload|value|values)$/;
/** A value that is itself a path or a URL says where, whatever its key. */
const WHERE_VALUE = /^(\/|~\/|\.{1,2}\/|[A-Za-z]:\\|[A-Za-z][A-Za-z0-9+.-]*:\/\/)/;

/** 0 where, 1 a name or id, 2 the rest, 3 bulk. */
export function argumentRank(key: string, value: unknown): number {
  const name = key.toLowerCase().replace(/[-_]/g, "");
  if (WHERE_KEY.test(name) || WHERE_SUFFIX.test(name)) return 0;
  if (typeof value === "string" && WHERE_VALUE.test(value)) return 0;
  if (BULK_KEY.test(name)) return 3;
  if (name === "name" || name === "id" || name.endsWith("id") || name.endsWith("name")) return 1;
  return 2;
}

/** The fewest characters of a value worth showing once it has to be cut. */
const MIN_VALUE_CHARS = 8;
const CUT = "…";

export function briefArguments(args: unknown, maxChars: number): BriefArguments {
  if (args === null || typeof args !== "object" || Array.isArray(args)) {
    const whole = render(args);
    return whole.length <= maxChars ? { text: whole, complete: true } : { text: cutMiddle(whole, maxChars), complete: false };
  }
  const entries = Object.entries(args as Record<string, unknown>)
    .filter(([, value]) => value !== undefined)
    .map(([key, value], order) => ({ key: showInvisibleInJson(JSON.stringify(key)), value, rank: argumentRank(key, value), order }))
    .toSorted((a, b) => a.rank - b.rank || a.order - b.order);
  const pieces = entries.map((entry) => `${entry.key}:${render(entry.value)}`);
  const whole = `{${pieces.join(",")}}`;
  if (whole.length <= maxChars) return { text: whole, complete: true };

  const shown: string[] = [];
  for (const [i, entry] of entries.entries()) {
    const left = entries.length - i - 1;
    // Room for this piece: what is left after the braces, the commas so far and the "…+N" marker.
    const marker = left > 0 ? `,${CUT}+${left}`.length : 0;
    const room = maxChars - 2 - shown.reduce((sum, piece) => sum + piece.length + 1, 0) - marker;
    const piece = pieces[i] ?? "";
    if (piece.length <= room) {
      shown.push(piece);
      continue;
    }
    const valueRoom = room - entry.key.length - 1;
    if (valueRoom >= MIN_VALUE_CHARS) shown.push(`${entry.key}:${cutValue(entry.value, valueRoom)}`);
    const omitted = entries.length - shown.length;
    return { text: `{${[...shown, ...(omitted > 0 ? [`${CUT}+${omitted}`] : [])].join(",")}}`, complete: false };
  }
  return { text: `{${shown.join(",")}}`, complete: false };
}

function render(value: unknown): string {
  return showInvisibleInJson(canonicalJson(value));
}

/** A string keeps its two ends inside its quotes; anything else its start. Fits in `room` characters. */
function cutValue(value: unknown, room: number): string {
  if (typeof value !== "string") return `${render(value).slice(0, room - CUT.length)}${CUT}`;
  return `"${cutMiddle(value, room - 2, (part) => showInvisibleInJson(JSON.stringify(part)).slice(1, -1))}"`;
}

/**
 * `text` with its middle replaced by "…" so the result (as `show` renders it) is at most `room`
 * characters. Cuts between code points, so no surrogate pair is split.
 */
function cutMiddle(text: string, room: number, show: (part: string) => string = (part) => part): string {
  const points = Array.from(text);
  let keep = Math.max(0, room - CUT.length);
  for (;;) {
    const head = points.slice(0, Math.ceil(keep / 2)).join("");
    const tail = keep > 1 ? points.slice(points.length - Math.floor(keep / 2)).join("") : "";
    const out = `${show(head)}${CUT}${show(tail)}`;
    if (out.length <= room || keep === 0) return out;
    keep -= 1;
  }
}
