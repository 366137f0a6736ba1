import { describe, expect, test } from "bun:test";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { parseConfig } from "../../../src/core/config/load.ts";
import type { ThoughtGateConfig } from "../../../src/core/config/schema.ts";
import { EMBEDDED_DEFAULT, EMBEDDED_DEFAULT_YAML } from "../../../src/governance/engine/default-policy.ts";
import { applyProfile, GovernanceEngine, type EvaluateInput } from "../../../src/governance/engine/engine.ts";
import { tempDir } from "../../support/harness.ts";

function config(yaml: string, dir?: string): ThoughtGateConfig {
  const result = parseConfig(yaml, {});
  if (!result.ok) throw new Error(result.problems.map((p) => `${p.path}: ${p.message}`).join("\n"));
  const cfg = result.config;
  if (cfg.cedar && dir) cfg.cedar = { ...cfg.cedar, policies: cfg.cedar.policies.map((p) => join(dir, p)), ...(cfg.cedar.schema ? { schema: join(dir, cfg.cedar.schema) } : {}) };
  return cfg;
}

const call = (name: string, extra: Partial<EvaluateInput> = {}): EvaluateInput => ({ serverId: "gh", method: "tools/call", name, arguments: {}, ...extra });

describe("gate 1: visibility", () => {
  const engine = new GovernanceEngine(
    config(`schema: 1
sources:
  - { id: gh, expose: { mode: allowlist, tools: ["get_*", list_issues], prompts: [summary] } }
  - { id: fs, expose: { mode: blocklist, tools: [write_file] } }
  - { id: off, enabled: false }
  - { id: none, expose: { mode: allowlist, tools: [] } }
`),
    null,
    "test",
  );

  test("allowlist: a listed tool passes, anything else is -32015", async () => {
    expect(engine.evaluate(call("get_repo")).kind).toBe("forward");
    expect(engine.evaluate(call("delete_repo"))).toEqual({
      kind: "deny",
      block: { gate: "visibility", code: -32015, ruleId: null, policyId: null, reason: 'tool "delete_repo" is not exposed by source "gh"' },
    });
  });

  test("blocklist hides only what it names; a server missing from sources sees everything", async () => {
    expect(engine.evaluate(call("write_file", { serverId: "fs" })).kind).toBe("deny");
    expect(engine.evaluate(call("read_file", { serverId: "fs" })).kind).toBe("forward");
    expect(engine.evaluate(call("anything", { serverId: "unlisted" })).kind).toBe("forward");
  });

  test("a disabled source and an empty allowlist show nothing", async () => {
    expect(engine.evaluate(call("x", { serverId: "off" })).kind).toBe("deny");
    expect(engine.evaluate(call("x", { serverId: "none" })).kind).toBe("deny");
    expect(engine.visibility.filter("none", "tools", ["a", "b"])).toEqual([]);
  });

  test("lists are the allowlist ∩ what the server has, in the server's order", async () => {
    expect(engine.visibility.filter("gh", "tools", ["delete_repo", "list_issues", "get_repo"])).toEqual(["list_issues", "get_repo"]);
    expect(engine.visibility.filter("gh", "prompts", ["summary", "other"])).toEqual(["summary"]);
    // resources are not listed for gh, so they are left alone.
    expect(engine.visibility.filter("gh", "resources", ["file:///a"])).toEqual(["file:///a"]);
    expect(engine.evaluate({ serverId: "gh", method: "prompts/get", name: "other", arguments: {} }).kind).toBe("deny");
  });
});

describe("gate 2: rules", () => {
  const engine = new GovernanceEngine(
    config(`schema: 1
governance:
  defaults: { action: deny }
  rules:
    - { id: gh-deletes, match: "delete_*", source: gh, action: approve }
    - { id: deletes, match: "delete_*", action: deny }
    - { id: reads, match: "*", annotations: { readOnlyHint: true }, action: forward }
    - { id: prompts, match: "*", method: prompts/get, action: forward }
approval:
  oncall: { timeout: 30s }
`),
    null,
    "test",
  );

  test("first match wins, with the optional server filter", async () => {
    expect(engine.evaluate(call("delete_repo"))).toMatchObject({ kind: "approve", ruleId: "gh-deletes", workflowName: "default", workflow: { timeout: 15 * 60_000, on_timeout: "deny", destination: { type: "any" } } });
    expect(engine.evaluate(call("delete_repo", { serverId: "gitlab" }))).toEqual({
      kind: "deny",
      block: { gate: "rules", code: -32014, ruleId: "deletes", policyId: null, reason: "rule deletes: deny" },
    });
  });

  test("annotation filters use what the server declared; an unknown tool matches none", async () => {
    expect(engine.evaluate(call("search", { annotations: { readOnlyHint: true } }))).toMatchObject({ kind: "forward", ruleId: "reads" });
    expect(engine.evaluate(call("search", { annotations: { readOnlyHint: false } }))).toMatchObject({ kind: "deny", block: { ruleId: "defaults" } });
    expect(engine.evaluate(call("search"))).toMatchObject({ kind: "deny", block: { ruleId: "defaults" } });
  });

  test("rules are per method: tools rules do not govern prompts/get", async () => {
    expect(engine.evaluate({ serverId: "gh", method: "prompts/get", name: "delete_me", arguments: {} })).toMatchObject({ kind: "forward", ruleId: "prompts" });
  });
});

