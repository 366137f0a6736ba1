import { BACKSLASH, type ByteClass } from "./secret-bytes.ts";

/**
 * Forward looks that a scan never repeats. A rule looks ahead from its anchor (how many bytes of a
 * class start here, where a quoted value ends, where the next quote is) and may fail only at the
 * end of that look: `token=` repeated over 60 KB and then `(` makes the assignment rule read the
 * whole 60 KB at every `=` and give up at the `(`, which was quadratic (seconds per MiB). So each
 * kind of look is remembered as the stretch it covered — no stop in `[from, to)`, and whether `to`
 * is a stop or only where the look was cut off — and a later look that starts inside the stretch
 * resumes at its end instead of reading it again.
 *
 * Within one anchor's search the looks of each kind start at increasing positions (anchors are
 * visited in order, each rule looks from a fixed offset of its anchor), so each byte is read at most
 * once per kind of look per anchor, and the scan stays linear whatever the input: the adversarial
 * corpus of `bun run bench` (docs/benchmarks.md) shows it. The scanner begins a table for its
 * bytes (`beginStretches`) and forgets it before each anchor's search (`forgetStretches`); the scan
 * is synchronous and never re-entered, so one table at a time suffices, and the outermost scan's
 * table is one made once and cleared, not one per scan (two scans on every call). Called outside a
 * scan, or on other bytes, every look simply reads.
 */

type Stretch = { from: number; to: number; stopped: boolean };

type Table = { bytes: Uint8Array | null; stretches: Map<object, Stretch> };

/** The outermost scan's table; a scan begun inside another (none is today) gets one of its own. */
const outermost: Table = { bytes: null, stretches: new Map() };

let current: Table | null = null;

/** Remember looks over `bytes` from now on; what it returns goes to `endStretches` (in a `finally`). */
export function beginStretches(bytes: Uint8Array): Table | null {
  const outer = current;
  const table = outer === null ? outermost : { bytes, stretches: new Map<object, Stretch>() };
  table.bytes = bytes;
  current = table;
  forgetStretches();
  return outer;
}

/** Forget every look remembered so far: a new anchor's search begins. */
export function forgetStretches(): void {
  if (current !== null && current.stretches.size > 0) current.stretches.clear();
}

/** Stop remembering: the table before `beginStretches` is current again, and the bytes are let go. */
export function endStretches(outer: Table | null): void {
  if (current !== null) current.bytes = null;
  current = outer;
}

function tableFor(b: Uint8Array): Map<object, Stretch> | null {
  return current !== null && current.bytes === b && !forgetful ? current.stretches : null;
}

let forgetful = false;

/**
 * Run `scan` with nothing remembered, every look reading all it covers: what the scanner's results
 * are compared with (test/telemetry/secret-scan.test.ts), since remembering must change only the cost.
 */
export function withoutMemory<T>(scan: () => T): T {
  const outer = forgetful;
  forgetful = true;
  try {
    return scan();
  } finally {
    forgetful = outer;
  }
}

/**
 * Where a look from `from` goes on: the end of the remembered stretch it starts in (`stopped` when
 * that end is a stop), else `from` itself.
 */
function resumeAt(known: Stretch | undefined, from: number): number {
  return known !== undefined && known.from <= from && from <= known.to ? known.to : from;
}

/**
 * Remember the look from `from` that ended at `to`: it extends the stretch it started in (or
 * reached), replaces one behind it, and leaves one ahead of it alone (a look that started before
 * a stretch and stopped short of it: never more than an anchor's fixed offsets of bytes).
 */
function remember(table: Map<object, Stretch>, key: object, known: Stretch | undefined, b: Uint8Array, from: number, to: number, stopped: boolean): void {
  const ended = stopped || to === b.length;
  if (known === undefined) {
    table.set(key, { from, to, stopped: ended });
  } else if (from > known.to) {
    // Reused, not replaced: a hit costs no allocation.
    known.from = from;
    known.to = to;
    known.stopped = ended;
  } else if (to >= known.from) {
    known.from = Math.min(known.from, from);
    if (to > known.to) {
      known.to = to;
      known.stopped = ended;
    }
  }
}

const SLASH = 0x2f;

/**
 * How many bytes of `cls` start at `i`, counting at most `max`. A JSON-escaped slash (`\/`, which
 * some serialisers write for every `/`) counts as the slash for a class that has one, so a token
 * or URL written that way is still read whole, and no run ends between the backslash and the slash.
 */
export function runOf(b: Uint8Array, i: number, cls: ByteClass, max: number): number {
  const end = Math.min(b.length, i + max);
  const table = tableFor(b);
  const known = table?.get(cls);
  let j = resumeAt(known, i);
  if (j !== i && known?.stopped) return Math.min(j, end) - i;
  const slash = cls[SLASH] === 1;
  // A look that starts before the stretch (an anchor's offset earlier) joins it when it gets there.
  const join = known !== undefined && j === i && i < known.from ? known.from : -1;
  let stopped = false;
  while (j < end) {
    if (j === join && known) {
      j = known.to;
      if (known.stopped) {
        stopped = true;
        break;
      }
      continue;
    }
    const c = b[j] as number;
    if (cls[c] === 1) j++;
    else if (slash && c === BACKSLASH && b[j + 1] === SLASH && j + 2 <= end) j += 2;
    else {
      stopped = cls[c] !== 1 && !(slash && c === BACKSLASH && b[j + 1] === SLASH);
      break;
    }
  }
  if (table) remember(table, cls, known, b, i, j, stopped);
  return Math.min(j, end) - i;
}

/** A kind of look for `firstStop`: which bytes end it. One object per kind, made once. */
export type StopRule = { stops(b: Uint8Array, j: number): boolean };

/** The first position in `[from, limit)` where `rule.stops`, or `limit` when there is none. */
export function firstStop(b: Uint8Array, from: number, limit: number, rule: StopRule): number {
  const table = tableFor(b);
  const known = table?.get(rule);
  let j = resumeAt(known, from);
  if (j !== from && known?.stopped) return Math.min(j, limit);
  const join = known !== undefined && j === from && from < known.from ? known.from : -1;
  let stopped = false;
  while (j < limit) {
    if (j === join && known) {
      j = known.to;
      if (known.stopped) {
        stopped = true;
        break;
      }
      continue;
    }
    if (rule.stops(b, j)) {
      stopped = true;
      break;
    }
    j++;
  }
  if (table) remember(table, rule, known, b, from, j, stopped);
  return Math.min(j, limit);
}

/** `indexOf(needle, from)` over the whole of `b`, remembered: later searches from inside the stretch cost nothing. */
export function nextIndex(b: Uint8Array, needle: Buffer, from: number): number {
  const table = tableFor(b);
  const known = table?.get(needle);
  if (known && known.from <= from && from <= known.to) return known.stopped ? known.to : -1;
  const buffer = Buffer.isBuffer(b) ? b : Buffer.from(b.buffer, b.byteOffset, b.byteLength);
  const found = buffer.indexOf(needle, from);
  // `stopped` here means "found at `to`"; not found means none from `from` to the end.
  if (table) {
    const to = found === -1 ? b.length : found;
    if (known) Object.assign(known, { from, to, stopped: found !== -1 });
    else table.set(needle, { from, to, stopped: found !== -1 });
  }
  return found;
}
