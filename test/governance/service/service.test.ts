import { afterEach, describe, expect, test } from "bun:test";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import * as v from "valibot";
import { loadConfig } from "../../../src/core/config/load.ts";
import { ThoughtGateError } from "../../../src/core/errors.ts";
import type { Profile } from "../../../src/core/profile.ts";
import { evaluateResponse, healthResponse, taskResponse, tasksResponse, type EvaluateRequest } from "../../../src/governance/wire/api.ts";
import { GovernanceEngine } from "../../../src/governance/engine/engine.ts";
import { startGovernanceService, type GovernanceService } from "../../../src/governance/service/service.ts";
import { callDigest } from "../../../src/governance/approval/tasks.ts";
import { FakeClock } from "../../support/fake-clock.ts";
import { tempDir, waitFor } from "../../support/harness.ts";
import { openShimChannel } from "../../support/shim-channel.ts";

const SESSION = "s".repeat(64);
const PAGE = "p".repeat(64);
const CLI = "c".repeat(64);

const CONFIG = `schema: 1
sources:
  - { id: gh, expose: { mode: allowlist, tools: ["get_*", "delete_*", "read", "drop_*", "push"] } }
governance:
  defaults: { action: forward }
  rules:
    - { id: no-drops, match: "drop_*", action: deny }
    - { id: deletes, match: "delete_*", action: approve }
    - { id: pushes, match: push, action: approve, approval: web-only }
    - { id: reads, match: read, action: policy }
approval:
  web-only: { destination: { type: web }, timeout: 1m, on_timeout: deny }
  lenient: { timeout: 30s, on_timeout: approve }
cedar:
  policies: [policy.cedar]
  schema: arguments.cedarschema
`;

const POLICY = `@id("allow") permit(principal, action, resource);
@id("no-etc") forbid(principal, action == ThoughtGate::Action::"tools/call", resource) when { resource.arguments has path && resource.arguments.path like "/etc/*" };
`;

const open: Array<{ stop(): Promise<void> }> = [];
const dirs: Array<{ [Symbol.dispose](): void }> = [];
afterEach(async () => {
  for (const item of open.splice(0)) await item.stop();
  for (const dir of dirs.splice(0)) dir[Symbol.dispose]();
});

async function engineFrom(yaml: string): Promise<GovernanceEngine> {
  const dir = tempDir();
  dirs.push(dir);
  writeFileSync(join(dir.path, "thoughtgate.yaml"), yaml);
  writeFileSync(join(dir.path, "policy.cedar"), POLICY);
  writeFileSync(join(dir.path, "arguments.cedarschema"), "namespace ThoughtGate { type Arguments = { path?: String }; }\n");
  const loaded = loadConfig(join(dir.path, "thoughtgate.yaml"), {});
  if (!loaded) throw new Error("config not found");
  return GovernanceEngine.fromConfig(loaded.config, loaded.file ?? "test");
}

type Started = {
  service: GovernanceService;
  call(path: string, init?: { body?: unknown; secret?: string | null; method?: string; headers?: Record<string, string> }): Promise<Response>;
  evaluate(request: Partial<EvaluateRequest>): Promise<v.InferOutput<typeof evaluateResponse>>;
};

