/**
 * What a person's approval covers (docs/governance.md, Approvals): this call, this tool on this
 * server for the rest of the session (a grant, made through any channel and checked before a new
 * task is made), or always (a rule in the user's policy file, from every channel, kept to the
 * session's project or everywhere); an elicitation the agent did not answer, which leaves the task
 * to the person's other channels, and one the person dismissed, which is their no where wrap knows
 * the agent shows its forms to a person; and the person's reason, kept with who decided.
 */
import { afterEach, describe, expect, test } from "bun:test";
import * as v from "valibot";
import { evaluateResponse, taskResponse, tasksResponse, type EvaluateRequest } from "../../../src/governance/wire/api.ts";
import type { AlwaysCall, AlwaysHow, AlwaysResult, AlwaysWriter } from "../../../src/governance/verdict/always-rule.ts";
import { findNotifyTool, type NotifyTool } from "../../../src/governance/approval/desktop-notifier.ts";
import { GovernanceEngine } from "../../../src/governance/engine/engine.ts";
import { startGovernanceService } from "../../../src/governance/service/service.ts";
import { fakeNotifySend } from "../../support/fake-notify.ts";
import { waitFor } from "../../support/harness.ts";
import { openShimChannel } from "../../support/shim-channel.ts";

// Who decides on the page and with the CLI is the local user; where the passwd database has no
// name for the uid (a container), the service takes $USER.
process.env.USER ||= "ada";

const SESSION = "s".repeat(64);
const PAGE = "p".repeat(64);
const CLI = "c".repeat(64);

const engine = new GovernanceEngine(
  {
    schema: 1,
    sources: [],
    governance: {
      defaults: { action: "forward" },
      rules: [
        { id: "deletes", match: "delete_*", method: "tools/call", action: "approve" },
        { id: "agent-only", match: "ask_agent", method: "tools/call", action: "approve", approval: "agent" },
      ],
    },
    approval: { agent: { destination: { type: "elicitation" }, timeout: 60_000, on_timeout: "deny" } },
    pins: { mode: "strict", block_severity: "high" },
  },
  null,
  "test",
);

const stops: Array<() => Promise<void> | void> = [];
afterEach(async () => {
  for (const stop of stops.splice(0).reverse()) await stop();
});

/** A writer of "always" rules that records what it was asked to write and answers `result`. */
function fakeWriter(result: AlwaysResult, planned: string | null = null): AlwaysWriter & { written: Array<{ id: string; project: string | undefined } & AlwaysHow> } {
  const written: Array<{ id: string; project: string | undefined } & AlwaysHow> = [];
  return {
    written,
    plan: () => planned,
    write: async (call: AlwaysCall, how: AlwaysHow) => {
      written.push({ id: call.id, project: call.project, ...how });
      return result;
    },
  };
}

const WRITTEN: AlwaysResult = { ok: true, file: "/x/thoughtgate.yaml", ruleId: "always-allow-gh-delete_repo", note: "always allowed: rule r added to /x" };

