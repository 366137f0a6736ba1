/**
 * The approval form the shim puts to a person through the agent, and what each answer means
 * (src/shim/approval-form.ts): only an explicit choice the form offered, at a person's pace, runs the call.
 */
import { expect, test } from "bun:test";
import { approvalForm, HUMAN_MIN_ANSWER_MS, outcomeOf } from "../../src/shim/approval-form.ts";

const SLOW = HUMAN_MIN_ANSWER_MS + 1;

test("only an accepted choice the form offered approves; deny is a person's no; an accept without a choice, or with one not offered, is no one's answer", () => {
  expect(outcomeOf({ action: "accept", content: { decision: "once" } }, SLOW)).toEqual({ kind: "approved", scope: "once" });
  expect(outcomeOf({ action: "accept", content: { decision: "session" } }, SLOW)).toEqual({ kind: "approved", scope: "session" });
  expect(outcomeOf({ action: "accept", content: { decision: "always_project" } }, SLOW, { always: true })).toEqual({ kind: "approved", scope: "always", alwaysScope: "project" });
  expect(outcomeOf({ action: "accept", content: { decision: "always_everywhere" } }, SLOW, { always: true })).toEqual({ kind: "approved", scope: "always", alwaysScope: "everywhere" });
  expect(outcomeOf({ action: "accept", content: { decision: "deny" } }, SLOW)).toEqual({ kind: "declined" });
  const noOnes = [
    { action: "accept", content: { decision: "always_everywhere" } },
    { action: "accept", content: { decision: "always" } },
    { action: "accept", content: { decision: "ONCE" } },
    { action: "accept", content: { decision: ["once"] } },
    { action: "accept", content: {} },
    { action: "accept" },
  ];
  for (const answer of noOnes) expect([answer, outcomeOf(answer, SLOW)]).toEqual([answer, { kind: "unanswered" }]);
});

test("an answer faster than reading the question is no one's, accept included; a decline at a person's pace is their no, a cancel their dismissal", () => {
  expect(outcomeOf({ action: "decline" }, HUMAN_MIN_ANSWER_MS)).toEqual({ kind: "declined" });
  expect(outcomeOf({ action: "decline" }, HUMAN_MIN_ANSWER_MS - 1)).toEqual({ kind: "unanswered" });
  expect(outcomeOf({ action: "accept", content: { decision: "once" } }, HUMAN_MIN_ANSWER_MS - 1)).toEqual({ kind: "unanswered" });
  expect(outcomeOf({ action: "cancel" }, SLOW)).toEqual({ kind: "dismissed" });
  expect(outcomeOf({ action: "cancel" }, 0)).toEqual({ kind: "unanswered" });
});

test("what is not an answer to the form is not taken as one", () => {
  for (const response of [null, undefined, "accept", 1, ["accept"], {}, { action: "ACCEPT", content: { decision: "once" } }, { action: null }]) {
    expect([response, outcomeOf(response, SLOW)]).toEqual([response, null]);
  }
});

test("the form: one required choice, Allow once preset; titled oneOf from MCP 2025-11-25 (and when the version is unknown), enum with enumNames before; always only where offered", () => {
  const callChoices = ["once", "session", "deny"];
  for (const version of [null, "2025-11-25", "2026-06-18"]) {
    const form = approvalForm(version) as { type: string; required: string[]; properties: { decision: { type: string; title: string; default: string; oneOf: { const: string; title: string }[] } } };
    expect([version, form.type, form.required]).toEqual([version, "object", ["decision"]]);
    expect(form.properties.decision.type).toBe("string");
    expect(form.properties.decision.title).toBe("Allow this call?");
    expect(form.properties.decision.default).toBe("once");
    expect(form.properties.decision.oneOf.map((c) => c.const)).toEqual(callChoices);
    expect(form.properties.decision.oneOf[1]?.title).toBe("Allow this tool for this session");
  }
  const withAlways = approvalForm("2025-11-25", "call", { always: true }) as { properties: { decision: { oneOf: { const: string }[] } } };
  expect(withAlways.properties.decision.oneOf.map((c) => c.const)).toEqual(["once", "session", "always_project", "always_everywhere", "deny"]);
  const old = approvalForm("2025-06-18") as { properties: { decision: { title: string; enum: string[]; enumNames: string[]; oneOf?: unknown } } };
  expect(old.properties.decision.enum).toEqual(callChoices);
  expect(old.properties.decision.enumNames).toEqual(["Allow once", "Allow this tool for this session", "Deny"]);
  expect(old.properties.decision.oneOf).toBeUndefined();
});

test("a changed definition is accepted or kept hidden: no 'session' choice", () => {
  const form = approvalForm("2025-11-25", "definition") as { properties: { decision: { title: string; oneOf: { const: string; title: string }[] } } };
  expect(form.properties.decision.title).toBe("Accept the new definition?");
  expect(form.properties.decision.oneOf.map((c) => c.const)).toEqual(["once", "deny"]);
  expect(form.properties.decision.oneOf[0]?.title).toStartWith("Accept the new definition");
  const old = approvalForm("2025-03-26", "definition") as { properties: { decision: { enum: string[]; enumNames: string[] } } };
  expect(old.properties.decision.enum).toEqual(["once", "deny"]);
  expect(old.properties.decision.enumNames[1]).toBe("Keep it hidden and its calls refused");
});