async function start(options: { profile?: Profile; clock?: FakeClock; yaml?: string; engine?: () => GovernanceEngine; maxTasks?: number; sessionProject?: string } = {}): Promise<Started> {
  const service = startGovernanceService({
    // In-process: the test's own requests come from the service's own process, which is not under test here.
    people: () => null,
    engine: options.engine ?? (await engineFrom(options.yaml ?? CONFIG)),
    profile: options.profile ?? "production",
    sessionSecret: SESSION,
    pageKey: PAGE,
    cliKey: CLI,
    port: 0,
    ...(options.clock ? { clock: options.clock } : {}),
    ...(options.maxTasks ? { maxTasks: options.maxTasks } : {}),
    ...(options.sessionProject ? { sessionProject: options.sessionProject } : {}),
  });
  open.push(service);
  const call: Started["call"] = (path, init = {}) => {
    const secret = init.secret === undefined ? SESSION : init.secret;
    const headers: Record<string, string> = { ...(secret === null ? {} : { authorization: `Bearer ${secret}` }), ...init.headers };
    if (init.body !== undefined) headers["content-type"] = "application/json";
    return fetch(`${service.url}${path}`, {
      method: init.method ?? (init.body === undefined ? "GET" : "POST"),
      headers,
      ...(init.body !== undefined ? { body: typeof init.body === "string" ? init.body : JSON.stringify(init.body) } : {}),
    });
  };
  const evaluate: Started["evaluate"] = async (request) => {
    const response = await call("/governance/evaluate", {
      body: { server_id: "gh", direction: "agent_to_server", method: "tools/call", name: "get_repo", arguments: {}, message_type: "request", profile: options.profile ?? "production", ...request },
    });
    expect(response.status).toBe(200);
    return v.parse(evaluateResponse, await response.json());
  };
  return { service, call, evaluate };
}

/** One raw HTTP exchange (fetch always sends a Host header). */
async function rawRequest(port: number, text: string): Promise<string> {
  let answer = "";
  const { promise: closed, resolve } = Promise.withResolvers<void>();
  const socket = await Bun.connect({ hostname: "127.0.0.1", port, socket: { data: (_, chunk) => void (answer += chunk.toString()), close: () => resolve(), error: () => resolve() } });
  socket.write(text);
  await closed;
  return answer;
}

async function task(s: Started, id: string) {
  return v.parse(taskResponse, await (await s.call(`/governance/task/${id}`)).json()).task;
}

describe("authentication", () => {
  test("every endpoint refuses a missing or wrong secret with 401, and counts it", async () => {
    const s = await start();
    const refused = [
      await s.call("/healthz", { secret: null }),
      await s.call("/metrics", { secret: "wrong" }),
      await s.call("/governance/evaluate", { secret: null, body: {} }),
      await s.call("/governance/heartbeat", { secret: PAGE, body: { server_id: "gh" } }),
      await s.call("/governance/task/x", { secret: CLI }),
      await s.call("/no/such/path", { secret: null }),
      // The approval API needs the page key or the CLI key, not the shims' session secret.
      await s.call("/approvals/api/tasks", { secret: SESSION }),
      await s.call("/approvals/api/tasks", { secret: "wrong" }),
    ];
    expect(refused.map((r) => r.status)).toEqual([401, 401, 401, 401, 401, 401, 401, 401]);
    expect(await refused[0]?.json()).toEqual({ error: "missing or wrong session secret", code: "unauthorized" });
    const metrics = await (await s.call("/metrics")).text();
    expect(metrics).toContain("thoughtgate_governance_unauthorized_total 8");
  });

  test("healthz answers with the secret", async () => {
    const s = await start();
    const response = await s.call("/healthz");
    expect(v.parse(healthResponse, await response.json())).toMatchObject({ status: "ok", profile: "production" });
  });

  test("a request naming another Host (DNS rebinding) or a cross-origin POST is refused", async () => {
    const s = await start();
    expect((await s.call("/healthz", { headers: { host: `evil.example:${s.service.port}` } })).status).toBe(403);
    const cross = await s.call(`/approvals/api/tasks/x`, { secret: PAGE, body: { decision: "approve", digest: "x" }, headers: { origin: "http://evil.example" } });
    expect(cross.status).toBe(403);
    const site = await s.call(`/approvals/api/tasks/x`, { secret: PAGE, body: { decision: "approve", digest: "x" }, headers: { "sec-fetch-site": "cross-site" } });
    expect(site.status).toBe(403);
  });

  test("a request without a Host header is a 400 with a JSON error, never a crash page", async () => {
    const s = await start();
    for (const head of ["GET /healthz HTTP/1.0\r\n", "GET /healthz HTTP/1.1\r\nHost:\r\nConnection: close\r\n"]) {
      const answer = await rawRequest(s.service.port, `${head}Authorization: Bearer ${SESSION}\r\n\r\n`);
      expect(answer).toStartWith("HTTP/1.1 400 ");
      expect(answer).toEndWith('{"error":"the request has no Host header","code":"bad_request"}');
    }
  });
});

