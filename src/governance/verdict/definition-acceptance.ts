import type { Workflow } from "../../core/config/schema.ts";
import type { PinMode, Severity } from "../../core/severity.ts";
import type { DefinitionChange, PinPolicy } from "../definitions/change.ts";

export type { DefinitionChange, PinPolicy };
import { showInvisible } from "../../core/visible-text.ts";
import { redactText } from "../../telemetry/redact.ts";
import type { CallRef, Verdict } from "./decider.ts";
import { GOVERNANCE_ERROR } from "./errors.ts";
import { KIND_WORDS } from "../definitions/definition.ts";
import { describeFinding } from "../definitions/findings.ts";

/** The policy's pin settings for one server, with the workflow that asks a person to accept. */
export type PinSettings = { mode: PinMode; blockSeverity: Severity | "none"; workflowName: string; workflow: Workflow };

/** When governance cannot say (the service is unreachable): the strictest reading. */
export const FAIL_CLOSED_PINS: Omit<PinPolicy, "enforce"> = { mode: "strict", blockSeverity: "high" };

/** Past this, a prompt's diff is cut in the middle (the approvals page and `thoughtgate pins show` have it whole). */
const PROMPT_DIFF_CHARS = 3_000;

/**
 * What a person is asked, on every channel: which server's which tool, what changed (the diff) and
 * what the checks found. Redacted and with invisible characters shown as escapes, like every prompt
 * (docs/governance.md, "What a person is shown").
 */
export function acceptancePrompt(serverId: string, change: DefinitionChange, options: { seeAllAt?: string } = {}): string {
  const target = `${KIND_WORDS[change.kind]} ${showInvisible(redactText(`${serverId}.${change.name}`))}`;
  const lines: string[] = [];
  if (change.status === "changed") {
    lines.push(`The ${target} changed its definition since it was pinned (${change.changed.join(", ")}). Accept the new definition?`);
    lines.push(shorten(visibleLines(redactText(change.diff)), options.seeAllAt));
  } else {
    lines.push(`The ${target} was flagged by ThoughtGate's poisoning checks. Accept its definition anyway?`);
  }
  if (change.findings.length > 0) {
    lines.push("Findings:");
    for (const finding of change.findings.slice(0, 10)) lines.push(`- ${describeFinding(finding)}`);
    if (change.findings.length > 10) lines.push(`- and ${change.findings.length - 10} more`);
  }
  return lines.join("\n");
}

/** Invisible characters as escapes, line by line (the diff's own line breaks stay). */
export function visibleLines(text: string): string {
  return text
    .split("\n")
    .map((line) => showInvisible(line))
    .join("\n");
}

function shorten(diff: string, seeAllAt: string | undefined): string {
  if (seeAllAt === undefined || diff.length <= PROMPT_DIFF_CHARS) return diff;
  const half = Math.floor(PROMPT_DIFF_CHARS / 2);
  return `${diff.slice(0, half)}\n…[${diff.length - 2 * half} characters of the diff not shown; the whole diff: ${seeAllAt}]…\n${diff.slice(diff.length - half)}`;
}

/**
 * The refusal of a call whose target is not accepted: `-32011`, gate `definitions`,
 * `data.reason` `definition_changed` or `definition_flagged`, `data.changed` the fields that
 * changed, `data.findings` the rule ids, and how to accept it.
 */
export function definitionRefusal(change: DefinitionChange, call: CallRef, why: string, taskId?: string): Verdict {
  const reason = change.status === "changed" ? "definition_changed" : "definition_flagged";
  const what =
    change.status === "changed"
      ? `the ${KIND_WORDS[change.kind]} "${change.name}" changed its definition since it was pinned (${change.changed.join(", ")})`
      : `the ${KIND_WORDS[change.kind]} "${change.name}" was flagged by the poisoning checks (${[...new Set(change.findings.map((f) => f.rule))].join(", ")})`;
  const message = `ThoughtGate blocked ${call.method} ${call.name}: ${what}, and no person has accepted it (${why}); accept it with \`thoughtgate pins accept ${call.serverId} ${change.name}\`, the approvals page or the agent's prompt`;
  return {
    action: "deny",
    gate: "definitions",
    ruleId: null,
    reason: `${what}: ${why}`,
    error: {
      code: GOVERNANCE_ERROR.definitionChanged,
      message,
      data: {
        gate: "definitions",
        tool: call.name,
        server_id: call.serverId,
        correlation_id: call.correlationId,
        reason,
        kind: change.kind,
        changed: change.changed,
        findings: change.findings.map((f) => f.rule),
        pinned_digest: change.pinnedDigest,
        served_digest: change.servedDigest,
        ...(taskId !== undefined ? { task_id: taskId } : {}),
      },
    },
  };
}
