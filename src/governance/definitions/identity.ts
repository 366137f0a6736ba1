import { canonicalJson, sha256Hex } from "../../core/canonical-json.ts";

/**
 * Whose definitions a pin file holds: a server is its `--server-id` and what runs it (the command
 * line, or a remote server's URL without its query, which may carry a key). The same id over another
 * command is another server, pinned afresh: a definition trusted from one program says nothing about
 * another's.
 */
export type ServerIdentity = {
  serverId: string;
  command: string[];
  url: string | null;
  /** SHA-256 of the canonical JSON of `{command, url}`. */
  digest: string;
};

export function serverIdentity(serverId: string, command: readonly string[], url: string | undefined | null): ServerIdentity {
  const what = { command: [...command], url: url ?? null };
  return { serverId, ...what, digest: sha256Hex(canonicalJson(what)) };
}

/**
 * The pin file's name: a readable part of the id (letters, digits, `._-`, at most 40) and 16 hex
 * characters of a hash of id and identity, so no id can name a path (`../x`, `a/b`) and two ids that
 * read the same still get two files.
 */
export function pinFileName(identity: Pick<ServerIdentity, "serverId" | "digest">): string {
  return `${readablePart(identity.serverId)}-${sha256Hex(`${identity.serverId}\u0000${identity.digest}`).slice(0, 16)}.json`;
}

/**
 * Whether a pin file's name is one `pinFileName` gives `serverId` (for a file that cannot be read,
 * so cannot say whose it is). Ids that differ only in characters outside `A-Za-z0-9._-` (or after
 * the 40th) share the readable part, so the name alone cannot tell those apart.
 */
export function isPinFileNameOf(fileName: string, serverId: string): boolean {
  const readable = readablePart(serverId);
  return fileName.startsWith(`${readable}-`) && /^[0-9a-f]{16}\.json$/.test(fileName.slice(readable.length + 1));
}

function readablePart(serverId: string): string {
  return serverId.replace(/[^A-Za-z0-9._-]/g, "_").replace(/^\.+/, "_").slice(0, 40) || "_";
}
