/**
 * The `Bearer` challenge of a `WWW-Authenticate` header (RFC 6750 §3, RFC 9728 §5.1): its
 * `resource_metadata`, `scope` and `error`. Other schemes and unknown parameters are ignored.
 */
export type BearerChallenge = { resourceMetadata: string | null; scope: string | null; error: string | null };

export function parseBearerChallenge(header: string | null): BearerChallenge | null {
  if (header === null) return null;
  const at = header.search(/(^|,\s*)Bearer(\s|$)/i);
  if (at === -1) return null;
  const params: Record<string, string> = {};
  const rest = header.slice(at).replace(/^,?\s*Bearer\s*/i, "");
  // name=token or name="quoted \"string\"", separated by commas; stops at the next scheme.
  const param = /\s*([A-Za-z0-9_-]+)\s*=\s*(?:"((?:[^"\\]|\\.)*)"|([^\s,]*))\s*,?/y;
  let match: RegExpExecArray | null;
  while ((match = param.exec(rest)) !== null) {
    const name = (match[1] ?? "").toLowerCase();
    params[name] ??= match[2] !== undefined ? match[2].replace(/\\(.)/g, "$1") : (match[3] ?? "");
  }
  return { resourceMetadata: params.resource_metadata ?? null, scope: params.scope ?? null, error: params.error ?? null };
}
