import type { Attributes, Span } from "../../telemetry/tracing/tracer.ts";
import type { Outcome } from "./engine.ts";
import type { Gate } from "../verdict/errors.ts";

type Step = [gate: Gate, attributes: Attributes];

/**
 * The gates a decision went through, in order (docs/architecture.md, decision 4: visibility →
 * rules → Cedar → approval), as events `thoughtgate.gate.<gate>` on the span that decided: the
 * shim's request span or the governance service's `thoughtgate.evaluate`. The gates are
 * synchronous and take microseconds, so they are events with a result, not spans of their own;
 * the one that takes time, a person's approval, is a span (shim/call-trace.ts).
 */
export function recordGates(span: Span | undefined, outcome: Outcome): void {
  if (!span?.context) return;
  for (const [gate, attributes] of gateTrail(outcome)) span.event(`thoughtgate.gate.${gate}`, attributes);
}

/** Each gate reached and what it said; the last one decided (development: what it would have done). */
export function gateTrail(outcome: Outcome): Step[] {
  if (outcome.kind === "deny") {
    const { gate, ruleId, policyId } = outcome.block;
    return stepsTo(gate, "deny", ruleId, policyId);
  }
  if (outcome.kind === "approve") return stepsTo("approval", "required", outcome.ruleId, outcome.policyId);
  const would: Attributes = outcome.would ? { "thoughtgate.would": outcome.would } : {};
  const gate = outcome.gate ?? "rules";
  if (outcome.would === "WOULD_BLOCK") return withLast(stepsTo(gate, "deny", outcome.ruleId, outcome.policyId), would);
  if (gate === "approval") return withLast(stepsTo("approval", outcome.autoApproved ? "auto_approved" : "approved", outcome.ruleId, outcome.policyId), would);
  return stepsTo(gate, gate === "cedar" ? "permit" : "forward", outcome.ruleId, outcome.policyId);
}

function stepsTo(gate: Gate, result: string, ruleId: string | null, policyId: string | null): Step[] {
  const said = (extra: Attributes = {}): Attributes => ({ "thoughtgate.gate.result": result, ...extra });
  const rule: Attributes = ruleId ? { "thoughtgate.rule_id": ruleId } : {};
  const policy: Attributes = policyId ? { "thoughtgate.policy_id": policyId } : {};
  const visible: Step = ["visibility", { "thoughtgate.gate.result": "pass" }];
  switch (gate) {
    case "governance":
    case "visibility":
    // The definitions gate stands before the others (docs/governance.md, "Pinned definitions").
    case "definitions":
      return [[gate, said()]];
    case "rules":
      return [visible, ["rules", said(rule)]];
    case "cedar":
      return [visible, ["rules", { "thoughtgate.gate.result": "policy", ...rule }], ["cedar", said(policy)]];
    case "approval": {
      // Through Cedar first when a policy permitted it (`action: policy` with an approval workflow).
      const viaCedar: Step[] = policyId ? [["cedar", { "thoughtgate.gate.result": "permit", ...policy }]] : [];
      return [visible, ["rules", { "thoughtgate.gate.result": policyId ? "policy" : "approve", ...rule }], ...viaCedar, ["approval", said()]];
    }
  }
}

function withLast(steps: Step[], extra: Attributes): Step[] {
  const last = steps.at(-1);
  if (last) last[1] = { ...last[1], ...extra };
  return steps;
}
