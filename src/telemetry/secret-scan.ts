import { ASSIGNMENT_RULES } from "./secret-assignments.ts";
import { FIELD_RULES } from "./secret-fields.ts";
import { redactedMarker, type SecretKind, type Span } from "../core/secret-kinds.ts";
import { SHAPE_RULES, type Rule, type ScanMode } from "./secret-shapes.ts";
import { beginStretches, endStretches, forgetStretches } from "./secret-stretches.ts";

/**
 * The secret scanner: every credential the rules recognise (secret-shapes.ts by their shape,
 * secret-fields.ts and secret-assignments.ts by what surrounds them) in a run of UTF-8 bytes, usually a whole JSON-RPC line.
 *
 * Linear time, whatever the input: each anchor is one native `Buffer#indexOf` pass; each hit costs
 * a bounded look back and a look ahead that is never repeated (secret-stretches.ts: a look that
 * starts where an earlier one went resumes at its end), and after a finding the search for that
 * anchor resumes past it. No regular expression runs over the input. A 10 MiB line costs about 25
 * passes of memchr-speed search; an adversarial 4 MiB about as much (docs/benchmarks.md).
 */

export type { ScanMode };

export type ScanOptions = {
  mode: ScanMode;
  /** Kinds to look for; absent = every kind. */
  enabled?: (kind: SecretKind) => boolean;
};

type AnchorGroup = { needle: Buffer; rules: readonly Rule[] };

/** Rules grouped by anchor, so a shared anchor is searched once. */
const GROUPS: readonly AnchorGroup[] = (() => {
  const byAnchor = new Map<string, Rule[]>();
  for (const rule of [...SHAPE_RULES, ...FIELD_RULES, ...ASSIGNMENT_RULES]) {
    for (const anchor of rule.anchors) byAnchor.set(anchor, [...(byAnchor.get(anchor) ?? []), rule]);
  }
  return [...byAnchor].map(([anchor, rules]) => ({ needle: Buffer.from(anchor), rules }));
})();

function asBuffer(bytes: Uint8Array): Buffer {
  return Buffer.isBuffer(bytes) ? bytes : Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
}

function rulesFor(group: AnchorGroup, mode: ScanMode, enabled: ((kind: SecretKind) => boolean) | undefined): readonly Rule[] {
  return group.rules.filter((rule) => (rule.mode === undefined || rule.mode === mode) && (!enabled || rule.kinds.some(enabled)));
}

/** Each group's rules for a mode with every kind enabled (the default): chosen once, not per line. */
const RULES_BY_MODE: Record<ScanMode, ReadonlyArray<readonly Rule[]>> = {
  display: GROUPS.map((group) => rulesFor(group, "display", undefined)),
  result: GROUPS.map((group) => rulesFor(group, "result", undefined)),
};

/** Every finding in `bytes`, in order, overlaps merged. */
export function scanSecrets(bytes: Uint8Array, options: ScanOptions): Span[] {
  const b = asBuffer(bytes);
  const { mode, enabled } = options;
  const chosen = enabled ? null : RULES_BY_MODE[mode];
  const found: Span[] = [];
  const outer = beginStretches(b);
  try {
    for (let g = 0; g < GROUPS.length; g++) {
      const group = GROUPS[g] as AnchorGroup;
      const rules = chosen ? (chosen[g] as readonly Rule[]) : rulesFor(group, mode, enabled);
      if (rules.length === 0) continue;
      forgetStretches();
      for (let at = b.indexOf(group.needle); at !== -1; ) {
        let next = at + 1;
        for (const rule of rules) {
          const span = rule.match(b, at, mode);
          if (span === null || (enabled && !enabled(span.kind))) continue;
          found.push(span);
          if (span.end > next) next = span.end;
        }
        at = b.indexOf(group.needle, next);
      }
    }
  } finally {
    endStretches(outer);
  }
  return merge(found);
}

/** A recognised shape says more than "a field named like a credential" when both cover the same bytes. */
function priority(kind: SecretKind): number {
  return kind === "secret_field" ? 0 : 1;
}

/**
 * Overlapping findings become one (a token inside the value of a `token` field). Every span lies
 * inside one string of the line or is a whole value, and none ends inside an escape, so the union
 * of two overlapping spans is still safe to replace.
 */
function merge(spans: Span[]): Span[] {
  if (spans.length < 2) return spans;
  spans.sort((a, b) => a.start - b.start || b.end - a.end || priority(b.kind) - priority(a.kind));
  const out: Span[] = [];
  for (const span of spans) {
    const last = out[out.length - 1];
    if (!last || span.start >= last.end) {
      out.push(span);
      continue;
    }
    if (span.end > last.end) {
      last.end = span.end;
      if (span.close) last.close = span.close;
    } else if (span.start === last.start && span.end === last.end && priority(span.kind) > priority(last.kind)) {
      last.kind = span.kind;
    }
  }
  return out;
}

/** How many findings of each kind (what the audit and the logs say instead of the values). */
export function countKinds(spans: readonly Span[]): Record<string, number> {
  const counts: Record<string, number> = {};
  for (const span of spans) counts[span.kind] = (counts[span.kind] ?? 0) + 1;
  return counts;
}

/**
 * `bytes` with every span replaced by `replacement(kind)` (which must need no JSON escaping: the
 * policy schema checks configured ones). Spans must come from `scanSecrets` on the same bytes.
 */
export function redactSpans(bytes: Uint8Array, spans: readonly Span[], replacement: (kind: SecretKind) => string = redactedMarker): Buffer {
  const b = asBuffer(bytes);
  const parts: Buffer[] = [];
  let copied = 0;
  for (const span of spans) {
    parts.push(b.subarray(copied, span.start));
    const text = replacement(span.kind);
    parts.push(Buffer.from(span.wrap ? `${span.wrap}${text}${span.wrap}` : `${text}${span.close ?? ""}`));
    copied = span.end;
  }
  parts.push(b.subarray(copied));
  return Buffer.concat(parts);
}

/** Text with every finding replaced by its marker (`[REDACTED:<kind>]`); the same string when nothing is found. */
export function redactString(text: string, mode: ScanMode): string {
  const bytes = Buffer.from(text);
  const spans = scanSecrets(bytes, { mode });
  return spans.length === 0 ? text : redactSpans(bytes, spans).toString();
}
