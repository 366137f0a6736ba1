/**
 * A request is evaluated against the policies whose scope can match it (src/governance/engine/cedar-index.ts),
 * not the whole set. These tests hold that to the whole set's answer: the same decision, the same
 * determining policies and the same errors, on a seeded corpus (test/governance/engine/cedar-corpus.ts).
 */
import { heapStats } from "bun:jsc";
import { describe, expect, test } from "bun:test";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { CedarPolicies, type CedarAnswer, type CedarRequest } from "../../../src/governance/engine/cedar.ts";
import { cedarMemoryBytes } from "../../../src/governance/engine/cedar-wasm.ts";
import { tempDir, waitFor } from "../../support/harness.ts";
import { policySet, random, request } from "./cedar-corpus.ts";

const SETS = 120;
const REQUESTS_PER_SET = 25;

type Mismatch = { policies: string; request: CedarRequest; sliced: CedarAnswer; full: CedarAnswer; how: string };

describe("Cedar evaluates a request's slice and decides as the whole policy set", () => {
  test("generated policy sets and requests: the same decision, determining policies and errors", () => {
    using dir = tempDir();
    const rng = random(18);
    const mismatches: Mismatch[] = [];
    const seen = { allow: 0, forbidden: 0, noPermit: 0, errorsWithAllow: 0, errorsWithDeny: 0, failures: 0 };
    for (let s = 0; s < SETS; s++) {
      const file = join(dir.path, `set-${s}.cedar`);
      const policies = policySet(rng, 30);
      writeFileSync(file, policies);
      // Slices merged into one set each, and (no copies allowed) the shared and specific parts evaluated apart.
      // Parsed, not validated: the corpus holds policies the validator refuses, and slicing must still agree.
      const merged = CedarPolicies.parse({ policies: [file] });
      const split = CedarPolicies.parse({ policies: [file] }, { mergedCopies: 0 });
      for (let r = 0; r < REQUESTS_PER_SET; r++) {
        const req = request(rng);
        const full = merged.authorize(req, "full");
        for (const [how, sliced] of [["merged", merged.authorize(req)], ["split", split.authorize(req)]] as const) {
          if (!Bun.deepEquals(sliced, full)) mismatches.push({ policies, request: req, sliced, full, how });
        }
        if (full.type === "failure") seen.failures += 1;
        else if (full.decision === "allow") seen[full.errors.length > 0 ? "errorsWithAllow" : "allow"] += 1;
        else {
          seen[full.determining.length > 0 ? "forbidden" : "noPermit"] += 1;
          if (full.errors.length > 0) seen.errorsWithDeny += 1;
        }
      }
    }
    expect(mismatches.slice(0, 3)).toEqual([]);
    // The corpus reaches every kind of answer, so agreement means something for each.
    const reached = Object.entries(seen).filter(([kind, count]) => kind !== "failures" && count >= 50);
    expect(reached.map(([kind]) => kind)).toEqual(["allow", "forbidden", "noPermit", "errorsWithAllow", "errorsWithDeny"]);
  });

  test("a denial names its forbidding policies in the same order every time", () => {
    using dir = tempDir();
    const file = join(dir.path, "forbids.cedar");
    const forbids = Array.from({ length: 12 }, (_, i) => `@id("no-${String.fromCharCode(108 - i)}") forbid (principal, action, resource);`);
    writeFileSync(file, `${forbids.join("\n")}\n@id("allow") permit (principal, action, resource);\n`);
    const policies = CedarPolicies.load({ policies: [file] });
    const req: CedarRequest = { user: "alice", serverId: "s1", method: "tools/call", name: "t1", arguments: {}, policyId: null, project: "/p", cwd: "/p" };
    expect(policies.evaluate(req)).toEqual({
      decision: "deny",
      policies: ["no-a", "no-b", "no-c", "no-d", "no-e", "no-f", "no-g", "no-h", "no-i", "no-j", "no-k", "no-l"],
    });
  });

  test("an agent calling thousands of tools no policy names makes nothing grow", () => {
    using dir = tempDir();
    const file = join(dir.path, "named.cedar");
    const named = Array.from({ length: 200 }, (_, i) => `@id("p${i}") permit (principal, action, resource == ThoughtGate::ToolCall::"s1/t${i}");`);
    writeFileSync(file, `${named.join("\n")}\n@id("guard") forbid (principal, action, resource) when { resource.arguments has force };\n`);
    const schema = join(dir.path, "arguments.cedarschema");
    writeFileSync(schema, "namespace ThoughtGate { type Arguments = { force?: Bool }; }\n");
    const policies = CedarPolicies.load({ policies: [file], schema });
    const call = (name: string): CedarRequest => ({ user: "alice", serverId: "s1", method: "tools/call", name, arguments: {}, policyId: null, project: "/p", cwd: "/p" });
    for (let i = 0; i < 500; i++) policies.evaluate(call(`warm-${i}`));
    Bun.gc(true);
    const before = { engine: cedarMemoryBytes(), objects: heapStats().objectCount };
    let denied = 0;
    for (let i = 0; i < 5_000; i++) {
      const verdict = policies.evaluate(call(`made-up-${i}`));
      if (verdict.decision === "deny" && verdict.policies.length === 0) denied += 1;
    }
    Bun.gc(true);
    // Nothing is kept per tool name: not in the engine, not in the slices' bookkeeping (a key per
    // name would add at least 5,000 objects; the engine's code and caches add a few thousand).
    expect(cedarMemoryBytes() - before.engine).toBeLessThan(1_000_000);
    expect(heapStats().objectCount - before.objects).toBeLessThan(5_000);
    expect(denied).toBe(5_000);
    expect(policies.evaluate(call("t7"))).toEqual({ decision: "allow", policies: ["p7"] });
  });

  test("reloading a large policy set again and again does not keep the replaced sets' memory", async () => {
    using dir = tempDir();
    const file = join(dir.path, "large.cedar");
    const count = 600;
    const large = Array.from({ length: count }, (_, i) => `@id("p${i}") permit (principal, action, resource == ThoughtGate::ToolCall::"s1/t${i}") when { resource.arguments.limit > ${i} };`);
    writeFileSync(file, `${large.join("\n")}\n`);
    const schema = join(dir.path, "arguments.cedarschema");
    writeFileSync(schema, "namespace ThoughtGate { type Arguments = { limit: Long }; }\n");
    const req: CedarRequest = { user: "alice", serverId: "s1", method: "tools/call", name: "t7", arguments: { limit: 9 }, policyId: null, project: "/p", cwd: "/p" };
    let replaced = 0;
    const collected = new FinalizationRegistry<null>(() => (replaced += 1));
    const reload = () => {
      const policies = CedarPolicies.load({ policies: [file], schema });
      // The whole set as one preparsed set (~1.5 MB in the engine), and the request's slice.
      expect(policies.authorize(req)).toEqual({ type: "answer", decision: "allow", determining: ["p7"], errors: [] });
      expect(policies.authorize(req, "full")).toEqual(policies.authorize(req));
      collected.register(policies, null);
    };
    const reloadAndCollect = async (times: number) => {
      for (let i = 0; i < times; i++) {
        const before = replaced;
        reload();
        await waitFor(() => {
          Bun.gc(true);
          return replaced > before;
        }, "the replaced policy set to be collected");
      }
    };
    await reloadAndCollect(2);
    const settled = cedarMemoryBytes();
    // Without the release of replaced sets the engine would grow by a set's size at each reload.
    await reloadAndCollect(8);
    const oneSet = count * 2_500;
    expect(cedarMemoryBytes() - settled).toBeLessThan(2 * oneSet);
  });
});