describe("POST /governance/evaluate", () => {
  test("forward: an allowed call, with the gate and rule that let it through", async () => {
    const s = await start();
    expect(await s.evaluate({ name: "get_repo" })).toEqual({ decision: "forward", gate: "rules", rule_id: "defaults", policy_id: null, reason: "rule defaults: forward", shutdown: false });
    expect(await s.evaluate({ name: "read", arguments: { path: "/tmp/x" } })).toMatchObject({ decision: "forward", gate: "cedar", policy_id: "allow" });
  });

  test("each gate's deny carries its code and error.data {gate, tool, server_id, correlation_id, reason}", async () => {
    const s = await start();
    const cases = [
      { name: "secret_tool", arguments: {}, code: -32015, gate: "visibility", reason: 'tool "secret_tool" is not exposed by source "gh"' },
      { name: "drop_table", arguments: {}, code: -32014, gate: "rules", reason: "rule no-drops: deny" },
      { name: "read", arguments: { path: "/etc/passwd" }, code: -32003, gate: "cedar", reason: "forbidden by Cedar policy no-etc" },
    ];
    for (const c of cases) {
      const answer = await s.evaluate({ name: c.name, arguments: c.arguments });
      expect(answer).toMatchObject({ decision: "deny", gate: c.gate, reason: c.reason, error: { code: c.code, data: { gate: c.gate, tool: c.name, server_id: "gh", reason: c.reason } } });
      const data = answer.error?.data as { correlation_id: string };
      expect(data.correlation_id).toMatch(/^[0-9a-f-]{36}$/);
      expect(answer.error?.message).toContain(c.reason);
    }
  });

  test("a method that is not governed is forwarded without asking the engine", async () => {
    const s = await start();
    expect(await s.evaluate({ method: "completion/complete", name: "drop_table" })).toMatchObject({ decision: "forward", gate: null });
  });

  test("a bad body is a 400 with a one-line message", async () => {
    const s = await start();
    const notJson = await s.call("/governance/evaluate", { body: "{nope" });
    expect(notJson.status).toBe(400);
    expect(await notJson.json()).toEqual({ error: "request body is not valid JSON", code: "bad_request" });
    const wrong = await s.call("/governance/evaluate", { body: { server_id: 7, method: "tools/call" } });
    expect(wrong.status).toBe(400);
    const { error } = (await wrong.json()) as { error: string };
    expect(error).toStartWith("invalid request body: server_id: ");
    expect(error).not.toContain("\n");
  });

  test("the engine throwing denies with -32013 (fail closed)", async () => {
    const s = await start({
      engine: () => {
        throw new Error("boom");
      },
    });
    expect(await s.evaluate({ name: "get_repo" })).toMatchObject({ decision: "deny", gate: "governance", error: { code: -32013, data: { gate: "governance", reason: "governance engine failed: boom" } } });
  });

  test("development forwards what production blocks (WOULD_BLOCK) and auto-approves approvals; a shim asking for production is enforced", async () => {
    const s = await start({ profile: "development" });
    expect(await s.evaluate({ name: "drop_table", profile: "development" })).toMatchObject({ decision: "forward", would: "WOULD_BLOCK", gate: "rules", rule_id: "no-drops" });
    expect(await s.evaluate({ name: "delete_repo", profile: "development" })).toMatchObject({ decision: "forward", would: "WOULD_REQUIRE_APPROVAL", auto_approved: true, gate: "approval" });
    expect(await s.evaluate({ name: "drop_table", profile: "production" })).toMatchObject({ decision: "deny", error: { code: -32014 } });
    expect(s.service.tasks.list()).toEqual([]);
  });
});

