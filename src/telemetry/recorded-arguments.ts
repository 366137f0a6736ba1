import { redact } from "./redact.ts";

/** A string argument longer than this is recorded with its middle cut out (both ends stay). */
const RECORDED_STRING_CHARS = 16_384;

/**
 * A call's arguments as the record keeps them (`tool_call_start.arguments`, docs/events.md): what a
 * person is shown (the one redactor, src/telemetry/redact.ts), with each string longer than 16 KiB
 * cut in its middle, after redaction (a cut never leaves half a credential for the redactor to
 * miss), saying how much is not recorded. The event stream writes invisible characters as JSON
 * escapes (src/telemetry/events.ts). `args_hash` beside it stays the hash of what was sent.
 */
export function recordedArguments(args: unknown): unknown {
  return shorten(redact(args ?? {}));
}

function shorten(value: unknown): unknown {
  if (typeof value === "string") {
    if (value.length <= RECORDED_STRING_CHARS) return value;
    const half = RECORDED_STRING_CHARS / 2;
    return `${value.slice(0, half)}…[${value.length - 2 * half} characters not recorded]…${value.slice(value.length - half)}`;
  }
  if (value === null || typeof value !== "object") return value;
  if (Array.isArray(value)) return value.map(shorten);
  const out: Record<string, unknown> = {};
  for (const [key, item] of Object.entries(value)) out[key] = shorten(item);
  return out;
}
