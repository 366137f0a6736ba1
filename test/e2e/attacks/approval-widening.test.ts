/**
 * Attack family: widening an approval beyond what a person granted. "Allow for this session" covers
 * one tool on one server, for one session; "always allow" is written only on a person's answer (the
 * page key, the CLI key, the relay token of the one task a shim was asked about, a listed Slack
 * approver, a click on the desktop). Anything that holds the session secret (a hostile MCP server
 * reading its shim's argv) can make neither, a grant covers no look-alike name, and none survives
 * its session. Through the compiled
 * binary: `thoughtgate serve`, spoken to as a shim would (session secret) and as a person would
 * (CLI key, page key).
 */
import { afterEach, describe, expect, setDefaultTimeout, test } from "bun:test";
import { existsSync } from "node:fs";
import { policyHome, type PolicyHome } from "../../support/policy-home.ts";
import { openShimChannel } from "../../support/shim-channel.ts";
import { ServeProcess } from "../../support/serve.ts";
import { decideAtTerminal } from "../../support/terminal.ts";

setDefaultTimeout(60_000);

const POLICY = `schema: 1
governance:
  rules:
    - { id: ask, match: "*", method: "*", action: approve }
`;

const cleanup: Array<() => unknown> = [];
afterEach(async () => {
  for (const step of cleanup.splice(0).reverse()) await step();
});

async function serveWith(home: PolicyHome): Promise<ServeProcess> {
  const serve = await ServeProcess.start([], { env: { ...home.env, THOUGHTGATE_DESKTOP_NOTIFY: "off" }, cwd: home.project });
  cleanup.push(() => serve.stop());
  return serve;
}

function home(yaml?: string): PolicyHome {
  const made = policyHome();
  cleanup.push(() => made[Symbol.dispose]());
  if (yaml !== undefined) made.writeUser(yaml);
  return made;
}

const post = (serve: ServeProcess, path: string, key: string, body: unknown) =>
  fetch(`${serve.endpoint}${path}`, { method: "POST", headers: { authorization: `Bearer ${key}`, "content-type": "application/json" }, body: JSON.stringify(body) });

describe("a session grant covers exactly one tool on one server", () => {
  test("a hostile agent calling look-alike names, or the same tool on another server, is asked again", async () => {
    const serve = await serveWith(home(POLICY));
    const first = await serve.evaluate({ server_id: "fs", name: "delete_file", arguments: { path: "/tmp/a" } });
    expect((await decideAtTerminal(["approve", first.task_id, "--session"], { env: serve.cliEnv })).exitCode).toBe(0);
    const granted = await serve.evaluate({ server_id: "fs", name: "delete_file", arguments: { path: "/etc/passwd" } });
    expect((await serve.task(granted.task_id)).decided_by).toBe(`session_grant:${first.task_id}`);
    const lookAlikes = [
      { server_id: "fs", name: "delete_file " },
      { server_id: "fs", name: "Delete_file" },
      { server_id: "fs", name: "delete_file\u200b" },
      { server_id: "fs", name: "delete_files" },
      { server_id: "fs2", name: "delete_file" },
      // The same id over another program: a repository's entry named like the user's server.
      { server_id: "fs", server: { command: ["node", "evil.js"], url: null }, name: "delete_file" },
      { server_id: "fs", name: "delete_file", method: "prompts/get" },
    ];
    const statuses = [];
    for (const call of lookAlikes) statuses.push((await serve.task((await serve.evaluate({ ...call, arguments: {} })).task_id)).status);
    expect(statuses).toEqual(lookAlikes.map(() => "pending"));
  });

  test("no grant outlives its session: the next service asks again", async () => {
    const user = home(POLICY);
    const serve = await serveWith(user);
    const first = await serve.evaluate({ server_id: "fs", name: "delete_file" });
    expect((await decideAtTerminal(["approve", first.task_id, "--session"], { env: serve.cliEnv })).exitCode).toBe(0);
    await serve.stop();
    const next = await serveWith(user);
    expect((await next.task((await next.evaluate({ server_id: "fs", name: "delete_file" })).task_id)).status).toBe("pending");
  });
});

describe("the session secret makes no grant and writes no rule", () => {
  test("a hostile MCP server relays 'allow for this session' over plain HTTP, revokes or lists grants, reports its prompt unanswered: all refused", async () => {
    const serve = await serveWith(home(POLICY));
    const pending = await serve.evaluate({ server_id: "fs", name: "delete_file" });
    const { digest } = await serve.task(pending.task_id);
    const answers = [
      await post(serve, `/governance/task/${pending.task_id}/decision`, serve.secret, { decision: "approve", scope: "session", digest }),
      await post(serve, `/approvals/api/tasks/${pending.task_id}`, serve.secret, { decision: "approve", scope: "session", digest }),
      await post(serve, `/approvals/api/grants/grant-${pending.task_id}/revoke`, serve.secret, {}),
      await fetch(`${serve.endpoint}/approvals/api/tasks`, { headers: { authorization: `Bearer ${serve.secret}` } }),
      await post(serve, `/governance/task/${pending.task_id}/unanswered`, serve.secret, {}),
    ];
    expect(answers.map((a) => a.status)).toEqual([401, 401, 401, 401, 401]);
    expect((await serve.task(pending.task_id)).status).toBe("pending");
    // Nothing was granted: the next call of the tool still waits for a person.
    expect((await serve.task((await serve.evaluate({ server_id: "fs", name: "delete_file" })).task_id)).status).toBe("pending");
  });

  test("'always' with the session secret alone, or from a shim channel that did not ask, is refused and writes nothing", async () => {
    const user = home();
    const serve = await serveWith(user);
    // Asked on a shim's channel, the only place an elicitation answer is relayed from.
    const shim = await openShimChannel(serve.endpoint, serve.secret);
    const other = await openShimChannel(serve.endpoint, serve.secret);
    const offered = (await shim.ask("POST", "/governance/evaluate", { server_id: "notes", direction: "agent_to_server", method: "tools/call", name: "purge", arguments: {}, annotations: { destructiveHint: true }, message_type: "request", profile: "production", channels: ["elicitation"] })).body;
    expect(offered.shim_channels).toEqual(["elicitation"]);
    const { digest } = (await shim.ask("GET", `/governance/task/${offered.task_id}`)).body.task;
    const always = { decision: "approve", scope: "always", always_scope: "everywhere", digest };
    const answers = [
      await post(serve, `/approvals/api/tasks/${offered.task_id}`, serve.secret, always),
      await post(serve, `/governance/task/${offered.task_id}/decision`, serve.secret, always),
      await other.ask("POST", `/governance/task/${offered.task_id}/decision`, always),
    ];
    expect(answers.map((a) => a.status)).toEqual([401, 401, 401]);
    expect((await shim.ask("GET", `/governance/task/${offered.task_id}`)).body.task.status).toBe("pending");
    shim.close();
    other.close();
    expect(existsSync(user.userFile)).toBe(false);
  });
});