describe("approvals", () => {
  test("pending_approval creates a task; the approval API approves it with the task's digest and refuses a wrong one", async () => {
    const s = await start();
    const answer = await s.evaluate({ name: "delete_repo", arguments: { repo: "acme/site" }, channels: ["elicitation"] });
    expect(answer).toMatchObject({
      decision: "pending_approval",
      gate: "approval",
      rule_id: "deletes",
      poll_interval_ms: 250,
      prompt: 'ThoughtGate: allow delete_repo on server gh? (rule deletes: approval required)\nrepo: "acme/site"',
      shutdown: false,
    });
    const id = answer.task_id ?? "";
    const pending = await task(s, id);
    expect(pending).toMatchObject({ task_id: id, status: "pending", server_id: "gh", name: "delete_repo", arguments: { repo: "acme/site" }, rule_id: "deletes", workflow: "default" });

    const wrong = await s.call(`/approvals/api/tasks/${id}`, { secret: PAGE, body: { decision: "approve", digest: "f".repeat(64) } });
    expect(wrong.status).toBe(409);
    expect(await wrong.json()).toMatchObject({ code: "digest_mismatch" });
    expect((await task(s, id)).status).toBe("pending");

    const right = await s.call(`/approvals/api/tasks/${id}`, { secret: PAGE, body: { decision: "approve", digest: pending.digest } });
    expect(right.status).toBe(200);
    expect(v.parse(taskResponse, await right.json()).task).toMatchObject({ status: "approved", decided_by: "web" });
    expect(await task(s, id)).toMatchObject({ status: "approved", decided_by: "web" });

    const again = await s.call(`/approvals/api/tasks/${id}`, { secret: CLI, body: { decision: "deny", digest: pending.digest } });
    expect(again.status).toBe(409);
    expect(await again.json()).toEqual({ code: "not_pending", error: `task ${id} is already approved` });
    expect((await s.call(`/approvals/api/tasks/nope`, { secret: PAGE })).status).toBe(404);
  });

  test("the channel is the key's: the CLI key decides as cli whatever the body says", async () => {
    const s = await start();
    const id = (await s.evaluate({ name: "delete_repo" })).task_id ?? "";
    const { digest } = await task(s, id);
    const decided = await s.call(`/approvals/api/tasks/${id}`, { secret: CLI, body: { decision: "approve", channel: "elicitation", digest } });
    expect(v.parse(taskResponse, await decided.json()).task).toMatchObject({ status: "approved", decided_by: "cli" });
  });

  test("the task view shows arguments with credentials redacted; the digest is the real call's", async () => {
    const s = await start();
    const args = { repo: "acme/site", api_key: "sk-live-123", headers: { Authorization: "Bearer abc" } };
    const id = (await s.evaluate({ name: "delete_repo", arguments: args })).task_id ?? "";
    const view = await task(s, id);
    expect(view.arguments).toEqual({ repo: "acme/site", api_key: "[REDACTED:secret_field]", headers: { Authorization: "[REDACTED:secret_field]" } });
    expect(view.digest).toBe(callDigest("gh", "tools/call", "delete_repo", args));
    expect(JSON.stringify(await (await s.call("/approvals/api/tasks", { secret: PAGE })).json())).not.toContain("sk-live-123");
  });

  test("no elicitation offered when the shim cannot elicit or the workflow sends it elsewhere", async () => {
    const s = await start();
    expect((await s.evaluate({ name: "delete_repo" })).shim_channels).toBeUndefined();
    expect((await s.evaluate({ name: "push", channels: ["elicitation"] })).shim_channels).toBeUndefined();
  });

  test("the shim relays an elicitation answer only on the channel its call came in on; cancel settles a task", async () => {
    const s = await start();
    const shim = await openShimChannel(s.service.url, SESSION);
    const other = await openShimChannel(s.service.url, SESSION);
    open.push({ stop: async () => (shim.close(), other.close()) });
    const evaluation = { server_id: "gh", direction: "agent_to_server", method: "tools/call", arguments: {}, message_type: "request", profile: "production", channels: ["elicitation"] };
    const offered = await shim.ask("POST", "/governance/evaluate", { ...evaluation, name: "delete_repo" });
    expect(offered.body).toMatchObject({ decision: "pending_approval", shim_channels: ["elicitation"] });
    const first = offered.body.task_id as string;
    const { digest } = (await shim.ask("GET", `/governance/task/${first}`)).body.task;
    const refused = [
      // The session secret over HTTP, whatever channel the body names, whatever token it brings.
      await s.call(`/governance/task/${first}/decision`, { body: { decision: "approve", channel: "web", digest } }),
      await s.call(`/governance/task/${first}/decision`, { body: { decision: "approve", digest, relay_token: "0".repeat(64) } }),
      // Another shim's channel.
      await other.ask("POST", `/governance/task/${first}/decision`, { decision: "approve", digest }),
    ];
    expect(refused.map((r) => r.status)).toEqual([401, 401, 401]);
    // Another shim cannot read the task or cancel it either.
    expect((await other.ask("GET", `/governance/task/${first}`)).status).toBe(401);
    expect((await other.ask("POST", `/governance/task/${first}/cancel`, {})).status).toBe(401);
    expect(s.service.tasks.get(first)?.status).toBe("pending");
    const decided = await shim.ask("POST", `/governance/task/${first}/decision`, { decision: "deny", digest });
    expect(v.parse(taskResponse, decided.body).task).toMatchObject({ status: "denied", decided_by: "elicitation" });

    // Over HTTP no channel exists: no elicitation is offered, and nothing is relayed.
    const notOffered = await s.evaluate({ name: "delete_branch", channels: ["elicitation"] });
    expect(notOffered.shim_channels).toBeUndefined();
    const noChannel = await s.call(`/governance/task/${notOffered.task_id}/decision`, { body: { decision: "approve", digest: (await task(s, notOffered.task_id ?? "")).digest } });
    expect(noChannel.status).toBe(401);

    // A shim that goes away takes its waiting calls with it.
    const waiting = (await other.ask("POST", "/governance/evaluate", { ...evaluation, name: "delete_tag" })).body.task_id as string;
    other.close();
    await waitFor(() => s.service.tasks.get(waiting)?.status === "cancelled", "the closed channel's task to be cancelled");

    const second = notOffered.task_id ?? "";
    const cancelled = await s.call(`/governance/task/${second}/cancel`, { body: { reason: "notifications/cancelled" } });
    expect(v.parse(taskResponse, await cancelled.json()).task).toMatchObject({ status: "cancelled", reason: "notifications/cancelled" });
    expect((await s.call(`/governance/task/${second}/cancel`, { body: {} })).status).toBe(409);
    expect((await s.call(`/governance/task/unknown`)).status).toBe(404);
  });

  test("a task nobody decides times out with the workflow's on_timeout", async () => {
    const clock = new FakeClock();
    const s = await start({ clock, yaml: CONFIG.replace("- { id: deletes, match: \"delete_*\", action: approve }", "- { id: deletes, match: \"delete_*\", action: approve, approval: lenient }") });
    const lenient = (await s.evaluate({ name: "delete_repo" })).task_id ?? "";
    const strict = (await s.evaluate({ name: "push" })).task_id ?? "";
    clock.advance(30_000);
    expect(await task(s, lenient)).toMatchObject({ status: "timed_out", timeout_outcome: "approve", decided_by: "timeout" });
    expect((await task(s, strict)).status).toBe("pending");
    clock.advance(30_000);
    expect(await task(s, strict)).toMatchObject({ status: "timed_out", timeout_outcome: "deny" });
  });

  test("/approvals/api/tasks lists pending tasks first, for either key; shims cannot list tasks", async () => {
    const s = await start();
    const a = (await s.evaluate({ name: "delete_a" })).task_id ?? "";
    const b = (await s.evaluate({ name: "delete_b" })).task_id ?? "";
    const { digest } = await task(s, a);
    await s.call(`/approvals/api/tasks/${a}`, { secret: PAGE, body: { decision: "deny", digest } });
    const viaPage = v.parse(tasksResponse, await (await s.call("/approvals/api/tasks", { secret: PAGE })).json());
    const viaCli = v.parse(tasksResponse, await (await s.call("/approvals/api/tasks", { secret: CLI })).json());
    expect(viaPage.tasks.map((t) => [t.task_id, t.status])).toEqual([[b, "pending"], [a, "denied"]]);
    expect(viaCli).toEqual(viaPage);
    expect((await s.call("/governance/tasks")).status).toBe(404);
  });

  test("a full task store denies new approvals with -32013 (fail closed)", async () => {
    const s = await start({ maxTasks: 1 });
    expect((await s.evaluate({ name: "delete_a" })).decision).toBe("pending_approval");
    expect(await s.evaluate({ name: "delete_b" })).toMatchObject({ decision: "deny", gate: "approval", error: { code: -32013 } });
  });

  test("the page needs no key, holds no data, and is served with strict security headers; its URL carries the key in the fragment", async () => {
    const s = await start();
    await s.evaluate({ name: "delete_secret_thing" });
    const page = await s.call("/approvals", { secret: null });
    expect(page.status).toBe(200);
    const csp = page.headers.get("content-security-policy") ?? "";
    expect(csp).toContain("default-src 'self'");
    const nonce = /'nonce-([^']+)'/.exec(csp)?.[1] ?? "";
    const html = await page.text();
    expect(html).toContain(`<script nonce="${nonce}">`);
    expect(html).not.toContain("delete_secret_thing");
    expect(html).not.toContain(PAGE);
    expect(page.headers.get("x-frame-options")).toBe("DENY");
    expect(page.headers.get("cache-control")).toBe("no-store");
    expect(s.service.approvalsUrl).toBe(`${s.service.url}/approvals#key=${PAGE}`);
  });
});

