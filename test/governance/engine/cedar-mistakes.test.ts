/**
 * Every mistake of the corpus (cedar-mistakes.ts) is refused when the policy is loaded, at
 * file:line:column, so none of them reaches a call.
 */
import { describe, expect, test } from "bun:test";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { CedarPolicies } from "../../../src/governance/engine/cedar.ts";
import { tempDir } from "../../support/harness.ts";
import { CEDAR_MISTAKES, placeOf } from "./cedar-mistakes.ts";

describe("Cedar mistakes are refused at load, where they are", () => {
  for (const mistake of CEDAR_MISTAKES) {
    test(mistake.name, () => {
      using dir = tempDir();
      const policy = join(dir.path, "policy.cedar");
      writeFileSync(policy, mistake.policy);
      const schema = mistake.schema === undefined ? undefined : join(dir.path, "arguments.cedarschema");
      if (schema && mistake.schema !== undefined) writeFileSync(schema, mistake.schema);
      let message = "";
      try {
        CedarPolicies.load({ policies: [policy], ...(schema ? { schema } : {}) });
      } catch (error) {
        message = (error as Error).message;
      }
      const where = mistake.file === "schema" ? placeOf(schema as string, mistake.schema as string, mistake.at) : placeOf(policy, mistake.policy, mistake.at);
      // "" (the whole file is wrong): the file is named, without a place.
      expect(message).toContain(mistake.at === "" ? `${schema}:` : `${where}:`);
      expect(message).toMatch(mistake.message);
    });
  }

  test("the same policies without the mistakes load", () => {
    using dir = tempDir();
    const policy = join(dir.path, "policy.cedar");
    const schema = join(dir.path, "arguments.cedarschema");
    writeFileSync(schema, "namespace ThoughtGate { type Arguments = { path?: String, limit?: Long }; }\n");
    writeFileSync(
      policy,
      `@id("no-etc")
forbid (principal, action == ThoughtGate::Action::"tools/call", resource)
when { resource.arguments has path && resource.arguments.path like "/etc/*" };
@id("small")
permit (principal, action == ThoughtGate::Action::"tools/call", resource)
when { resource.arguments has limit && resource.arguments.limit < 10 && context.project == "/src/app" };
@id("alice") permit (principal == ThoughtGate::App::"alice", action, resource is ThoughtGate::ToolCall)
when { context.time.hour < 9 && resource.name == "x" };
`,
    );
    expect(CedarPolicies.load({ policies: [policy], schema }).policyIds).toEqual(["no-etc", "small", "alice"]);
  });
});
