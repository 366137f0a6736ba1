import { describe, expect, test } from "bun:test";
import { parseConfig } from "../../../src/core/config/load.ts";
import { decideSafely, GovernanceEngine } from "../../../src/governance/engine/engine.ts";
import { gateTrail } from "../../../src/governance/engine/gate-trail.ts";

function engine(yaml: string): GovernanceEngine {
  const parsed = parseConfig(yaml, {});
  if (!parsed.ok) throw new Error(JSON.stringify(parsed.problems));
  return new GovernanceEngine(parsed.config, null, "test");
}

const POLICY = engine(`schema: 1
sources: [{ id: fs, expose: { mode: blocklist, tools: [secret_tool] } }]
governance:
  rules:
    - { id: no-delete, match: delete_*, action: deny }
    - { id: ask-write, match: write_*, action: approve }
`);

const trail = (name: string, profile: "production" | "development" = "production") =>
  gateTrail(decideSafely(POLICY, { serverId: "fs", method: "tools/call", name, arguments: {} }, profile));

describe("the gates a decision went through, as a span's events", () => {
  test("each gate reached, in order, the last one saying what decided", () => {
    expect(trail("read_file")).toEqual([
      ["visibility", { "thoughtgate.gate.result": "pass" }],
      ["rules", { "thoughtgate.gate.result": "forward", "thoughtgate.rule_id": "defaults" }],
    ]);
    expect(trail("delete_file")).toEqual([
      ["visibility", { "thoughtgate.gate.result": "pass" }],
      ["rules", { "thoughtgate.gate.result": "deny", "thoughtgate.rule_id": "no-delete" }],
    ]);
    expect(trail("secret_tool")).toEqual([["visibility", { "thoughtgate.gate.result": "deny" }]]);
    expect(trail("write_file")).toEqual([
      ["visibility", { "thoughtgate.gate.result": "pass" }],
      ["rules", { "thoughtgate.gate.result": "approve", "thoughtgate.rule_id": "ask-write" }],
      ["approval", { "thoughtgate.gate.result": "required" }],
    ]);
  });

  test("development: the gate that would have blocked or asked says so", () => {
    expect(trail("delete_file", "development").at(-1)).toEqual(["rules", { "thoughtgate.gate.result": "deny", "thoughtgate.rule_id": "no-delete", "thoughtgate.would": "WOULD_BLOCK" }]);
    expect(trail("write_file", "development").at(-1)).toEqual(["approval", { "thoughtgate.gate.result": "auto_approved", "thoughtgate.would": "WOULD_REQUIRE_APPROVAL" }]);
  });

  test("an engine that fails is the governance gate's deny", () => {
    const broken = { evaluate: () => { throw new Error("boom"); } };
    expect(gateTrail(decideSafely(broken, { serverId: "fs", method: "tools/call", name: "x", arguments: {} }, "production"))).toEqual([["governance", { "thoughtgate.gate.result": "deny" }]]);
  });
});
