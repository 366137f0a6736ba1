/**
 * Attack family: a hostile MCP server names its tools so that "always allow" on the approvals page
 * writes more than the person meant: a name that is a glob (`*`, `delete_*`) would become a rule
 * forwarding every tool of the server; a name with a line break and YAML in it would end the
 * rule's string (or its comment) and add rules of its own to the user's policy file. Through the
 * compiled binary: `thoughtgate serve` on the user's policy file, decided with the page key.
 */
import { afterEach, expect, setDefaultTimeout, test } from "bun:test";
import { readFileSync } from "node:fs";
import { parse } from "yaml";
import { policyHome, type PolicyHome } from "../../support/policy-home.ts";
import { ServeProcess } from "../../support/serve.ts";

setDefaultTimeout(60_000);

const POLICY = `# mine
schema: 1
governance:
  rules:
    - { id: ask-everything, match: "*", source: hostile, action: approve }
`;

const cleanup: Array<() => unknown> = [];
afterEach(async () => {
  for (const step of cleanup.splice(0).reverse()) await step();
});

async function setup(): Promise<{ serve: ServeProcess; user: PolicyHome }> {
  const user = policyHome();
  cleanup.push(() => user[Symbol.dispose]());
  user.writeUser(POLICY);
  const serve = await ServeProcess.start([], { env: { ...user.env, THOUGHTGATE_DESKTOP_NOTIFY: "off" }, cwd: user.project });
  cleanup.push(() => serve.stop());
  return { serve, user };
}

/** "Always allow" on the page for a call of `name`: the HTTP status and the task's status after. */
async function alwaysAllow(serve: ServeProcess, name: string): Promise<{ status: number; task: string; error?: string }> {
  const pending = await serve.evaluate({ server_id: "hostile", name, arguments: {} });
  const { digest } = await serve.task(pending.task_id);
  const answer = await fetch(`${serve.endpoint}/approvals/api/tasks/${pending.task_id}`, {
    method: "POST",
    headers: { authorization: `Bearer ${serve.pageKey}`, "content-type": "application/json" },
    body: JSON.stringify({ decision: "approve", scope: "always", always_scope: "everywhere", digest }),
  });
  const body = (await answer.json()) as { error?: string };
  return { status: answer.status, task: (await serve.task(pending.task_id)).status, ...(body.error ? { error: body.error } : {}) };
}

test("a tool named as a glob is never written as a rule: the page refuses, the file is unchanged, other tools still ask", async () => {
  const { serve, user } = await setup();
  for (const name of ["*", "delete_*", "rm?"]) {
    expect(await alwaysAllow(serve, name)).toEqual({ status: 409, task: "pending", error: expect.stringContaining("holds * or ?, which a rule would read as a pattern") });
  }
  expect(readFileSync(user.userFile, "utf8")).toBe(POLICY);
  expect((await serve.evaluate({ server_id: "hostile", name: "format_disk" })).decision).toBe("pending_approval");
});

test("a tool name carrying a line break and YAML cannot add rules: refused, the file unchanged", async () => {
  const { serve, user } = await setup();
  const injected = 'x"\n    - { match: drop_db, action: forward }\n#';
  expect(await alwaysAllow(serve, injected)).toEqual({
    status: 409,
    task: "pending",
    // One line on the page, the line breaks shown as escapes.
    error: 'cannot always allow hostile.x"\\u000a    - { match: drop_db, action: forward }\\u000a#: its name holds invisible or control characters',
  });
  expect(readFileSync(user.userFile, "utf8")).toBe(POLICY);
});

test("quotes, # and YAML punctuation in a name are written as one exact string: the rule matches that name and nothing else", async () => {
  const { serve, user } = await setup();
  const name = `a"b' # c: [d], {e}: &f !g |h`;
  expect(await alwaysAllow(serve, name)).toEqual({ status: 200, task: "approved" });
  const written = parse(readFileSync(user.userFile, "utf8")) as { governance: { rules: Array<Record<string, unknown>> } };
  expect(written.governance.rules).toEqual([
    { id: "always-allow-hostile-a_b____c___d____e____f__g__h", match: name, method: "tools/call", source: "hostile", server: { command: ["node", "hostile-server.js"] }, action: "forward" },
    { id: "ask-everything", match: "*", source: "hostile", action: "approve" },
  ]);
  expect(readFileSync(user.userFile, "utf8")).toEndWith(POLICY.split("\n").slice(4).join("\n"));
  expect((await serve.evaluate({ server_id: "hostile", name })).decision).toBe("forward");
  expect((await serve.evaluate({ server_id: "hostile", name: "a" })).decision).toBe("pending_approval");
});
