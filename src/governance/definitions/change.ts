import type { PinMode, Severity } from "../../core/severity.ts";
import type { DefinitionKind } from "./definition.ts";
import type { Finding } from "./findings.ts";

/** What the policy says about one server's definitions, as a shim needs it. */
export type PinPolicy = {
  mode: PinMode;
  /** Findings at or above this hide a definition nobody accepted (`none`: findings never hide). */
  blockSeverity: Severity | "none";
  /** Production: a changed or flagged definition is hidden and refused; development: WOULD_BLOCK, passed. */
  enforce: boolean;
};

/** A definition a person must accept before its calls run: changed since pinned, flagged, or both. */
export type DefinitionChange = {
  kind: DefinitionKind;
  name: string;
  /** `changed`: differs from its pin; `flagged`: matches it, but its findings hide it and nobody accepted it. */
  status: "changed" | "flagged";
  /** Top-level fields that differ from the pin (empty when only flagged). */
  changed: string[];
  pinnedDigest: string | null;
  servedDigest: string;
  /** A unified diff of the pinned and the served definition (empty when only flagged). */
  diff: string;
  /** The findings that hide it (at or above the policy's severity). */
  findings: Finding[];
};