describe("shims' other calls", () => {
  test("filter returns the visible names in the server's order", async () => {
    const s = await start();
    const response = await s.call("/governance/filter", { body: { server_id: "gh", kind: "tools", names: ["secret_tool", "get_repo", "delete_repo"] } });
    expect(await response.json()).toEqual({ visible: ["get_repo", "delete_repo"], shutdown: false });
  });

  test("the shutdown flag rides on evaluate, heartbeat, task and filter answers once set", async () => {
    const s = await start();
    const id = (await s.evaluate({ name: "delete_repo" })).task_id ?? "";
    expect(await (await s.call("/governance/heartbeat", { body: { server_id: "gh", pid: 1 } })).json()).toMatchObject({ shutdown: false });
    s.service.setShutdown();
    expect((await s.evaluate({ name: "get_repo" })).shutdown).toBe(true);
    expect(await (await s.call("/governance/heartbeat", { body: { server_id: "gh" } })).json()).toMatchObject({ shutdown: true });
    expect(((await (await s.call(`/governance/task/${id}`)).json()) as { shutdown: boolean }).shutdown).toBe(true);
    expect(((await (await s.call("/governance/filter", { body: { server_id: "gh", kind: "tools", names: [] } })).json()) as { shutdown: boolean }).shutdown).toBe(true);
  });

  test("a heartbeat answers with how the policy wants that server's results scanned for secrets", async () => {
    const s = await start({ yaml: `${CONFIG}secrets:\n  kinds: { jwt: { action: detect } }\n  servers: { vault: { scan: "off" } }\n` });
    const answer = async (server_id: string) => (await (await s.call("/governance/heartbeat", { body: { server_id } })).json()) as { secrets: unknown };
    expect((await answer("gh")).secrets).toEqual({ scan: true, kinds: { jwt: { action: "detect" } } });
    expect((await answer("vault")).secrets).toEqual({ scan: false, kinds: { jwt: { action: "detect" } } });
  });

  test("/metrics exposes the service's series, Cedar latency and refusals, with escaped labels", async () => {
    const s = await start();
    await s.call("/governance/heartbeat", { body: { server_id: "gh" } });
    await s.call("/governance/events", {
      body: {
        server_id: 'we"ird\\id\n',
        messages: [{ direction: "agent_to_server", method: "tools/call", count: 3 }],
        framing_errors: [{ error_type: "invalid_json", count: 2 }],
        server_state: "running",
      },
    });
    await s.evaluate({ name: "read", arguments: { path: "/tmp/x" } });
    await s.evaluate({ name: "drop_x" });
    const id = (await s.evaluate({ name: "delete_x" })).task_id ?? "";
    await s.call(`/governance/task/${id}/cancel`, { body: {} });
    await s.call("/healthz", { secret: null });
    const response = await s.call("/metrics");
    expect(response.headers.get("content-type")).toStartWith("text/plain; version=0.0.4");
    const text = await response.text();
    const weird = 'server_id="we\\"ird\\\\id\\n"';
    for (const line of [
      `thoughtgate_stdio_messages_total{${weird},direction="agent_to_server",method="tools/call"} 3`,
      `thoughtgate_stdio_framing_errors_total{${weird},error_type="invalid_json"} 2`,
      `thoughtgate_stdio_server_state{${weird},state="running"} 1`,
      `thoughtgate_stdio_server_state{${weird},state="exited"} 0`,
      'thoughtgate_stdio_governance_decisions_total{server_id="gh",decision="forward",profile="production"} 1',
      'thoughtgate_stdio_governance_decisions_total{server_id="gh",decision="deny",profile="production"} 1',
      'thoughtgate_stdio_governance_decisions_total{server_id="gh",decision="pending_approval",profile="production"} 1',
      'thoughtgate_stdio_approval_latency_seconds_count{server_id="gh"} 1',
      "thoughtgate_stdio_active_servers 2",
      "thoughtgate_cedar_evaluation_seconds_count 1",
      "thoughtgate_governance_unauthorized_total 1",
      "# TYPE thoughtgate_stdio_approval_latency_seconds histogram",
    ]) {
      expect(text).toContain(line);
    }
  });
});

