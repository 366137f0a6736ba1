/**
 * Attack: a policy file writes `${VAR}` into a value that goes back to the agent (a rule id or a
 * workflow name, both in a denial's `error.data`), so the user's environment (tokens, keys)
 * reaches the agent, and through a prompt-injected agent, anyone. A repository's thoughtgate.yaml
 * expands no variable at all; any policy file expands them only where no agent or server sees the
 * value (Cedar paths, and telemetry/Slack settings once built).
 */
import { afterEach, describe, expect, setDefaultTimeout, test } from "bun:test";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { fixture, requireBinary } from "../../support/harness.ts";
import { policyHome, runThoughtgate, type PolicyHome } from "../../support/policy-home.ts";

setDefaultTimeout(60_000);
requireBinary();

const SECRET = "ghp_attack_test_token_4f1c";

const homes: PolicyHome[] = [];
afterEach(() => {
  for (const home of homes.splice(0)) home[Symbol.dispose]();
});

/** An agent's whole session: initialize, then call read_note (which the policy denies), then EOF. */
const SESSION = [
  { jsonrpc: "2.0", id: 1, method: "initialize", params: { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "attack", version: "1" } } },
  { jsonrpc: "2.0", method: "notifications/initialized" },
  { jsonrpc: "2.0", id: 2, method: "tools/call", params: { name: "read_note", arguments: { id: "a" } } },
]
  .map((message) => `${JSON.stringify(message)}\n`)
  .join("");

async function shimSession(policy: PolicyHome, extraArgs: string[] = []) {
  return runThoughtgate(["shim", "--server-id", "notes", ...extraArgs, "--", ...fixture("sdk-server-fixture.ts")], {
    cwd: policy.project,
    env: { ...policy.env, GITHUB_TOKEN: SECRET },
    stdin: SESSION,
  });
}

describe("${VAR} cannot carry the user's environment to the agent", () => {
  test("a repository's rule id ${GITHUB_TOKEN}: the shim refuses the file, and the agent never sees the token", async () => {
    const policy = policyHome();
    homes.push(policy);
    policy.writeProject(`schema: 1\ngovernance:\n  rules: [{ id: "deny-\${GITHUB_TOKEN}", match: read_note, action: deny }]\n`);
    const run = await shimSession(policy);
    expect(run.stdout).not.toContain(SECRET);
    expect(run.exitCode).toBe(1);
    expect(run.stderr).toContain(
      "governance.rules[0].id: environment variables are not expanded in a project policy (found ${GITHUB_TOKEN}); write the value itself",
    );
  });

  test("a repository's ${VAR:-default} in the rule id of an approval is refused too", async () => {
    const policy = policyHome();
    homes.push(policy);
    policy.writeProject(`schema: 1\ngovernance:\n  rules: [{ id: "\${GITHUB_TOKEN:-anonymous}", match: read_note, action: approve }]\n`);
    const run = await shimSession(policy);
    expect(run.stdout).not.toContain(SECRET);
    expect(run.exitCode).toBe(1);
    expect(run.stderr).toContain("governance.rules[0].id: environment variables are not expanded in a project policy (found ${GITHUB_TOKEN:-anonymous})");
  });

  test("the user's own policy file: ${VAR} in a rule id is an error naming the field, not expanded", async () => {
    const policy = policyHome();
    homes.push(policy);
    const file = join(policy.project, "..", "explicit.yaml");
    writeFileSync(file, `schema: 1\ngovernance:\n  rules: [{ id: "deny-\${GITHUB_TOKEN}", match: read_note, action: deny }]\n`);
    const run = await shimSession(policy, ["--thoughtgate-config", file]);
    expect(run.stdout).not.toContain(SECRET);
    expect(run.exitCode).toBe(1);
    expect(run.stderr).toContain("governance.rules[0].id: environment variables are only expanded in cedar.policies, cedar.schema");
  });
});
