import { describe, expect, test } from "bun:test";
import { parseConfig } from "../../../src/core/config/load.ts";
import { EMBEDDED_DEFAULT } from "../../../src/governance/engine/default-policy.ts";
import { decideSafely, GovernanceEngine, type EvaluateInput } from "../../../src/governance/engine/engine.ts";
import { StrictestOf } from "../../../src/governance/engine/strictest-of.ts";

function engine(yaml: string): GovernanceEngine {
  const result = parseConfig(yaml, {});
  if (!result.ok) throw new Error(result.problems.map((p) => `${p.path}: ${p.message}`).join("\n"));
  return new GovernanceEngine(result.config, null, "test");
}

const call = (name: string, extra: Partial<EvaluateInput> = {}): EvaluateInput => ({ serverId: "gh", method: "tools/call", name, arguments: {}, ...extra });

const user = engine(`schema: 1
sources:
  - { id: gh, expose: { mode: blocklist, tools: [secret_tool] } }
governance:
  defaults: { action: forward }
  rules:
    - { id: no-delete, match: "delete_*", action: deny }
    - { id: ask-push, match: push, action: approve, approval: slow }
    - { id: ask-merge, match: merge, action: approve }
approval:
  slow: { destination: { type: web }, timeout: 10m, on_timeout: approve }
`);

describe("a project policy restricts the user's, never loosens it", () => {
  const hostile = engine(`schema: 1
sources:
  - { id: gh, expose: { mode: all } }
governance:
  defaults: { action: forward }
  rules: [{ id: allow-all, match: "*", action: forward }]
`);
  const merged = new StrictestOf(user, hostile);

  test("a forward cannot undo the user's deny or approval, nor show a hidden tool", () => {
    expect(merged.evaluate(call("delete_repo"))).toEqual(user.evaluate(call("delete_repo")));
    expect(merged.evaluate(call("push"))).toEqual(user.evaluate(call("push")));
    expect(merged.evaluate(call("secret_tool"))).toMatchObject({ kind: "deny", block: { gate: "visibility" } });
    expect(merged.visibility.filter("gh", "tools", ["secret_tool", "list"])).toEqual(["list"]);
  });

  test("where both forward, the user's decision is the one reported", () => {
    expect(merged.evaluate(call("list"))).toEqual(user.evaluate(call("list")));
  });
});

describe("a project policy adds restrictions", () => {
  const strict = engine(`schema: 1
sources:
  - { id: gh, expose: { mode: blocklist, tools: [list_secrets] } }
governance:
  rules:
    - { id: no-list, match: list, action: deny }
    - { id: ask-push, match: push, action: approve, approval: quick }
    - { id: ask-get, match: get, action: approve }
    - { id: ask-merge, match: merge, action: approve, approval: cli }
approval:
  quick: { timeout: 30s }
  cli: { destination: { type: cli } }
`);
  const merged = new StrictestOf(user, strict);

  test("its deny wins, saying it came from the project policy", () => {
    expect(merged.evaluate(call("list"))).toEqual({
      kind: "deny",
      block: { gate: "rules", code: -32014, ruleId: "no-list", policyId: null, reason: "project policy: rule no-list: deny" },
    });
    expect(merged.evaluate(call("list_secrets"))).toMatchObject({ kind: "deny", block: { gate: "visibility", reason: 'project policy: tool "list_secrets" is not exposed by source "gh"' } });
    expect(merged.visibility.filter("gh", "tools", ["list_secrets", "secret_tool", "get"])).toEqual(["get"]);
  });

  test("its approval turns the user's forward into an approval", () => {
    expect(merged.evaluate(call("get"))).toMatchObject({ kind: "approve", ruleId: "ask-get", reason: "project policy: rule ask-get: approval required", workflowName: "default" });
  });

  test("both ask: the stricter workflow, the shorter timeout and on_timeout deny", () => {
    expect(merged.evaluate(call("push"))).toEqual({
      kind: "approve",
      ruleId: "ask-push",
      policyId: null,
      reason: "rule ask-push: approval required; project policy: rule ask-push: approval required",
      workflowName: "slow + project policy quick",
      workflow: { destination: { type: "web" }, timeout: 30_000, on_timeout: "deny" },
    });
  });

  test("both ask: the channel both allow; two different single channels leave none, so the call is denied", () => {
    expect(merged.evaluate(call("merge"))).toMatchObject({ kind: "approve", workflow: { destination: { type: "cli" } } });
    const onlyWeb = engine("schema: 1\ngovernance:\n  rules: [{ id: a, match: merge, action: approve, approval: w }]\napproval: { w: { destination: { type: web } } }\n");
    expect(new StrictestOf(onlyWeb, strict).evaluate(call("merge"))).toMatchObject({
      kind: "deny",
      block: { gate: "approval", code: -32007, reason: expect.stringContaining("one asks only by web and the other only by cli: no approval channel satisfies both") },
    });
  });

  test("the embedded default restricted by a project: its destructive approval stays, the project adds its own", () => {
    const merged = new StrictestOf(new GovernanceEngine(EMBEDDED_DEFAULT, null, "embedded"), strict);
    expect(merged.evaluate(call("rm", { annotations: { destructiveHint: true } }))).toMatchObject({ kind: "approve", ruleId: "default-destructive" });
    expect(decideSafely(merged, call("list"), "production")).toMatchObject({ kind: "deny", block: { ruleId: "no-list" } });
    expect(decideSafely(merged, call("list"), "development")).toMatchObject({ kind: "forward", would: "WOULD_BLOCK" });
  });
});

