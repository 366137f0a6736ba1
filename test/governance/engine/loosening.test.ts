/**
 * A project rule that can never take effect because it would loosen the user's policy
 * (src/governance/engine/loosening.ts) is found, and one that does take effect is not.
 */
import { describe, expect, test } from "bun:test";
import { parseConfig } from "../../../src/core/config/load.ts";
import type { ThoughtGateConfig } from "../../../src/core/config/schema.ts";
import { EMBEDDED_DEFAULT } from "../../../src/governance/engine/default-policy.ts";
import { globsOverlap, looseningRules } from "../../../src/governance/engine/loosening.ts";

function config(rules: string, defaults = "forward"): ThoughtGateConfig {
  const parsed = parseConfig(`schema: 1\ngovernance:\n  defaults: { action: ${defaults} }\n  rules: ${rules}\n`, {}, "project");
  if (!parsed.ok) throw new Error(JSON.stringify(parsed.problems));
  return parsed.config;
}

const found = (user: ThoughtGateConfig, project: ThoughtGateConfig) =>
  looseningRules(user, project, "/repo").map((l) => `${l.ruleId} <- ${l.overriddenBy.ruleId} (${l.overriddenBy.action})`);

describe("globs that share a name", () => {
  test("stars, question marks and alternatives", () => {
    const cases: Array<[string, string, boolean]> = [
      ["write_file", "write_file", true],
      ["write_file", "read_file", false],
      ["*", "anything", true],
      ["write_*", "*_file", true],
      ["write_*", "read_*", false],
      ["a?c", "abc", true],
      ["a?c", "ac", false],
      ["{write,edit}_file", "edit_*", true],
      ["{write,edit}_file", "move_*", false],
      ["x{a,{b,c}}", "xc", true],
      ["*a", "b*", true],
      ["a*", "*b", true],
      ["a*a", "b", false],
    ];
    expect(cases.map(([a, b]) => globsOverlap(a, b))).toEqual(cases.map(([, , want]) => want));
  });
});

describe("project rules that would loosen the user's policy", () => {
  test("a forward for what the embedded default asks about is reported, with the rule that asks", () => {
    expect(found(EMBEDDED_DEFAULT, config("[{ id: allow-writes, match: write_file, action: forward }]"))).toEqual(["allow-writes <- default-destructive (approve)"]);
  });

  test("a forward for what the user denies, or leaves to a default that asks, is reported", () => {
    const user = config('[{ id: no-push, match: "push_*", action: deny }]', "approve");
    expect(found(user, config('[{ id: p, match: push_files, action: forward }, { id: q, match: "list_*", action: forward }]'))).toEqual([
      "p <- no-push (deny)",
      "q <- defaults (approve)",
    ]);
  });

  test("nothing is reported for rules that restrict, or forward only what the user forwards too", () => {
    const user = config('[{ id: reads, match: "get_*", action: forward }, { id: ask, match: "*", action: approve }]');
    expect(found(user, config('[{ id: r, match: get_issue, action: forward }, { id: d, match: "*", action: deny }, { id: a, match: "*", action: approve }]'))).toEqual([]);
  });

  test("a user rule kept to another project, or for tools that cannot be the same, does not count", () => {
    const user = config('[{ id: other, match: "*", project: /elsewhere, action: deny }, { id: rw, match: "*", annotations: { destructiveHint: true }, action: approve }]');
    expect(found(user, config("[{ id: r, match: read, annotations: { readOnlyHint: true }, action: forward }]"))).toEqual([]);
    expect(found(user, config("[{ id: w, match: write, action: forward }]"))).toEqual(["w <- rw (approve)"]);
  });
});
