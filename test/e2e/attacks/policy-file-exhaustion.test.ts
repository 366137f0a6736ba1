/**
 * Attack: a cloned repository's thoughtgate.yaml exhausts every shim started in it: nested YAML
 * aliases ("billion laughs") that expand a 1 KiB file to hundreds of MB, a file too large to read,
 * or a link to a device that never ends (`/dev/stdin`: the agent's own messages). Each must be
 * refused at once, in bounded memory, with one clear line, and the shim must not start.
 */
import { afterEach, describe, expect, setDefaultTimeout, test } from "bun:test";
import { symlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { requireBinary } from "../../support/harness.ts";
import { policyHome, runThoughtgate, type PolicyHome } from "../../support/policy-home.ts";

setDefaultTimeout(60_000);
requireBinary();

/** Above an idle compiled binary (about 45–80 MB) with room to spare; the expanded bomb took 335 MB. */
const RSS_LIMIT_BYTES = 160 * 1024 * 1024;

const homes: PolicyHome[] = [];
afterEach(() => {
  for (const home of homes.splice(0)) home[Symbol.dispose]();
});

function repo(): PolicyHome {
  const made = policyHome();
  homes.push(made);
  return made;
}

/** 1 KiB: six levels of ten aliases over ten 60-character strings, a million strings once expanded. */
function aliasBomb(): string {
  let text = `schema: 1\nx0: &x0 [${Array(10).fill(`"${"x".repeat(60)}"`).join(", ")}]\n`;
  for (let i = 1; i <= 6; i += 1) text += `x${i}: &x${i} [${Array(10).fill(`*x${i - 1}`).join(", ")}]\n`;
  return text;
}

describe("a repository's thoughtgate.yaml cannot exhaust the shim", () => {
  test("nested aliases are refused before they are expanded", async () => {
    const policy = repo();
    policy.writeProject(aliasBomb());
    const run = await runThoughtgate(["shim", "--server-id", "x", "--", "cat"], { cwd: policy.project, env: policy.env });
    expect(run.exitCode).toBe(1);
    expect(run.maxRss).toBeLessThan(RSS_LIMIT_BYTES);
    expect(run.stderr).toContain(`its policy ${policy.projectFile} (project policy) has 1 problem`);
    expect(run.stderr).toContain("(file): not valid YAML: aliases (*name) are followed more than 100 times; write the values out instead");
  });

  test("validate-config refuses the same file the same way", async () => {
    const policy = repo();
    policy.writeProject(aliasBomb());
    const run = await runThoughtgate(["validate-config"], { cwd: policy.project, env: policy.env });
    expect(run.exitCode).toBe(1);
    expect(run.maxRss).toBeLessThan(RSS_LIMIT_BYTES);
    expect(run.stdout).toContain("(file): not valid YAML: aliases (*name) are followed more than 100 times");
  });

  test("a file over 1 MiB is refused without being parsed", async () => {
    const policy = repo();
    policy.writeProject(`schema: 1\n${"# padding\n".repeat(120_000)}`);
    const run = await runThoughtgate(["shim", "--server-id", "x", "--", "cat"], { cwd: policy.project, env: policy.env });
    expect(run.exitCode).toBe(1);
    expect(run.stderr).toContain(`${policy.projectFile}: the policy file is larger than 1 MiB, the most ThoughtGate reads`);
  });

  test("thoughtgate.yaml -> /dev/stdin: the shim does not read the agent's messages as its policy", async () => {
    const policy = repo();
    symlinkSync("/dev/stdin", policy.projectFile);
    // The agent keeps its end open, as a real one does while it waits for the server's answers.
    const fifoDir = join(policy.project, "..");
    // Its first message is an initialize: the shim answers it with the refusal (so it was not read
    // as the policy), and stays to answer the next one until the agent closes its end.
    const initialize = `${JSON.stringify({ jsonrpc: "2.0", id: 1, method: "initialize", params: { protocolVersion: "2025-11-25", capabilities: {}, clientInfo: { name: "agent", version: "1" } } })}\n`;
    const answered = (run: { stdout: string }) => JSON.parse(run.stdout.split("\n")[0] ?? "") as { id: number; error: { code: number; message: string } };
    const run = await runThoughtgate(["shim", "--server-id", "x", "--", "cat"], { cwd: policy.project, env: policy.env, stdin: { fifoDir, write: initialize }, timeoutMs: 5_000 });
    expect(answered(run)).toMatchObject({ id: 1, error: { code: -32013 } });
    expect(answered(run).error.message).toContain("it is a link to a file outside the project directory");
    expect(run.stderr).toContain("it is a link to a file outside the project directory");
    // Given explicitly, a device or pipe is refused all the same, never read until it ends.
    const explicit = await runThoughtgate(["shim", "--server-id", "x", "--thoughtgate-config", "/dev/stdin", "--", "cat"], {
      cwd: policy.project,
      env: policy.env,
      stdin: { fifoDir, write: initialize },
      timeoutMs: 5_000,
    });
    expect(answered(explicit)).toMatchObject({ id: 1, error: { code: -32013 } });
    expect(explicit.stderr).toContain("/dev/stdin: the policy file is not a regular file");
  });

  test("a Cedar policy the repository names is read within the same bounds", async () => {
    const policy = repo();
    writeFileSync(`${policy.project}/big.cedar`, `// ${"x".repeat(1_100_000)}\npermit(principal, action, resource);\n`);
    policy.writeProject(`schema: 1\ngovernance:\n  rules: [{ match: "*", action: policy }]\ncedar: { policies: [big.cedar] }\n`);
    const run = await runThoughtgate(["shim", "--server-id", "x", "--", "cat"], { cwd: policy.project, env: policy.env });
    expect(run.exitCode).toBe(1);
    expect(run.stderr).toContain("the Cedar policy is larger than 1 MiB");
  });
});
