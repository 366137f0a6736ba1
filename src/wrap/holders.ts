/**
 * The holders of a shared config (journal.ts): who they are, whether they still hold it (a wrap
 * that died holds nothing; `enroll` holds until `unenroll`), and how a message names them.
 */
import { mayStillRun, ownProcessStartId } from "../core/process-identity.ts";
import type { Holder } from "./journal.ts";

/** This process's wrap session as a holder. */
export function wrapHolder(runId: string): Holder {
  return { kind: "wrap", pid: process.pid, pidStart: ownProcessStartId(), startedAt: new Date().toISOString(), runId };
}

export function enrollHolder(agent: string): Holder {
  return { kind: "enroll", agent, since: new Date().toISOString() };
}

export function isHolderAlive(holder: Holder): boolean {
  return holder.kind === "enroll" || mayStillRun(holder.pid, holder.pidStart);
}

/** The same holder: the same wrap process and session, or the enrollment of the same agent. */
export function isSameHolder(a: Holder, b: Holder): boolean {
  if (a.kind === "enroll") return b.kind === "enroll" && a.agent === b.agent;
  return b.kind === "wrap" && a.pid === b.pid && a.pidStart === b.pidStart && a.runId === b.runId;
}

/** "wrap pid 123", "wrap pids 123, 456 and the enrollment of claude-code". */
export function describeHolders(holders: readonly Holder[]): string {
  const pids = holders.flatMap((h) => (h.kind === "wrap" ? [h.pid] : []));
  const agents = holders.flatMap((h) => (h.kind === "enroll" ? [h.agent] : []));
  const parts = [pids.length === 0 ? "" : `wrap pid${pids.length === 1 ? "" : "s"} ${pids.join(", ")}`, agents.length === 0 ? "" : `the enrollment of ${agents.join(", ")}`].filter(Boolean);
  return parts.join(" and ") || "nobody";
}