describe("/metrics stays bounded whatever shims report", () => {
  const series = (text: string, name: string) => text.split("\n").filter((line) => line.startsWith(`${name}{`));

  test("known MCP methods pass; a few other names per server are kept, the rest count as other; long values are cut", async () => {
    const s = await start();
    const junk = Array.from({ length: 50 }, (_, i) => ({ direction: "agent_to_server", method: `x/${i}`, count: 1 }));
    await s.call("/governance/events", {
      body: {
        server_id: "gh",
        messages: [...junk, { direction: "agent_to_server", method: "tools/call", count: 2 }, { direction: "sideways", method: "ping", count: 1 }, { direction: "agent_to_server", method: "y".repeat(10_000), count: 1 }],
        framing_errors: [{ error_type: "InvalidJson", count: 1 }, ...Array.from({ length: 30 }, (_, i) => ({ error_type: `E${i}`, count: 1 }))],
      },
    });
    await s.call("/governance/events", { body: { server_id: "fresh", messages: [{ direction: "server_to_agent", method: "m".repeat(300), count: 1 }] } });
    const text = await (await s.call("/metrics")).text();
    const gh = series(text, "thoughtgate_stdio_messages_total").filter((line) => line.includes('server_id="gh"'));
    // 10 other names, tools/call, ping (direction other) and the rest as `other`.
    expect(gh).toHaveLength(13);
    expect(text).toContain('thoughtgate_stdio_messages_total{server_id="gh",direction="agent_to_server",method="tools/call"} 2');
    expect(text).toContain('thoughtgate_stdio_messages_total{server_id="gh",direction="other",method="ping"} 1');
    expect(text).toContain('thoughtgate_stdio_messages_total{server_id="gh",direction="agent_to_server",method="other"} 41');
    expect(text).toContain('thoughtgate_stdio_framing_errors_total{server_id="gh",error_type="InvalidJson"} 1');
    expect(text).toContain('thoughtgate_stdio_framing_errors_total{server_id="gh",error_type="other"} 20');
    expect(text).toContain(`thoughtgate_stdio_messages_total{server_id="fresh",direction="server_to_agent",method="${"m".repeat(127)}…"} 1`);
    expect(Math.max(...text.split("\n").map((line) => line.length))).toBeLessThan(400);
  });

  test("server ids past the cap count as other, in every series", async () => {
    const s = await start();
    for (let i = 0; i < 120; i++) await s.call("/governance/heartbeat", { body: { server_id: `srv-${i}` } });
    await s.evaluate({ server_id: "srv-119", name: "get_repo" });
    const text = await (await s.call("/metrics")).text();
    expect(text).toContain("thoughtgate_stdio_active_servers 101");
    expect(text).toContain('thoughtgate_stdio_governance_decisions_total{server_id="other",decision="forward",profile="production"} 1');
  });

  test("counts must be whole and not negative", async () => {
    const s = await start();
    const negative = await s.call("/governance/events", { body: { server_id: "gh", messages: [{ direction: "agent_to_server", method: "ping", count: -5 }] } });
    expect(negative.status).toBe(400);
  });
});