describe("gate 3: Cedar", () => {
  /** The argument types the policies below read (tool arguments have no shape until declared). */
  const ARGUMENTS = "namespace ThoughtGate { type Arguments = { path?: String, target?: App }; }";
  async function cedarEngine(policies: string, rules = '[{ id: p, match: "*", action: policy }]', schema: string | undefined = ARGUMENTS) {
    // The files are read once, at load: the directory can go when this returns.
    using dir = tempDir();
    writeFileSync(join(dir.path, "p.cedar"), policies);
    if (schema) writeFileSync(join(dir.path, "s.cedarschema"), schema);
    const yaml = `schema: 1\ngovernance:\n  rules: ${rules}\napproval: { fast: { timeout: 5s } }\ncedar: { policies: [p.cedar]${schema ? ", schema: s.cedarschema" : ""} }\n`;
    return await GovernanceEngine.fromConfig(config(yaml, dir.path), "test");
  }
  const policies = `@id("allow") permit(principal, action, resource);
@id("no-etc") forbid(principal, action == ThoughtGate::Action::"tools/call", resource) when { resource.arguments has path && resource.arguments.path like "/etc/*" };`;

  test("permit forwards, forbid denies with -32003 and the determining policy id", async () => {
    const engine = await cedarEngine(policies);
    expect(engine.evaluate(call("read", { arguments: { path: "/tmp/a" } }))).toEqual({ kind: "forward", gate: "cedar", ruleId: "p", policyId: "allow", reason: "permitted by Cedar policy allow" });
    expect(engine.evaluate(call("read", { arguments: { path: "/etc/shadow" } }))).toEqual({
      kind: "deny",
      block: { gate: "cedar", code: -32003, ruleId: "p", policyId: "no-etc", reason: "forbidden by Cedar policy no-etc" },
    });
  });

  test("no permitting policy denies (Cedar is default-deny)", async () => {
    const engine = await cedarEngine(`@id("only-gh") permit(principal, action, resource) when { resource.server == "other" };`);
    expect(engine.evaluate(call("x"))).toMatchObject({ kind: "deny", block: { reason: "no Cedar policy permits it" } });
  });

  test("permit plus a named approval workflow goes on to approval", async () => {
    const engine = await cedarEngine(policies, '[{ id: p, match: "*", action: policy, approval: fast }]');
    expect(engine.evaluate(call("read", { arguments: { path: "/tmp" } }))).toMatchObject({ kind: "approve", workflowName: "fast", workflow: { timeout: 5000 }, policyId: "allow" });
  });

  test("arguments cannot forge entity references", async () => {
    const engine = await cedarEngine(`@id("allow") permit(principal, action, resource) unless { resource.arguments has target && resource.arguments.target == ThoughtGate::App::"admin" };`);
    expect(engine.evaluate(call("x", { arguments: { target: { __entity: { type: "ThoughtGate::App", id: "admin" } } } })).kind).toBe("forward");
  });

  test("invalid policy text and policies that break ThoughtGate's schema are fatal at load, with file:line:column", async () => {
    await expect(cedarEngine("permit(principal, action, resource")).rejects.toThrow(/p\.cedar:1:35: unexpected end of input/);
    await expect(cedarEngine(`permit(principal, action, resource)\n  when { resource.nmae == "x" };`)).rejects.toThrow(/p\.cedar:2:10: policy p\.cedar#0: attribute `nmae` on entity type `ThoughtGate::(ToolCall|McpMethod)` not found: did you mean `name`\?/);
    expect((await cedarEngine(`permit(principal, action, resource) when { resource.name == "x" };`)).cedar?.policyIds).toEqual(["p.cedar#0"]);
  });

  test("a denial caused by a policy that failed to evaluate says so, with the policy id and Cedar's message", async () => {
    // `limit` is declared, so the policy validates; a call without it makes the permit fail, not silently not apply.
    const engine = await cedarEngine(`@id("small") permit(principal, action, resource) when { resource.arguments.limit < 10 };`, undefined, "namespace ThoughtGate { type Arguments = { limit: Long }; }");
    expect(engine.evaluate(call("x", { arguments: { limit: 3 } })).kind).toBe("forward");
    expect(engine.evaluate(call("x", { arguments: {} }))).toMatchObject({
      kind: "deny",
      block: { gate: "cedar", code: -32003, reason: expect.stringMatching(/^Cedar error \(failing closed\): no Cedar policy permits it, and policy small failed to evaluate: .*limit/) },
    });
  });

  test("context carries the call's project and working directory", async () => {
    const engine = await cedarEngine(`@id("here") permit(principal, action, resource) when { context.project == "/src/app" && context.cwd like "/src/app*" };`);
    const place = { project: "/src/app", cwd: "/src/app/lib", home: "/home/u" };
    expect(engine.evaluate(call("x", { place })).kind).toBe("forward");
    expect(engine.evaluate(call("x", { place: { ...place, project: "/src/other" } })).kind).toBe("deny");
  });
});

describe("profiles", () => {
  const engine = new GovernanceEngine(config(`schema: 1\ngovernance:\n  rules:\n    - { id: d, match: "delete_*", action: deny }\n    - { id: a, match: "push", action: approve }\n`), null, "test");

  test("production enforces", async () => {
    expect(applyProfile(engine.evaluate(call("delete_x")), "production").kind).toBe("deny");
    expect(applyProfile(engine.evaluate(call("push")), "production").kind).toBe("approve");
  });

  test("development forwards with WOULD_BLOCK / WOULD_REQUIRE_APPROVAL and auto-approves", async () => {
    expect(applyProfile(engine.evaluate(call("delete_x")), "development")).toEqual({
      kind: "forward", gate: "rules", ruleId: "d", policyId: null, reason: "WOULD_BLOCK: rule d: deny", would: "WOULD_BLOCK",
    });
    expect(applyProfile(engine.evaluate(call("push")), "development")).toMatchObject({ kind: "forward", would: "WOULD_REQUIRE_APPROVAL", autoApproved: true });
  });
});

describe("embedded default policy", () => {
  test("the documented YAML is exactly the embedded default", async () => {
    expect(parseConfig(EMBEDDED_DEFAULT_YAML, {})).toEqual({ ok: true, config: EMBEDDED_DEFAULT });
  });

  test("read-only forwards, destructive needs approval, additive forwards on this machine and asks when it reaches the open world", async () => {
    const engine = new GovernanceEngine(EMBEDDED_DEFAULT, null, "embedded");
    expect(engine.evaluate(call("get", { annotations: { readOnlyHint: true } }))).toMatchObject({ kind: "forward", ruleId: "default-read-only" });
    expect(engine.evaluate(call("rm", { annotations: { destructiveHint: true } }))).toMatchObject({ kind: "approve", ruleId: "default-destructive", workflowName: "default" });
    expect(engine.evaluate(call("mkdir", { annotations: { readOnlyHint: false, destructiveHint: false, openWorldHint: false } }))).toMatchObject({ kind: "forward", ruleId: "defaults" });
    // An issue, a message, a post: additive, and seen by others; open-world is MCP's default when not said.
    expect(engine.evaluate(call("create_issue", { annotations: { readOnlyHint: false, destructiveHint: false, openWorldHint: true } }))).toMatchObject({ kind: "approve", ruleId: "default-open-world" });
    expect(engine.evaluate(call("add", { annotations: { readOnlyHint: false, destructiveHint: false } }))).toMatchObject({ kind: "approve", ruleId: "default-open-world" });
  });

  test("a tool without annotations, or whose annotations are unknown, is decided under the MCP defaults: it needs approval", async () => {
    const engine = new GovernanceEngine(EMBEDDED_DEFAULT, null, "embedded");
    expect(engine.evaluate(call("unannotated"))).toMatchObject({ kind: "approve", ruleId: "default-destructive" });
    expect(engine.evaluate(call("title-only", { annotations: { title: "Some tool" } }))).toMatchObject({ kind: "approve", ruleId: "default-destructive" });
    // Read-only without a destructive hint is not destructive (the hint only means something for tools that write).
    expect(engine.evaluate(call("lookup", { annotations: { readOnlyHint: true } }))).toMatchObject({ kind: "forward", ruleId: "default-read-only" });
  });
});