describe("pinning under a project policy", () => {
  test("the stricter mode, the lower severity and the stricter workflow win; a project cannot loosen", () => {
    const engine = (yaml: string) => {
      const parsed = parseConfig(yaml, {});
      if (!parsed.ok) throw new Error(JSON.stringify(parsed.problems));
      return new GovernanceEngine(parsed.config, null, "test");
    };
    const user = engine("schema: 1\nsources: [{ id: fs, pin: warn }]\npins: { block_severity: high }\n");
    const project = engine("schema: 1\npins: { mode: off, block_severity: medium }\n");
    const combined = new StrictestOf(user, project);
    expect(combined.pins("fs")).toMatchObject({ mode: "warn", blockSeverity: "medium" });
    expect(combined.pins("other")).toMatchObject({ mode: "strict", blockSeverity: "medium" });
  });

  test("the workflow that asks to accept a definition: the shorter timeout, the narrower channel, on_timeout deny if either says deny", () => {
    const engine = (yaml: string) => {
      const parsed = parseConfig(yaml, {});
      if (!parsed.ok) throw new Error(JSON.stringify(parsed.problems));
      return new GovernanceEngine(parsed.config, null, "test");
    };
    const careful = engine("schema: 1\npins: { approval: careful }\napproval:\n  careful: { destination: { type: web }, timeout: 10m, on_timeout: deny }\n");
    const hurried = engine("schema: 1\npins: { approval: hurry }\napproval:\n  hurry: { timeout: 1s, on_timeout: approve }\n");
    const expected = { destination: { type: "web" as const }, timeout: 1_000, on_timeout: "deny" as const };
    // Either way round: a project's `approve` never outweighs the user's `deny`, nor the reverse.
    expect(new StrictestOf(careful, hurried).pins("fs")).toEqual({ mode: "strict", blockSeverity: "high", workflowName: "careful + project policy hurry", workflow: expected });
    expect(new StrictestOf(hurried, careful).pins("fs").workflow).toEqual(expected);
    // Both approve on timeout: so does the combination (what a definition task then does is the service's: docs/governance.md).
    expect(new StrictestOf(hurried, hurried).pins("fs").workflow).toEqual({ destination: { type: "any" as const }, timeout: 1_000, on_timeout: "approve" as const });
  });
});

describe("two approvals, one stricter workflow", () => {
  const asks = (workflow: string) =>
    engine(`schema: 1\ngovernance:\n  rules:\n    - { id: no-rm, match: rm, action: deny }\n    - { id: ask, match: "*", action: approve, approval: w }\napproval:\n  w: ${workflow}\n`);

  test("on_timeout approve only when both say approve; either deny makes it deny, whichever policy says it", () => {
    const lenient = asks("{ destination: { type: web }, timeout: 5m, on_timeout: approve }");
    const firm = asks("{ destination: { type: web }, timeout: 5m, on_timeout: deny }");
    const onTimeout = (a: GovernanceEngine, b: GovernanceEngine) => {
      const decision = new StrictestOf(a, b).evaluate(call("push"));
      return decision.kind === "approve" ? decision.workflow.on_timeout : decision.kind;
    };
    expect([onTimeout(lenient, lenient), onTimeout(firm, lenient), onTimeout(lenient, firm), onTimeout(firm, firm)]).toEqual(["approve", "deny", "deny", "deny"]);
  });

  test("the same channel on both sides is kept (not refused as two channels); the same workflow keeps its one name", () => {
    const web = asks("{ destination: { type: web }, timeout: 5m }");
    expect(new StrictestOf(web, web).evaluate(call("push"))).toMatchObject({ kind: "approve", workflowName: "w", workflow: { destination: { type: "web" } } });
  });

  test("the user's deny stands even where the project asks for approval or denies too, reported as the user's", () => {
    const web = asks("{ destination: { type: web } }");
    const userDeny = user.evaluate(call("delete_repo"));
    expect(userDeny).toMatchObject({ kind: "deny", block: { ruleId: "no-delete", reason: "rule no-delete: deny" } });
    expect(new StrictestOf(user, web).evaluate(call("delete_repo"))).toEqual(userDeny);
    const bothDeny = asks("{ destination: { type: web } }");
    expect(new StrictestOf(bothDeny, web).evaluate(call("rm"))).toMatchObject({ kind: "deny", block: { reason: "rule no-rm: deny" } });
  });
});

describe("pinning: severity thresholds", () => {
  const pins = (yaml: string) => engine(`schema: 1\npins: { ${yaml} }\n`);

  test("a project's looser threshold does not raise the user's; 'none' hides nothing, so any threshold is stricter", () => {
    expect(new StrictestOf(pins("block_severity: medium"), pins("block_severity: high")).pins("fs").blockSeverity).toBe("medium");
    expect(new StrictestOf(pins("block_severity: none"), pins("block_severity: high")).pins("fs").blockSeverity).toBe("high");
    expect(new StrictestOf(pins("block_severity: low"), pins("block_severity: none")).pins("fs").blockSeverity).toBe("low");
  });

  test("the same workflow on both sides keeps its one name", () => {
    const same = pins("approval: w }\napproval: { w: { timeout: 1m } ");
    expect(new StrictestOf(same, same).pins("fs")).toMatchObject({ workflowName: "w", workflow: { timeout: 60_000 } });
  });
});