function start(options: { always?: AlwaysWriter; agentCanAsk?: boolean; dismissIsNo?: boolean; desktop?: NotifyTool } = {}) {
  const service = startGovernanceService({
    // In-process: the test's own requests come from the service's own process, which is not under test here.
    people: () => null,
    engine,
    profile: "production",
    sessionSecret: SESSION,
    pageKey: PAGE,
    cliKey: CLI,
    port: 0,
    ...(options.always ? { always: options.always } : {}),
    ...(options.agentCanAsk === false ? { agentCanAsk: false } : {}),
    ...(options.dismissIsNo ? { dismissIsNo: true } : {}),
    sessionProject: "/home/ada/project",
    ...(options.desktop ? { desktop: options.desktop } : {}),
  });
  stops.push(() => service.stop());
  const call = async (path: string, key: string, body?: unknown) =>
    fetch(`${service.url}${path}`, {
      method: body === undefined ? "GET" : "POST",
      headers: { authorization: `Bearer ${key}`, ...(body === undefined ? {} : { "content-type": "application/json" }) },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
  const evaluate = async (request: Partial<EvaluateRequest>) => {
    const response = await call("/governance/evaluate", SESSION, { server_id: "gh", direction: "agent_to_server", method: "tools/call", name: "delete_repo", arguments: {}, message_type: "request", profile: "production", ...request });
    return v.parse(evaluateResponse, await response.json());
  };
  // As a person sees it: a shim reads only the tasks it asked for itself.
  const task = async (id: string) => v.parse(taskResponse, await (await call(`/approvals/api/tasks/${id}`, PAGE)).json()).task;
  const decide = async (id: string, key: string, body: Record<string, unknown>) => call(`/approvals/api/tasks/${id}`, key, { digest: (await task(id)).digest, ...body });
  const overview = async () => v.parse(tasksResponse, await (await call("/approvals/api/tasks", PAGE)).json());
  /** A shim of its own: evaluate, read and relay on one channel. */
  const shim = async () => {
    const channel = await openShimChannel(service.url, SESSION);
    stops.push(() => channel.close());
    const shimEvaluate = async (request: Partial<EvaluateRequest>) =>
      v.parse(evaluateResponse, (await channel.ask("POST", "/governance/evaluate", { server_id: "gh", direction: "agent_to_server", method: "tools/call", name: "delete_repo", arguments: {}, message_type: "request", profile: "production", ...request })).body);
    const digest = async (id: string) => v.parse(taskResponse, (await channel.ask("GET", `/governance/task/${id}`)).body).task.digest;
    return { ...channel, evaluate: shimEvaluate, digest };
  };
  return { service, call, evaluate, task, decide, overview, shim };
}

describe("allow for this session", () => {
  test("from any person's channel: later calls of the same tool on the same server, with any arguments, are approved by the grant, and say so", async () => {
    const s = start();
    const first = await s.evaluate({ arguments: { repo: "a" } });
    const decided = await s.decide(first.task_id ?? "", CLI, { decision: "approve", scope: "session" });
    expect(v.parse(taskResponse, await decided.json()).task).toMatchObject({ status: "approved", decided_by: "cli", scope: "session" });

    const later = await s.evaluate({ arguments: { repo: "b", force: true } });
    // The call keeps the shim's protocol (a task to poll), approved as it is made, and no one is asked.
    expect(later).toMatchObject({ decision: "pending_approval", rule_id: "deletes" });
    expect(later.shim_channels).toBeUndefined();
    expect(await s.task(later.task_id ?? "")).toMatchObject({ status: "approved", decided_by: `session_grant:${first.task_id}`, reason: `allowed for this session (task ${first.task_id}, by cli)` });

    // Not another tool, not another server, not the same tool elsewhere.
    const others = [await s.evaluate({ name: "delete_branch" }), await s.evaluate({ server_id: "gl" })];
    for (const other of others) expect((await s.task(other.task_id ?? "")).status).toBe("pending");

    expect((await s.overview()).grants).toEqual([
      { grant_id: `grant-${first.task_id}`, server_id: "gh", method: "tools/call", name: "delete_repo", task_id: first.task_id ?? "", granted_by: "cli", created_at: expect.any(String), uses: 1 },
    ]);
  });

  test("an elicitation answer relayed with scope session makes a grant for that shim's calls only; a revoked grant asks again", async () => {
    const s = start();
    const shim = await s.shim();
    const offered = await shim.evaluate({ channels: ["elicitation"] });
    const relayed = await shim.ask("POST", `/governance/task/${offered.task_id}/decision`, { decision: "approve", scope: "session", digest: await shim.digest(offered.task_id ?? "") });
    expect(v.parse(taskResponse, relayed.body).task).toMatchObject({ decided_by: "elicitation", scope: "session" });
    const later = (await shim.evaluate({})).task_id ?? "";
    expect((await s.service.tasks.get(later))?.decidedBy).toBe(`session_grant:${offered.task_id}`);
    // Another shim of the same server id (or anything that plays one) is asked as before.
    expect((await s.task((await s.evaluate({})).task_id ?? "")).status).toBe("pending");
    const another = await s.shim();
    expect(s.service.tasks.get((await another.evaluate({})).task_id ?? "")?.status).toBe("pending");

    const revoked = await s.call(`/approvals/api/grants/grant-${offered.task_id}/revoke`, PAGE, {});
    expect(revoked.status).toBe(200);
    expect(s.service.tasks.get((await shim.evaluate({})).task_id ?? "")?.status).toBe("pending");
    expect((await s.call(`/approvals/api/grants/grant-${offered.task_id}/revoke`, PAGE, {})).status).toBe(404);
  });

  test("a grant a person made on the page covers the calls of the shim that asked, and ends with its channel", async () => {
    const s = start();
    const shim = await s.shim();
    const first = (await shim.evaluate({})).task_id ?? "";
    await s.decide(first, PAGE, { decision: "approve", scope: "session" });
    expect(s.service.tasks.get((await shim.evaluate({ arguments: { repo: "b" } })).task_id ?? "")?.decidedBy).toBe(`session_grant:${first}`);
    expect((await s.task((await s.evaluate({})).task_id ?? "")).status).toBe("pending");
    shim.close();
    await waitFor(() => s.service.grants.list().length === 0, "the grant to end with the shim's channel");
  });

  test("a deny or a once approval makes no grant, and no grant outlives the service", async () => {
    const s = start();
    await s.decide((await s.evaluate({})).task_id ?? "", PAGE, { decision: "approve" });
    await s.decide((await s.evaluate({ name: "delete_tag" })).task_id ?? "", PAGE, { decision: "deny", scope: "session" });
    expect((await s.overview()).grants).toEqual([]);
    await s.decide((await s.evaluate({})).task_id ?? "", PAGE, { decision: "approve", scope: "session" });
    expect(s.service.grants.list()).toHaveLength(1);
    await s.service.stop();
    expect(s.service.grants.list()).toEqual([]);
    expect(s.service.grants.grant({ serverId: "gh", method: "tools/call", name: "x" }, "t", "web", 0, "http")).toBeNull();
  });
});

describe("a yes in the agent's own prompt (Claude Code's, through its hook)", () => {
  const agentEngine = new GovernanceEngine(
    {
      schema: 1,
      sources: [],
      governance: {
        defaults: { action: "forward" },
        rules: [
          { id: "edit-project", source: "agent", match: "{edit,write}", method: "tools/call", arguments: { path: { within: "${PROJECT}" } }, action: "approve" },
          { id: "agent-ask", source: "agent", match: "*", method: "tools/call", action: "approve" },
        ],
      },
      approval: {},
      pins: { mode: "strict", block_severity: "high" },
    },
    null,
    "test",
  );
  function startAgent() {
    const service = startGovernanceService({ people: () => null, engine: agentEngine, profile: "production", sessionSecret: SESSION, pageKey: PAGE, cliKey: CLI, port: 0, sessionProject: "/home/ada/project" });
    stops.push(() => service.stop());
    /** One hook process: its own channel, as `thoughtgate hook` has. */
    const hook = async (id: string, name: string, path: string, mode: string) => {
      const channel = await openShimChannel(service.url, SESSION);
      stops.push(() => channel.close());
      const request = { server_id: "agent", direction: "agent_to_server", method: "tools/call", name, arguments: { tool: name, path }, message_type: "request", profile: "production", id, channels: ["agent_prompt"], agent_mode: mode };
      return v.parse(evaluateResponse, (await channel.ask("POST", "/governance/evaluate", request)).body);
    };
    const ran = async (id: string, mode: string) => (await (await fetch(`${service.url}/governance/agent-ran`, { method: "POST", headers: { authorization: `Bearer ${SESSION}`, "content-type": "application/json" }, body: JSON.stringify({ id, agent_mode: mode }) })).json()) as { scope: string | null };
    return { service, hook, ran };
  }
  const inProject = "/home/ada/project/a.md";

  test("the agent switched to accept edits by the asked edit: the session's edits and writes in the project are granted, once, and nothing else", async () => {
    const s = startAgent();
    expect((await s.hook("hook-agent-1", "edit", inProject, "default")).decision).toBe("ask_agent");
    expect(await s.ran("hook-agent-1", "acceptEdits")).toMatchObject({ scope: "session", rule_id: "edit-project" });
    // Told twice: the ask was answered already.
    expect((await s.ran("hook-agent-1", "acceptEdits")).scope).toBeNull();
    const write = await s.hook("hook-agent-2", "write", "/home/ada/project/b.md", "acceptEdits");
    expect(write.decision).toBe("pending_approval");
    expect(s.service.tasks.get(write.task_id ?? "")?.decidedBy).toBe("session_grant:hook-agent-1-write");
    // Not an edit outside the project, not a shell command.
    expect((await s.hook("hook-agent-3", "edit", "/etc/hosts", "acceptEdits")).decision).toBe("ask_agent");
    expect((await s.hook("hook-agent-4", "shell", inProject, "acceptEdits")).decision).toBe("ask_agent");
    expect(s.service.grants.list().map((grant) => `${grant.name} ${grant.grantedBy}`)).toEqual(["edit agent_prompt", "write agent_prompt"]);
  });

  test("a plain yes stays once: no switch of mode, a mode that was never the person's default, a shell command, an edit outside the project", async () => {
    const s = startAgent();
    const once = async (id: string, name: string, path: string, before: string, after: string) => {
      await s.hook(id, name, path, before);
      return (await s.ran(id, after)).scope;
    };
    expect(await once("hook-agent-1", "edit", inProject, "default", "default")).toBe("once");
    expect(await once("hook-agent-2", "edit", inProject, "acceptEdits", "acceptEdits")).toBe("once");
    expect(await once("hook-agent-3", "edit", inProject, "bypassPermissions", "acceptEdits")).toBe("once");
    expect(await once("hook-agent-4", "shell", inProject, "default", "acceptEdits")).toBe("once");
    expect(await once("hook-agent-5", "edit", "/etc/hosts", "default", "acceptEdits")).toBe("once");
    expect(s.service.grants.list()).toEqual([]);
  });

  test("an ask a later call of the agent's came after was not answered yes: told afterwards, it grants nothing; a call never asked neither", async () => {
    const s = startAgent();
    await s.hook("hook-agent-1", "edit", inProject, "default");
    await s.hook("hook-agent-2", "read", inProject, "default");
    expect((await s.ran("hook-agent-1", "acceptEdits")).scope).toBeNull();
    expect((await s.ran("hook-agent-never", "acceptEdits")).scope).toBeNull();
    expect(s.service.grants.list()).toEqual([]);
    expect((await s.hook("hook-agent-3", "edit", inProject, "acceptEdits")).decision).toBe("ask_agent");
  });
});

describe("always allow", () => {
  test("from every channel, the call is approved only once the rule is written, kept to the session's project unless everywhere was chosen", async () => {
    const writer = fakeWriter(WRITTEN);
    const s = start({ always: writer });
    const byCli = (await s.evaluate({})).task_id ?? "";
    const cli = await s.decide(byCli, CLI, { decision: "approve", scope: "always" });
    expect(v.parse(taskResponse, await cli.json()).task).toMatchObject({ status: "approved", decided_by: "cli", scope: "always", always_scope: "project", reason: "always allowed: rule r added to /x" });
    const byPage = (await s.evaluate({})).task_id ?? "";
    const page = await s.decide(byPage, PAGE, { decision: "approve", scope: "always", always_scope: "everywhere" });
    expect(v.parse(taskResponse, await page.json()).task).toMatchObject({ status: "approved", decided_by: "web", scope: "always", always_scope: "everywhere" });
    // Through the agent's form, on the shim's channel: checked at once, approved when the rule is written.
    const shim = await s.shim();
    const offered = await shim.evaluate({ channels: ["elicitation"] });
    expect(offered.always).toBe(true);
    const relayed = await shim.ask("POST", `/governance/task/${offered.task_id}/decision`, { decision: "approve", scope: "always", always_scope: "project", digest: await shim.digest(offered.task_id ?? "") });
    expect(relayed.status).toBe(200);
    await waitFor(async () => (await s.task(offered.task_id ?? "")).status === "approved", "the relayed always");
    expect(await s.task(offered.task_id ?? "")).toMatchObject({ decided_by: "elicitation", scope: "always", always_scope: "project" });
    expect(writer.written).toEqual([
      { id: byCli, project: "/home/ada/project", alwaysScope: "project", by: "with thoughtgate approve" },
      { id: byPage, project: "/home/ada/project", alwaysScope: "everywhere", by: "on the approvals page" },
      { id: offered.task_id ?? "", project: "/home/ada/project", alwaysScope: "project", by: "in the agent's prompt" },
    ]);
    // From anywhere but the channel the call came in on (another shim, plain HTTP with the session secret): nothing written.
    const forged = await shim.evaluate({ channels: ["elicitation"] });
    const always = { decision: "approve", scope: "always", digest: (await s.task(forged.task_id ?? "")).digest };
    const another = await s.shim();
    expect([(await another.ask("POST", `/governance/task/${forged.task_id}/decision`, always)).status, (await s.call(`/governance/task/${forged.task_id}/decision`, SESSION, always)).status]).toEqual([401, 401]);
    expect(writer.written).toHaveLength(3);
  });

  test("a rule that cannot be written: the page and the CLI say why and the task waits; the form's answer approves this one call and says so", async () => {
    const s = start({ always: fakeWriter({ ok: false, reason: "cannot always allow gh.delete_repo: the approval is asked by the project's policy /p/thoughtgate.yaml" }) });
    const id = (await s.evaluate({})).task_id ?? "";
    for (const key of [PAGE, CLI]) {
      const refused = await s.decide(id, key, { decision: "approve", scope: "always" });
      expect([refused.status, await refused.json()]).toEqual([409, { code: "not_possible", error: expect.stringContaining("project's policy") }]);
    }
    expect((await s.task(id)).status).toBe("pending");
    const shim = await s.shim();
    const offered = await shim.evaluate({ channels: ["elicitation"] });
    await shim.ask("POST", `/governance/task/${offered.task_id}/decision`, { decision: "approve", scope: "always", digest: await shim.digest(offered.task_id ?? "") });
    await waitFor(async () => (await s.task(offered.task_id ?? "")).status === "approved", "the fallback to once");
    expect(await s.task(offered.task_id ?? "")).toMatchObject({ scope: "once", reason: expect.stringContaining("always allow was not possible (cannot always allow gh.delete_repo: the approval is asked by the project's policy") });
    const noWriter = start();
    const other = (await noWriter.evaluate({})).task_id ?? "";
    expect((await noWriter.decide(other, PAGE, { decision: "approve", scope: "always" })).status).toBe(409);
  });

  test("no channel offers always where a rule could not be written: the form's answer says so, and so does the task", async () => {
    const s = start({ always: fakeWriter(WRITTEN, "the policy in force is /etc/tg.yaml, given with --thoughtgate-config") });
    const offered = await (await s.shim()).evaluate({ channels: ["elicitation"] });
    expect(offered.always).toBe(false);
    expect((await s.task(offered.task_id ?? "")).always_possible).toBe(false);
    const able = start({ always: fakeWriter(WRITTEN) });
    expect((await able.task((await able.evaluate({})).task_id ?? "")).always_possible).toBe(true);
  });
});

describe("the person's reason and who decided", () => {
  test("kept with the task in their own words (redacted, escaped), with the local user for the CLI and the page", async () => {
    const s = start();
    const id = (await s.evaluate({})).task_id ?? "";
    const denied = await s.decide(id, CLI, { decision: "deny", reason: "  not on main\u202e, use a branch; token ghp_abcdefghijklmnopqrstuvwxyz0123456789  " });
    const task = v.parse(taskResponse, await denied.json()).task;
    expect(task).toMatchObject({ status: "denied", decided_by: "cli", decided_by_who: expect.any(String), person_reason: "not on main\\u202e, use a branch; token [REDACTED:github_token]" });
    const long = await s.decide((await s.evaluate({})).task_id ?? "", PAGE, { decision: "deny", reason: "x".repeat(1_001) });
    expect([long.status, ((await long.json()) as { error: string }).error]).toEqual([400, expect.stringContaining("at most 1000 characters")]);
  });

  test("a form the person dismissed (Esc) is their no where wrap knows the agent shows forms to a person; elsewhere it leaves the task waiting", async () => {
    const interactive = start({ dismissIsNo: true });
    const shim = await interactive.shim();
    const asked = await shim.evaluate({ channels: ["elicitation"] });
    const told = await shim.ask("POST", `/governance/task/${asked.task_id}/unanswered`, { reason: "dismissed", dismissed: true });
    expect(v.parse(taskResponse, told.body).task).toMatchObject({ status: "denied", decided_by: "elicitation", reason: "declined by the person: they dismissed the agent's prompt (Esc)" });
    const unknown = start();
    const otherShim = await unknown.shim();
    const other = await otherShim.evaluate({ channels: ["elicitation"] });
    await otherShim.ask("POST", `/governance/task/${other.task_id}/unanswered`, { dismissed: true });
    expect((await unknown.task(other.task_id ?? "")).status).toBe("pending");
  });
});

describe("where the agent cannot ask", () => {
  test("agentCanAsk false: no shim is offered elicitation, even when it says it could", async () => {
    const s = start({ agentCanAsk: false });
    const answer = await (await s.shim()).evaluate({ channels: ["elicitation"] });
    expect([answer.decision, answer.shim_channels]).toEqual(["pending_approval", undefined]);
  });

  test("a desktop notification names the call and the page without its key; its actions decide as desktop", async () => {
    using notify = fakeNotifySend();
    const s = start({ desktop: findNotifyTool({ ...process.env, ...notify.env }, "linux") ?? undefined });
    const id = (await s.evaluate({ name: "delete_repo" })).task_id ?? "";
    const [shown] = await waitFor(() => (notify.notifications().length === 1 ? notify.notifications() : null), "the notification");
    expect(shown).toMatchObject({ waiting: true, title: "ThoughtGate: allow gh.delete_repo?" });
    expect(shown?.body).toContain(`Task ${id}, rule deletes.`);
    expect(shown?.body).toContain(`${s.service.url}/approvals (open the link thoughtgate printed`);
    expect(shown?.body).toContain(`thoughtgate approve ${id} [--session | --always]`);
    expect(shown?.args.join(" ")).not.toContain(PAGE);
    expect(shown?.args.join(" ")).not.toContain(CLI);
    // No "always": this service cannot write a rule. Those it offers are the form's words.
    expect(shown?.args.filter((arg) => arg.startsWith("--action="))).toEqual(["--action=once=Allow once", "--action=session=Allow this tool for this session", "--action=deny=Deny"]);

    await notify.click(shown?.pid ?? 0, "session");
    await waitFor(async () => (await s.task(id)).status === "approved", "the click to decide");
    expect(await s.task(id)).toMatchObject({ decided_by: "desktop", scope: "session" });
    // A workflow that asks only through the agent is never announced on the desktop.
    await s.evaluate({ name: "ask_agent" });
    const decidedElsewhere = (await s.evaluate({ name: "delete_tag" })).task_id ?? "";
    const second = await waitFor(() => notify.notifications().find((n) => n.title.includes("delete_tag")), "the second notification");
    await s.decide(decidedElsewhere, PAGE, { decision: "deny" });
    // Decided on the page: the notification is withdrawn (SIGINT, which notify-send answers by closing it).
    await waitFor(() => notify.ended(second.pid) === "signal", "the notification to be withdrawn");
    expect(notify.notifications().map((n) => n.title)).toEqual(["ThoughtGate: allow gh.delete_repo?", "ThoughtGate: allow gh.delete_tag?"]);
  });

  test("the shim says the agent's prompt went unanswered: only on its own channel, and the task waits on", async () => {
    const s = start();
    const shim = await s.shim();
    const asked = await shim.evaluate({ channels: ["elicitation"] });
    const refused = await s.call(`/governance/task/${asked.task_id}/unanswered`, SESSION, { reason: "cancel" });
    expect(refused.status).toBe(401);
    expect((await (await s.shim()).ask("POST", `/governance/task/${asked.task_id}/unanswered`, {})).status).toBe(401);
    const told = await shim.ask("POST", `/governance/task/${asked.task_id}/unanswered`, { reason: "cancel" });
    expect(v.parse(taskResponse, told.body).task.status).toBe("pending");
  });
});
