import type { DefinitionChange } from "../definitions/change.ts";
import type { DefinitionChangeWire } from "./api.ts";

/** A changed or flagged definition as the shim and the service exchange it (snake_case on the wire). */
export function toWire(change: DefinitionChange): DefinitionChangeWire {
  return { kind: change.kind, name: change.name, status: change.status, changed: change.changed, pinned_digest: change.pinnedDigest, served_digest: change.servedDigest, diff: change.diff, findings: change.findings };
}

export function fromWire(change: DefinitionChangeWire): DefinitionChange {
  return { kind: change.kind, name: change.name, status: change.status, changed: change.changed, pinnedDigest: change.pinned_digest, servedDigest: change.served_digest, diff: change.diff, findings: change.findings };
}