test("a taken port is a clear CONFIG error", async () => {
  const s = await start();
  let thrown: unknown;
  try {
    startGovernanceService({ people: () => null, engine: await engineFrom(CONFIG), profile: "production", sessionSecret: SESSION, pageKey: PAGE, cliKey: CLI, port: s.service.port });
  } catch (error) {
    thrown = error;
  }
  expect(thrown).toBeInstanceOf(ThoughtGateError);
  expect(thrown).toMatchObject({ code: "CONFIG", message: `port ${s.service.port} is in use on 127.0.0.1 (choose another with --governance-port, or 0 for any free port)` });
});

describe("the call's place", () => {
  const IN_PROJECT = `schema: 1
governance:
  defaults: { action: deny }
  rules:
    - { id: in-project, match: write_file, arguments: { path: { within: "\${PROJECT}" } }, action: forward }
    - { id: here, match: read_file, arguments: { path: { glob: "\${CWD}/*" } }, action: forward }
`;

  test("serve decides in the project and working directory each shim sends", async () => {
    const s = await start({ yaml: IN_PROJECT });
    const write = (project: string, path: string) => s.evaluate({ name: "write_file", arguments: { path }, project, cwd: project });
    expect((await write("/srv/a", "/srv/a/x.md")).decision).toBe("forward");
    expect(await write("/srv/b", "/srv/a/x.md")).toMatchObject({ decision: "deny", rule_id: "defaults" });
    expect((await s.evaluate({ name: "read_file", arguments: { path: "/w/lib/x" }, cwd: "/w/lib" })).decision).toBe("forward");
    expect((await s.evaluate({ name: "read_file", arguments: { path: "/w/lib/x" }, cwd: "/elsewhere" })).decision).toBe("deny");
  });

  test("a wrap session's project wins over what a shim sends; a place that is not an absolute path is refused", async () => {
    const s = await start({ yaml: IN_PROJECT, sessionProject: "/srv/a" });
    expect((await s.evaluate({ name: "write_file", arguments: { path: "/srv/a/x.md" }, project: "/srv/b" })).decision).toBe("forward");
    expect((await s.evaluate({ name: "write_file", arguments: { path: "/srv/b/x.md" }, project: "/srv/b" })).decision).toBe("deny");
    const bad = await s.call("/governance/evaluate", {
      body: { server_id: "gh", direction: "agent_to_server", method: "tools/call", name: "write_file", arguments: {}, message_type: "request", profile: "production", project: "relative/dir" },
    });
    expect(bad.status).toBe(400);
  });
});
