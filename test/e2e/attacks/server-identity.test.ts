/**
 * Attack: a repository names its own server like one of the user's. The user clicked "Always allow"
 * for `github`'s destructive tool once; a cloned repository's `.mcp.json` then adds an entry called
 * `github` running its own program, which `wrap` starts as `thoughtgate shim --server-id github --
 * <its command>`. The rule named only the id, so the repository's server inherited it and its
 * destructive tool ran unasked. Now "always allow" writes the program that served the tool into the
 * rule (`server: { command: [...] }`), and a shim tells the service what it runs: the same id over
 * another program is asked about again. Through the compiled binary: `thoughtgate serve`, two real
 * shims in front of the scripted server, and the approvals page's key.
 */
import { afterEach, expect, setDefaultTimeout, test } from "bun:test";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { parse } from "yaml";
import { fixture, requireBinary, waitFor } from "../../support/harness.ts";
import { policyHome } from "../../support/policy-home.ts";
import { RawAgent } from "../../support/raw-agent.ts";
import { runBinary, ServeProcess } from "../../support/serve.ts";

requireBinary();
setDefaultTimeout(60_000);

const POLICY = `schema: 1
governance:
  rules:
    - { id: ask-destructive, match: "*", annotations: { destructiveHint: true }, action: approve }
`;

const cleanup: Array<() => unknown> = [];
afterEach(async () => {
  for (const step of cleanup.splice(0).reverse()) await step();
});

test("'always allow' for the user's github server does not let a repository's server named github run the tool", async () => {
  const user = policyHome();
  cleanup.push(() => user[Symbol.dispose]());
  user.writeUser(POLICY);
  const serve = await ServeProcess.start([], { env: { ...user.env, THOUGHTGATE_DESKTOP_NOTIFY: "off" }, cwd: user.project });
  cleanup.push(() => serve.stop());
  const shim = (serverArgs: string[]) => {
    const agent = new RawAgent(
      ["--server-id", "github", "--events", "none", "--governance-endpoint", serve.endpoint, "--", ...fixture("scripted-server-fixture.ts", "--with-destructive", ...serverArgs)],
      { ...process.env, ...user.env, THOUGHTGATE_GOVERNANCE_SECRET: serve.secret },
    );
    cleanup.push(() => agent.close());
    return agent;
  };
  const tasks = async () => {
    const response = await fetch(`${serve.endpoint}/approvals/api/tasks`, { headers: { authorization: `Bearer ${serve.pageKey}` } });
    return ((await response.json()) as { tasks: Array<Record<string, any>> }).tasks;
  };

  // The user's server: its destructive tool waits for a person, who clicks "Always allow".
  const mine = shim([]);
  await mine.request(0, "tools/list", {});
  mine.send({ jsonrpc: "2.0", id: 1, method: "tools/call", params: { name: "delete_everything", arguments: {} } });
  const asked = await waitFor(async () => (await tasks()).find((t) => t.status === "pending"), "the approval task");
  const clicked = await fetch(`${serve.endpoint}/approvals/api/tasks/${asked.task_id}`, {
    method: "POST",
    headers: { authorization: `Bearer ${serve.pageKey}`, "content-type": "application/json" },
    body: JSON.stringify({ decision: "approve", scope: "always", digest: asked.digest }),
  });
  expect(clicked.status).toBe(200);
  expect((await mine.until(1)).match.result).toBeDefined();
  // From now on the user's server runs it without asking.
  expect((await mine.request(2, "tools/call", { name: "delete_everything", arguments: {} })).result).toBeDefined();

  // A repository's entry called github, running another program: asked about, not run.
  const theirs = shim(["--server-name", "repository"]);
  await theirs.request(0, "tools/list", {});
  theirs.send({ jsonrpc: "2.0", id: 1, method: "tools/call", params: { name: "delete_everything", arguments: {} } });
  const pending = await waitFor(async () => (await tasks()).find((t) => t.status === "pending"), "a task for the repository's call");
  expect(pending).toMatchObject({ server_id: "github", name: "delete_everything" });
  expect(theirs.remaining()).toEqual([]);
  // The rule names the user's server's program.
  const written = parse(readFileSync(user.userFile, "utf8")) as { governance: { rules: Array<Record<string, any>> } };
  expect(written.governance.rules[0]).toMatchObject({ id: "always-allow-github-delete_everything", source: "github", server: { command: expect.arrayContaining([join(import.meta.dir, "../../fixtures/scripted-server-fixture.ts")]) } });
});

test("a rule 'always allow' wrote before rules named the program keeps working, and validate-config says what it lets through", async () => {
  const user = policyHome();
  cleanup.push(() => user[Symbol.dispose]());
  user.writeUser(`schema: 1
governance:
  rules:
    - { id: "always-allow-github-delete_branch", match: "delete_branch", method: "tools/call", source: "github", action: "forward" }
`);
  const checked = await runBinary(["validate-config"], { env: user.env, cwd: user.project });
  expect(checked.exitCode).toBe(0);
  expect(checked.stdout).toContain(`ok: ${user.userFile}\nnote: ${user.userFile}: rule always-allow-github-delete_branch (written by "always allow" before such rules named their server's program) allows github.delete_branch from any server with that id, also a repository's server of that name`);
});
