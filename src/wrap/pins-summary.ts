import { showInvisible } from "../core/visible-text.ts";
import { pinReport } from "../governance/definitions/pin-report.ts";
import type { PolicyEngine } from "../governance/engine/engine.ts";

/**
 * What wrap can say about pinned definitions before the agent starts: the shims read the servers'
 * lists only when the agent starts them, after this banner, so it reports what the pin store
 * already holds for the servers it governs (pinned, changed since, flagged) and which servers have
 * none yet (their definitions are pinned when first listed). What changes during the session is in
 * the summary at the end (from the session record).
 */
export function pinsSummary(serverIds: readonly string[], engine: PolicyEngine): string {
  if (serverIds.length === 0) return "";
  const wanted = new Set(serverIds);
  const { servers, problems } = pinReport(null, (id) => engine.pins(id).blockSeverity);
  const known = servers.filter((s) => wanted.has(s.file.server_id));
  const fresh = serverIds.filter((id) => !known.some((s) => s.file.server_id === id));
  const all = known.flatMap((s) => s.definitions.map((d) => ({ ...d, serverId: s.file.server_id })));
  const changed = all.filter((d) => d.status === "changed");
  const flagged = all.filter((d) => d.status === "flagged");
  const names = (list: typeof all) => (list.length === 0 ? "" : ` (${list.slice(0, 5).map((d) => showInvisible(`${d.serverId}.${d.name}`)).join(", ")}${list.length > 5 ? ", …" : ""})`);
  const lines = [
    `thoughtgate: definitions: ${all.length} pinned for ${new Set(known.map((s) => s.file.server_id)).size} of ${serverIds.length} servers, ${changed.length} changed since${names(changed)}, ${flagged.length} flagged${names(flagged)}; new, pinned when first listed: ${fresh.length === 0 ? "none" : fresh.map((id) => showInvisible(id)).join(", ")}`,
  ];
  if (changed.length + flagged.length > 0) lines.push("thoughtgate: changed and flagged definitions stay hidden until accepted: `thoughtgate pins show SERVER NAME`, then `thoughtgate pins accept SERVER NAME`");
  for (const problem of problems) lines.push(`thoughtgate: warning: ${problem}`);
  return lines.join("\n");
}
