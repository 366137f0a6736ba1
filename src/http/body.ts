import { concatBytes } from "../core/bytes.ts";

/**
 * Reading HTTP bodies without trusting their size: a body is read up to a cap and the rest is
 * counted, not kept, so a hostile server cannot grow our memory by sending more.
 */
export type CappedBody = { kind: "body"; bytes: Uint8Array } | { kind: "oversize"; size: number; head: Uint8Array };

const HEAD_BYTES = 256;

export async function readCapped(body: ReadableStream<Uint8Array> | null, maxBytes: number, signal?: AbortSignal): Promise<CappedBody> {
  if (!body) return { kind: "body", bytes: new Uint8Array(0) };
  const reader = body.getReader();
  const parts: Uint8Array[] = [];
  let size = 0;
  const cancel = () => void reader.cancel().catch(() => undefined);
  signal?.addEventListener("abort", cancel, { once: true });
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      if (size + value.length <= maxBytes) parts.push(value);
      else if (size < HEAD_BYTES) parts.push(value.subarray(0, HEAD_BYTES - size));
      size += value.length;
    }
  } finally {
    signal?.removeEventListener("abort", cancel);
  }
  const bytes = concatBytes(parts);
  return size > maxBytes ? { kind: "oversize", size, head: bytes.subarray(0, HEAD_BYTES) } : { kind: "body", bytes };
}

/** A short, printable excerpt of a body for an error message (a server's 5xx page, say). */
export function excerpt(bytes: Uint8Array, maxChars = 200): string {
  const text = new TextDecoder("utf-8").decode(bytes.subarray(0, maxChars * 4));
  // Control characters (and the rest of a long HTML page) do not belong in a one-line error.
  const flat = text.replace(/[\u0000-\u001f\u007f-\u009f]+/g, " ").trim();
  return flat.length > maxChars ? `${flat.slice(0, maxChars)}…` : flat;
}

