/**
 * Policy scopes are read from the policy text (src/governance/engine/cedar-scope.ts) instead of asking Cedar
 * for each policy's JSON: every scope read must be the one Cedar itself reads, and what cannot be
 * read plainly must be left to Cedar.
 */
import { describe, expect, test } from "bun:test";
import { readScope } from "../../../src/governance/engine/cedar-scope.ts";
import { loadCedar } from "../../../src/governance/engine/cedar-wasm.ts";
import { policySet, random } from "./cedar-corpus.ts";

const cedar = loadCedar();

function cedarScope(text: string) {
  const json = cedar.policyToJson(text);
  if (json.type === "failure") throw new Error(`${text}: ${json.errors.map((e) => e.message).join("; ")}`);
  const { principal, action, resource } = json.json;
  return { principal, action, resource };
}

/** Each policy of a text, as `policySetTextToParts` gives it to the loader. */
function parts(text: string): string[] {
  const answer = cedar.policySetTextToParts(text);
  if (answer.type === "failure") throw new Error(answer.errors.map((e) => e.message).join("; "));
  return answer.policies;
}

describe("a policy's scope read from its text", () => {
  test("is Cedar's own reading for every generated policy, and most are read without asking Cedar", () => {
    const rng = random(7);
    let read = 0;
    let total = 0;
    const differences: { policy: string; read: unknown; cedar: unknown }[] = [];
    for (let s = 0; s < 60; s++) {
      for (const policy of parts(policySet(rng, 30))) {
        total += 1;
        const scope = readScope(policy);
        if (scope === null) continue;
        read += 1;
        const expected = cedarScope(policy);
        if (!Bun.deepEquals(scope, expected)) differences.push({ policy, read: scope, cedar: expected });
      }
    }
    expect(differences.slice(0, 3)).toEqual([]);
    expect(read / total).toBeGreaterThan(0.95);
  });

  test("unusual spellings are read as Cedar reads them, or left to Cedar", () => {
    const policies = [
      `permit(principal==ThoughtGate::App::"a",action==ThoughtGate::Action::"tools/call",resource==ThoughtGate::ToolCall::"s/t");`,
      `permit (\n  principal  in  ThoughtGate :: App :: "a" ,\n  action in[ ThoughtGate::Action::"tools/call" ,ThoughtGate::Action::"mcp/method" ],\n  resource is ThoughtGate::ToolCall in ThoughtGate::ToolCall::"s/t"\n) when { true };`,
      `@id("a(b)\\"c") @note @other("x,y")\nforbid (principal is ThoughtGate::App, action in [], resource is ThoughtGate::McpMethod);`,
      `// leading comment (with parens, "quotes")\n@id("x")\npermit (principal, action, resource == ThoughtGate::ToolCall::"a, b) c");`,
      `permit (principal, action == ThoughtGate::Action::"tools/call", resource == ThoughtGate::ToolCall::"unicode é 🙂 /x");`,
      `permit (principal, action == ThoughtGate::Action::"tools/call", resource == ThoughtGate::ToolCall::"line\none");`,
      // Left to Cedar: an escape, a comment inside the scope.
      `permit (principal, action, resource == ThoughtGate::ToolCall::"a\\"b");`,
      `permit (principal, action, resource == ThoughtGate::ToolCall::"caf\\u{e9}");`,
      `permit (principal, // who\n action, resource);`,
      `permit (principal, action, resource) when { resource.name == "x" };`,
    ];
    const outcomes = policies.map((text) => {
      const [policy] = parts(text);
      if (policy === undefined) throw new Error(`no policy in ${text}`);
      const scope = readScope(policy);
      return scope === null ? "left to Cedar" : Bun.deepEquals(scope, cedarScope(policy)) ? "same as Cedar" : { text, read: scope, cedar: cedarScope(policy) };
    });
    expect(outcomes).toEqual([
      "same as Cedar",
      "same as Cedar",
      "same as Cedar",
      "same as Cedar",
      "same as Cedar",
      "same as Cedar",
      "left to Cedar",
      "left to Cedar",
      "left to Cedar",
      "same as Cedar",
    ]);
  });
});
