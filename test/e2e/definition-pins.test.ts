/**
 * Pinned tool definitions through the compiled binary, MCP 2025-11-25 era: a server that changes
 * its `echo` tool after N calls and sends notifications/tools/list_changed (the scripted fixture's
 * --drift-after). The change is caught, the tool hidden and its calls refused with -32011
 * (`data.reason: "definition_changed"`), a person accepts it (through the agent, or with
 * `thoughtgate pins accept`), and the call then runs; a new session keeps the pins.
 */
import { afterEach, describe, expect, setDefaultTimeout, test } from "bun:test";
import { existsSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { fixture, readEvents, requireBinary, tempDir, waitFor } from "../support/harness.ts";
import { RawAgent, type Received } from "../support/raw-agent.ts";
import { runBinary } from "../support/serve.ts";
import { personReads } from "../support/approval-answers.ts";

setDefaultTimeout(60_000);
requireBinary();

const agents: RawAgent[] = [];
afterEach(async () => {
  for (const agent of agents.splice(0)) await agent.close();
});

type Options = { serverArgs?: string[]; policy?: string; profile?: string; elicitation?: boolean };

/** A shim whose state directory (and so its pins) is `dir`'s, between a raw agent and the scripted server. */
async function session(dir: string, options: Options = {}): Promise<{ agent: RawAgent; events: () => Array<Record<string, unknown>> }> {
  const events = join(dir, `events-${agents.length}.jsonl`);
  const policy: string[] = [];
  if (options.policy !== undefined) {
    writeFileSync(join(dir, "thoughtgate.yaml"), options.policy);
    policy.push("--thoughtgate-config", join(dir, "thoughtgate.yaml"));
  }
  const agent = new RawAgent(
    ["--server-id", "scripted", "--events", events, "--profile", options.profile ?? "production", ...policy, "--", ...fixture("scripted-server-fixture.ts", ...(options.serverArgs ?? ["--drift-after", "1"]))],
    env(dir),
  );
  agents.push(agent);
  const capabilities = options.elicitation === false ? {} : { elicitation: {} };
  const init = await agent.request("init", "initialize", { protocolVersion: "2025-11-25", capabilities, clientInfo: { name: "pins-e2e", version: "1" } });
  expect(init.error).toBeUndefined();
  return { agent, events: () => readEvents(events) };
}

function env(dir: string): Record<string, string | undefined> {
  return { ...process.env, XDG_STATE_HOME: join(dir, "state") };
}

async function toolNames(agent: RawAgent, id: string): Promise<string[]> {
  const list = await agent.request(id, "tools/list", {});
  return (list.result.tools as Array<{ name: string }>).map((tool) => tool.name);
}

/** Call echo; answer the shim's elicitation (if one comes) with `answer`. Returns the call's answer and what came before it. */
async function callEcho(agent: RawAgent, id: string, answer: "accept" | "decline" | null): Promise<{ reply: Received; before: Received[]; asked: string | null }> {
  agent.send({ jsonrpc: "2.0", id, method: "tools/call", params: { name: "echo", arguments: { said: id } } });
  const before: Received[] = [];
  let asked: string | null = null;
  for (;;) {
    const message = await agent.next();
    if (message.method === "elicitation/create" && answer !== null) {
      asked = String((message as { params?: { message?: string } }).params?.message);
      expect((message as { params?: { requestedSchema?: { properties?: { decision?: { title?: string } } } } }).params?.requestedSchema?.properties?.decision?.title).toBe("Accept the new definition?");
      // A person takes longer than 300 ms to read the question: a faster answer counts as no answer
      // (docs/governance.md, Approvals), so the person here is given that long.
      await personReads();
      agent.send({ jsonrpc: "2.0", id: message.id, result: answer === "accept" ? { action: "accept", content: { decision: "once" } } : { action: "decline" } });
      continue;
    }
    if (message.id === id && message.method === undefined) return { reply: message, before, asked };
    before.push(message);
  }
}

describe("a tool whose definition changes mid-session (rug pull, 2025-11-25)", () => {
  test("is caught, hidden, refused until a person accepts it through the agent, then runs; a new session keeps the pin", async () => {
    using dir = tempDir();
    const marker = join(dir.path, "drifted");
    const { agent, events } = await session(dir.path, { serverArgs: ["--drift-after", "1", "--drift-when-exists", marker] });
    expect(await toolNames(agent, "l1")).toContain("echo");
    const first = await callEcho(agent, "c1", null);
    expect(first.reply.result.content[0].text).toBe('{"said":"c1"}');
    // The server changed echo and said so; the shim passes the notification on.
    await waitFor(() => events().some((e) => e.type === "definition_pinned"), "the pins");
    expect(await toolNames(agent, "l2")).not.toContain("echo");
    const changed = await waitFor(() => events().find((e) => e.type === "definition_changed"), "definition_changed");
    expect(changed).toMatchObject({ kind: "tool", name: "echo", changed: ["description"], action: "hidden" });

    // The person declines: the call is refused with the definitions gate's error.
    const declined = await callEcho(agent, "c2", "decline");
    expect(declined.asked).toContain("The tool scripted.echo changed its definition since it was pinned (description)");
    expect(declined.asked).toContain("+  \"description\": \"Echo the arguments back as text. <IMPORTANT>");
    expect(declined.asked).toContain("high conceal-from-user");
    expect(declined.reply.error).toMatchObject({ code: -32011, data: { gate: "definitions", reason: "definition_changed", changed: ["description"], server_id: "scripted" } });
    expect(declined.reply.error?.message).toContain("thoughtgate pins accept scripted echo");

    // The person accepts: the agent is told the list changed, the call runs, echo is listed again.
    const accepted = await callEcho(agent, "c3", "accept");
    expect(accepted.reply.result.content[0].text).toBe('{"said":"c3"}');
    expect(accepted.before).toContainEqual({ jsonrpc: "2.0", method: "notifications/tools/list_changed" });
    expect(await toolNames(agent, "l3")).toContain("echo");
    expect(await waitFor(() => events().find((e) => e.type === "definition_accepted"), "definition_accepted")).toMatchObject({ name: "echo", by: "elicitation" });
    await agent.close();
    writeFileSync(marker, "");

    // A new session of the same server: the accepted definition is the pin, so nothing is hidden
    // (its findings included: a person accepted this exact definition).
    const again = await session(dir.path, { serverArgs: ["--drift-after", "1", "--drift-when-exists", marker] });
    expect(await toolNames(again.agent, "l4")).toContain("echo");
    const call = await callEcho(again.agent, "c4", null);
    expect(call.reply.result.content[0].text).toBe('{"said":"c4"}');
    expect(again.events().filter((e) => e.type === "definition_changed")).toEqual([]);
  });

  test("a call in a new session before any tools/list is checked against the pin (the shim reads the list itself)", async () => {
    using dir = tempDir();
    const marker = join(dir.path, "drifted");
    const first = await session(dir.path, { serverArgs: ["--drift-when-exists", marker] });
    expect(await toolNames(first.agent, "l1")).toContain("echo");
    await first.agent.close();
    // The server now serves the changed echo from the start; the agent calls without listing.
    writeFileSync(marker, "");
    const { agent } = await session(dir.path, { serverArgs: ["--drift-when-exists", marker], elicitation: false });
    const call = await callEcho(agent, "c1", null);
    expect(call.reply.error).toMatchObject({ code: -32011, data: { reason: "definition_changed", changed: ["description"] } });
    expect(call.reply.error?.message).toContain("no person can be asked here");
  });

  test("`thoughtgate pins accept` accepts what the server serves now: the running shim shows the tool again and the call runs", async () => {
    using dir = tempDir();
    const { agent } = await session(dir.path, { elicitation: false });
    await toolNames(agent, "l1");
    await callEcho(agent, "c1", null);
    expect(await toolNames(agent, "l2")).not.toContain("echo");
    expect((await callEcho(agent, "c2", null)).reply.error?.data?.reason).toBe("definition_changed");

    const shown = await runBinary(["pins", "show", "scripted", "echo"], { env: env(dir.path) });
    expect(shown.stdout).toContain("CHANGED tool echo");
    expect(shown.stdout).toContain("+  \"description\": \"Echo the arguments back as text. <IMPORTANT>");
    const listed = await runBinary(["pins", "list"], { env: env(dir.path) });
    expect(listed.stdout).toContain("scripted  6 pinned, 1 changed, 0 flagged");

    // Not from inside a governed agent.
    const refused = await runBinary(["pins", "accept", "scripted", "echo"], { env: { ...env(dir.path), THOUGHTGATE_ACTIVE: "1" } });
    expect(refused.exitCode).toBe(1);
    const accepted = await runBinary(["pins", "accept", "scripted", "echo"], { env: env(dir.path) });
    expect(accepted.stdout).toBe("accepted tool scripted.echo (changed (description))\n");
    // The shim watches the pins: the agent hears the list changed without asking.
    const notice = await agent.next();
    expect(notice).toEqual({ jsonrpc: "2.0", method: "notifications/tools/list_changed" });
    expect(await toolNames(agent, "l3")).toContain("echo");
    expect((await callEcho(agent, "c3", null)).reply.result.content[0].text).toBe('{"said":"c3"}');
  });

  test.each([
    ["inputSchema", ["inputSchema"]],
    ["annotations", ["annotations"]],
  ])("a changed %s is caught like a changed description", async (field, changed) => {
    using dir = tempDir();
    const { agent } = await session(dir.path, { serverArgs: ["--drift-after", "1", "--drift", field], elicitation: false });
    await toolNames(agent, "l1");
    await callEcho(agent, "c1", null);
    expect(await toolNames(agent, "l2")).not.toContain("echo");
    expect((await callEcho(agent, "c2", null)).reply.error).toMatchObject({ code: -32011, data: { reason: "definition_changed", changed } });
  });

  test("development: the change is logged WOULD_BLOCK and the tool stays listed and callable", async () => {
    using dir = tempDir();
    const { agent, events } = await session(dir.path, { profile: "development", elicitation: false });
    await toolNames(agent, "l1");
    await callEcho(agent, "c1", null);
    expect(await toolNames(agent, "l2")).toContain("echo");
    expect((await callEcho(agent, "c2", null)).reply.result.content[0].text).toBe('{"said":"c2"}');
    expect(await waitFor(() => events().find((e) => e.type === "definition_changed"), "definition_changed")).toMatchObject({ action: "would_block" });
    expect(agent.stderr).toContain("WOULD_BLOCK tools/call echo: its definition changed since it was pinned (description)");
  });

  test("pin: warn logs the change and passes; pin: off pins nothing", async () => {
    using dir = tempDir();
    const warn = await session(dir.path, { policy: "schema: 1\nsources:\n  - { id: scripted, pin: warn }\n", elicitation: false });
    await toolNames(warn.agent, "l1");
    await callEcho(warn.agent, "c1", null);
    expect(await toolNames(warn.agent, "l2")).toContain("echo");
    expect((await callEcho(warn.agent, "c2", null)).reply.result).toBeDefined();
    expect(await waitFor(() => warn.events().find((e) => e.type === "definition_changed"), "definition_changed")).toMatchObject({ action: "warned" });
    await warn.agent.close();

    using other = tempDir();
    const off = await session(other.path, { policy: "schema: 1\npins: { mode: off }\n", elicitation: false });
    await toolNames(off.agent, "l1");
    await off.agent.close();
    const pins = join(other.path, "state", "thoughtgate", "pins");
    expect(existsSync(pins) ? readdirSync(pins) : []).toEqual([]);
  });
});

describe("thoughtgate pins reset", () => {
  // A benign change (a new parameter), so what is pinned afresh raises no finding of its own.
  const drifting = (marker: string) => ({ serverArgs: ["--drift", "inputSchema", "--drift-when-exists", marker], elicitation: false });

  /** Pin echo, then start a session in which the server serves a changed echo: it is refused. */
  async function refusedAfterChange(dir: string): Promise<string> {
    const marker = join(dir, "drifted");
    const first = await session(dir, drifting(marker));
    expect(await toolNames(first.agent, "l1")).toContain("echo");
    await first.agent.close();
    writeFileSync(marker, "");
    const changed = await session(dir, drifting(marker));
    expect(await toolNames(changed.agent, "l2")).not.toContain("echo");
    expect((await callEcho(changed.agent, "c2", null)).reply.error).toMatchObject({ code: -32011, data: { reason: "definition_changed", changed: ["inputSchema"] } });
    await changed.agent.close();
    return marker;
  }

  test.each([
    ["SERVER forgets every pin of the server", ["scripted"], 6, 6],
    ["SERVER NAME forgets only that definition", ["scripted", "echo"], 1, 6],
  ])("%s: the next session pins afresh, and the changed definition is listed and runs", async (_what, target, forgotten, pinnedAfter) => {
    using dir = tempDir();
    const marker = await refusedAfterChange(dir.path);

    const reset = await runBinary(["pins", "reset", ...target], { env: env(dir.path) });
    expect(reset.exitCode).toBe(0);
    const lines = reset.stdout.trimEnd().split("\n");
    expect(lines).toHaveLength(forgotten);
    expect(lines).toContain("reset: pinned afresh when next seen: tool scripted.echo");

    const { agent, events } = await session(dir.path, drifting(marker));
    expect(await toolNames(agent, "l3")).toContain("echo");
    expect((await callEcho(agent, "c3", null)).reply.result?.content?.[0]?.text).toBe('{"said":"c3"}');
    expect(await waitFor(() => events().find((e) => e.type === "definition_pinned" && e.name === "echo"), "echo pinned afresh")).toBeDefined();
    expect(events().filter((e) => e.type === "definition_changed")).toEqual([]);

    // The pin is what the server serves now, trusted on first use again.
    const shown = await runBinary(["pins", "show", "scripted", "echo", "--json"], { env: env(dir.path) });
    const [server] = JSON.parse(shown.stdout) as Array<{ definitions: Array<Record<string, any>> }>;
    expect(server?.definitions).toEqual([expect.objectContaining({ name: "echo", status: "pinned", accepted_by: null, definition: expect.objectContaining({ inputSchema: { type: "object", properties: { note: expect.any(Object) } } }) })]);
    expect((await runBinary(["pins", "list"], { env: env(dir.path) })).stdout).toStartWith(`scripted  ${pinnedAfter} pinned, 0 changed, 0 flagged`);
  });

  test("a server or a name with no pins is a one-line error, exit 1, and no pin is touched", async () => {
    using dir = tempDir();
    const { agent } = await session(dir.path, { elicitation: false });
    await toolNames(agent, "l1");
    await agent.close();
    const pinsBefore = readdirSync(join(dir.path, "state", "thoughtgate", "pins")).map((name) => readFileSync(join(dir.path, "state", "thoughtgate", "pins", name), "utf8"));

    const unknownServer = await runBinary(["pins", "reset", "scripted-typo"], { env: env(dir.path) });
    expect(unknownServer).toMatchObject({ exitCode: 1, stdout: "" });
    expect(unknownServer.stderr.trim().split("\n")).toEqual(['[error] no pins for server "scripted-typo" (`thoughtgate pins list` shows the servers)']);

    const unknownName = await runBinary(["pins", "reset", "scripted", "ecoh"], { env: env(dir.path) });
    expect(unknownName).toMatchObject({ exitCode: 1, stdout: "" });
    expect(unknownName.stderr.trim().split("\n")).toEqual(['[error] server "scripted" has no pinned definition named "ecoh"']);

    const pinsAfter = readdirSync(join(dir.path, "state", "thoughtgate", "pins")).map((name) => readFileSync(join(dir.path, "state", "thoughtgate", "pins", name), "utf8"));
    expect(pinsAfter).toEqual(pinsBefore);
  });

  test("a pin file that cannot be read blocks every tool until `pins reset SERVER`, which starts the pins afresh", async () => {
    using dir = tempDir();
    const first = await session(dir.path, { serverArgs: [], elicitation: false });
    await toolNames(first.agent, "l1");
    await first.agent.close();
    const pins = join(dir.path, "state", "thoughtgate", "pins");
    const [file] = readdirSync(pins);
    writeFileSync(join(pins, String(file)), "{truncated");

    const blocked = await session(dir.path, { serverArgs: [], elicitation: false });
    expect(await toolNames(blocked.agent, "l2")).toEqual([]);
    expect((await callEcho(blocked.agent, "c2", null)).reply.error).toMatchObject({ code: -32011, data: { reason: "definition_changed" } });
    await blocked.agent.close();

    // Only the whole server can be reset: its file cannot be edited.
    const one = await runBinary(["pins", "reset", "scripted", "echo"], { env: env(dir.path) });
    expect(one.exitCode).toBe(1);
    expect(one.stderr).toContain("thoughtgate pins reset scripted");
    const reset = await runBinary(["pins", "reset", "scripted"], { env: env(dir.path) });
    expect(reset.stderr).toBe("");
    expect(reset).toMatchObject({ exitCode: 0, stdout: `reset: removed the unreadable pin file ${join(pins, String(file))}\n` });

    const again = await session(dir.path, { serverArgs: [], elicitation: false });
    expect(await toolNames(again.agent, "l3")).toContain("echo");
    expect((await callEcho(again.agent, "c3", null)).reply.result?.content?.[0]?.text).toBe('{"said":"c3"}');
  });
});
