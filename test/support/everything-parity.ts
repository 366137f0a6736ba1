/**
 * Conformance against the reference "everything" server: the real SDK client runs every scenario
 * twice, once straight to the server and once through the compiled `thoughtgate shim`, and the
 * agent must not be able to tell the difference. The server is a stdio child
 * (`test/e2e/sdk-everything.test.ts`) or the same server over Streamable HTTP
 * (`test/e2e/remote-sdk-everything.test.ts`: the direct route speaks HTTP, the shim route runs
 * `shim --url`).
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import type { Client } from "@modelcontextprotocol/sdk/client/index.js";
import {
  CreateMessageRequestSchema,
  ElicitRequestSchema,
  ListRootsRequestSchema,
  LoggingMessageNotificationSchema,
  ResourceUpdatedNotificationSchema,
  type CreateMessageRequest,
  type ElicitRequest,
  type Root,
} from "@modelcontextprotocol/sdk/types.js";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { gunzipSync } from "node:zlib";
import { readEvents, tempDir, waitFor } from "./harness.ts";
import {
  auditProblems,
  callTool,
  closeAndListSurvivors,
  connect,
  finalEvents,
  killLeftovers,
  serverPidBehindShim,
  sha256Hex,
  type Connection,
  type Route,
} from "./mcp-sdk.ts";


/** The server both routes reach: a command (stdio) or a URL (Streamable HTTP). */
export type ServerUnderTest = { command?: string[]; url?: string };

export type ParityOptions = {
  title: string;
  /** Start the server for one route (or just name it); called once per route before the scenarios. */
  start: (route: Route) => Promise<ServerUnderTest>;
  stop?: () => Promise<void>;
  /**
   * Whether the server keeps a session across requests. Without one (a stateless HTTP server) it
   * cannot send the client requests (sampling, elicitation, roots), keep subscriptions or its own
   * resources, or run task tools: those scenarios are not part of the suite, on either route.
   */
  sessions: boolean;
};

/** Tools the server registers only for a client that declared the matching capability in its session. */
const NEEDS_SESSION = new Set(["get-roots-list", "trigger-elicitation-request", "trigger-url-elicitation", "trigger-sampling-request", "simulate-research-query"]);
/** What the client saw arrive from the server, besides responses. */
type Observed = {
  samplingRequests: Array<CreateMessageRequest["params"]>;
  elicitations: Array<ElicitRequest["params"]>;
  rootsRequests: number;
  updatedUris: string[];
  logMessages: string[];
};

type Session = Connection & { observed: Observed; roots: Root[] };

const WORKSPACE_ROOT: Root = { uri: "file:///workspace/thoughtgate-e2e", name: "e2e workspace" };
const SECOND_ROOT: Root = { uri: "file:///workspace/second", name: "second workspace" };

async function open(route: Route, dir: string, server: ServerUnderTest): Promise<Session> {
  const observed: Observed = { samplingRequests: [], elicitations: [], rootsRequests: 0, updatedUris: [], logMessages: [] };
  const roots: Root[] = [WORKSPACE_ROOT];
  // What is compared is the proxy, not a policy: every call forwarded. (The embedded default asks
  // before server-everything's tools that reach the open world, such as gzip-file-as-resource.)
  const policy = join(dir, "forward-everything.yaml");
  writeFileSync(policy, "schema: 1\ngovernance: { defaults: { action: forward } }\n");
  const connection = await connect({
    route,
    policy,
    server: server.command ?? [],
    ...(server.url === undefined ? {} : { url: server.url }),
    serverId: "everything",
    dir,
    capabilities: { sampling: {}, elicitation: { form: {}, url: {} }, roots: { listChanged: true } },
    setup: (client) => answerServerRequests(client, observed, roots),
  });
  return { ...connection, observed, roots };
}

/** The client side of sampling, elicitation and roots: fixed answers, so both routes match. */
function answerServerRequests(client: Client, observed: Observed, roots: Root[]): void {
  client.setRequestHandler(CreateMessageRequestSchema, (request) => {
    observed.samplingRequests.push(request.params);
    const first = request.params.messages[0]?.content;
    const prompt = first && "text" in first ? String(first.text) : "";
    return { model: "e2e-model", role: "assistant", content: { type: "text", text: `You asked: ${prompt}` }, stopReason: "endTurn" };
  });
  client.setRequestHandler(ElicitRequestSchema, (request) => {
    observed.elicitations.push(request.params);
    if (request.params.mode === "url") return { action: "accept" };
    return { action: "accept", content: { name: "Ada Lovelace", check: true, email: "ada@example.com", integer: 7, number: 2.5 } };
  });
  client.setRequestHandler(ListRootsRequestSchema, () => {
    observed.rootsRequests += 1;
    return { roots: [...roots] };
  });
  client.setNotificationHandler(ResourceUpdatedNotificationSchema, (notification) => {
    observed.updatedUris.push(notification.params.uri);
  });
  client.setNotificationHandler(LoggingMessageNotificationSchema, (notification) => {
    observed.logMessages.push(typeof notification.params.data === "string" ? notification.params.data : JSON.stringify(notification.params.data));
  });
}

const TIME_OF_DAY = /\b\d{1,2}:\d{2}:\d{2}(?:\s?[AP]M)?/g;
/** Over HTTP the server names its session (a random UUID) in some answers. */
const SESSION_ID = /\bsession [0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}\b/g;

/**
 * Only what legitimately differs between two runs of the same server is normalised: the
 * dynamic resources stamp `toLocaleTimeString()` into their text (and into base64 blobs of
 * text), which can tick between the direct and the shim run, task ids are random UUIDs, and so
 * are the session ids an HTTP server names in some answers.
 * Nothing else is touched.
 */
function normalise(value: unknown, key?: string): unknown {
  if (key === "taskId" && typeof value === "string") return "<task id>";
  if (typeof value === "string") {
    if (key === "blob") {
      const text = decodeUtf8(Buffer.from(value, "base64"));
      return text === null ? value : Buffer.from(text.replace(TIME_OF_DAY, "<time>")).toString("base64");
    }
    return value.replace(TIME_OF_DAY, "<time>").replace(SESSION_ID, "session <id>");
  }
  if (Array.isArray(value)) return value.map((item) => normalise(item));
  if (value !== null && typeof value === "object") {
    return Object.fromEntries(Object.entries(value).map(([name, item]) => [name, normalise(item, name)]));
  }
  return value;
}

function decodeUtf8(bytes: Uint8Array): string | null {
  try {
    return new TextDecoder("utf-8", { fatal: true }).decode(bytes);
  } catch {
    return null;
  }
}

/** A rejection as the agent sees it: its class, code and message. */
async function outcome<T>(promise: Promise<T>): Promise<T | { rejected: { name: string; code: unknown; message: string } }> {
  try {
    return await promise;
  } catch (error) {
    if (error instanceof Error) return { rejected: { name: error.name, code: (error as { code?: unknown }).code, message: error.message } };
    return { rejected: { name: typeof error, code: undefined, message: String(error) } };
  }
}

/** A deterministic, non-repeating payload of `bytes` UTF-8 bytes mixing 1- to 4-byte characters. */
function payloadOf(bytes: number): string {
  const alphabet = ["a", "Z", "7", " ", "é", "ß", "€", "中", "𝄞", "😀", "\\", '"', "\t"];
  const parts: string[] = [];
  let size = 0;
  let state = 0x2545f491;
  while (size < bytes) {
    state = (Math.imul(state, 1103515245) + 12345) >>> 0;
    const char = alphabet[state % alphabet.length] as string;
    const width = Buffer.byteLength(char);
    if (size + width > bytes) break;
    parts.push(char);
    size += width;
  }
  return parts.join("");
}

/** A tools/call with arguments that satisfy the tool's input schema, per tool the server lists. */
const CALL_EVERY_TOOL: Record<string, (session: Session) => Promise<unknown>> = {
  echo: (s) => callTool(s, { name: "echo", arguments: { message: "hello through the gate" } }),
  "get-annotated-message": (s) => callTool(s, { name: "get-annotated-message", arguments: { messageType: "error", includeImage: true } }),
  "get-env": (s) => callTool(s, { name: "get-env", arguments: {} }),
  "get-resource-links": (s) => callTool(s, { name: "get-resource-links", arguments: { count: 4 } }),
  "get-resource-reference": (s) => callTool(s, { name: "get-resource-reference", arguments: { resourceType: "Blob", resourceId: 3 } }),
  "get-structured-content": (s) => callTool(s, { name: "get-structured-content", arguments: { location: "Chicago" } }),
  "get-sum": (s) => callTool(s, { name: "get-sum", arguments: { a: 2, b: 3 } }),
  "get-tiny-image": (s) => callTool(s, { name: "get-tiny-image", arguments: {} }),
  "gzip-file-as-resource": async (s) => {
    const data = `data:text/plain;base64,${Buffer.from("compress me, please ".repeat(50)).toString("base64")}`;
    return callTool(s, { name: "gzip-file-as-resource", arguments: { name: "every-tool.txt.gz", data, outputType: "resource" } });
  },
  // Toggled twice so the server ends where it started; each answer says what it did.
  "toggle-simulated-logging": async (s) => [
    await callTool(s, { name: "toggle-simulated-logging", arguments: {} }),
    await callTool(s, { name: "toggle-simulated-logging", arguments: {} }),
  ],
  "toggle-subscriber-updates": async (s) => [
    await callTool(s, { name: "toggle-subscriber-updates", arguments: {} }),
    await callTool(s, { name: "toggle-subscriber-updates", arguments: {} }),
  ],
  "trigger-long-running-operation": (s) =>
    callTool(s, { name: "trigger-long-running-operation", arguments: { duration: 0.2, steps: 2 } }),
  "get-roots-list": (s) => callTool(s, { name: "get-roots-list", arguments: {} }),
  "trigger-elicitation-request": (s) => callTool(s, { name: "trigger-elicitation-request", arguments: {} }),
  "trigger-url-elicitation": (s) =>
    callTool(s, {
      name: "trigger-url-elicitation",
      arguments: { url: "https://example.com/consent", elicitationId: "e2e-url-elicitation" },
    }),
  "trigger-sampling-request": (s) => callTool(s, { name: "trigger-sampling-request", arguments: { prompt: "every tool", maxTokens: 20 } }),
  // A task-only tool (SEP-1686): the SDK calls it as a task and polls until the result is ready.
  "simulate-research-query": async (s) => {
    const args = { topic: "stdio proxies", ambiguous: false };
    s.toolCalls.push({ name: "simulate-research-query", arguments: args });
    const kinds: string[] = [];
    let result: unknown;
    for await (const message of s.client.experimental.tasks.callToolStream({ name: "simulate-research-query", arguments: args })) {
      if (kinds.at(-1) !== message.type) kinds.push(message.type);
      if (message.type === "result") result = message.result;
      if (message.type === "error") throw message.error;
    }
    // Task ids are random and the number of polls depends on timing: compare the shape and the result.
    return { kinds: [kinds[0], kinds.at(-1)], result };
  },
};

export function everythingParity(options: ParityOptions): void {
describe(options.title, () => {
  const dir = tempDir("thoughtgate-sdk-everything-");
  let direct: Session;
  let shim: Session;
  let shimServerPid: number | null = null;

  /** Scenarios that need the server to keep a session (its requests to the client, subscriptions, its own resources). */
  const sessionTest = options.sessions ? test : (_name: string, _fn: () => Promise<void>) => {};

  /** Run one scenario on both routes at once; the shim's answer must equal the direct one. */
  async function both<T>(scenario: (session: Session) => Promise<T>): Promise<{ direct: T; shim: T }> {
    const [viaDirect, viaShim] = await Promise.all([scenario(direct), scenario(shim)]);
    expect(normalise(viaShim)).toEqual(normalise(viaDirect));
    return { direct: viaDirect, shim: viaShim };
  }

  beforeAll(async () => {
    [direct, shim] = await Promise.all([open("direct", dir.path, await options.start("direct")), open("shim", dir.path, await options.start("shim"))]);
    shimServerPid = await serverPidBehindShim(shim);
  });

  afterAll(async () => {
    // Also when a test failed or was filtered out: close, then end whatever the close left behind.
    const closing = [direct && closeAndListSurvivors(direct, null), shim && closeAndListSurvivors(shim, shimServerPid)];
    for (const survivors of await Promise.all(closing)) killLeftovers(survivors ?? []);
    await options.stop?.();
    dir[Symbol.dispose]();
  });

  test("initialize: same server info, capabilities and instructions", async () => {
    const { direct: info } = await both(async (s) => ({
      server: s.client.getServerVersion(),
      capabilities: s.client.getServerCapabilities(),
      instructions: s.client.getInstructions(),
    }));
    expect(info.server?.name).toBe("mcp-servers/everything");
    expect(info.capabilities?.resources?.subscribe).toBe(true);
  });

  test("every listed tool answers the same through the shim", async () => {
    const { direct: listed } = await both((s) => s.client.listTools());
    const names = listed.tools.map((tool) => tool.name).sort();
    // A tool the table does not know is a new server feature this suite must learn to call.
    expect(names).toEqual(Object.keys(CALL_EVERY_TOOL).filter((tool) => options.sessions || !NEEDS_SESSION.has(tool)).sort());
    for (const name of names) {
      const call = CALL_EVERY_TOOL[name] as (session: Session) => Promise<unknown>;
      const { direct: answer } = await both(call);
      expect({ name, answer }).not.toMatchObject({ name, answer: { isError: true } });
    }
  });

  test("the tools' own answers are the ones the server gives", async () => {
    const { direct: sum } = await both((s) => callTool(s, { name: "get-sum", arguments: { a: 40, b: 2 } }));
    expect(sum.content).toEqual([{ type: "text", text: "The sum of 40 and 2 is 42." }]);
    const { direct: weather } = await both((s) => callTool(s, { name: "get-structured-content", arguments: { location: "New York" } }));
    expect(weather.structuredContent).toEqual({ temperature: 33, conditions: "Cloudy", humidity: 82 });
  });

  test("progress notifications reach the caller in order, before the result", async () => {
    const { direct: run } = await both(async (s) => {
      const before = s.notifications.length;
      let reported = 0;
      const result = await callTool(
        s,
        { name: "trigger-long-running-operation", arguments: { duration: 0.6, steps: 3 } },
        { onprogress: () => (reported += 1) },
      );
      // Read off the wire: the SDK itself drops a last progress that shares a read with the result.
      const progress = s.notifications
        .slice(before)
        .filter((notification) => notification.method === "notifications/progress")
        .map(({ params }) => ({ progress: params?.progress, total: params?.total }));
      return { result, progress, reachedOnprogress: reported >= 2 };
    });
    expect(run.progress).toEqual([
      { progress: 1, total: 3 },
      { progress: 2, total: 3 },
      { progress: 3, total: 3 },
    ]);
  });

  sessionTest("sampling: the server's createMessage reaches the client and its answer reaches the tool", async () => {
    const { direct: run } = await both(async (s) => {
      const before = s.observed.samplingRequests.length;
      const result = await callTool(s, { name: "trigger-sampling-request", arguments: { prompt: "what is a gate?", maxTokens: 42 } });
      return { result, requests: s.observed.samplingRequests.slice(before) };
    });
    expect(run.requests).toHaveLength(1);
    expect(run.requests[0]?.maxTokens).toBe(42);
    const text = (run.result.content as Array<{ text?: string }>)[0]?.text ?? "";
    expect(text).toContain("You asked: Resource trigger-sampling-request context: what is a gate?");
  });

  sessionTest("elicitation: form and URL requests reach the client and its answers reach the tool", async () => {
    const { direct: run } = await both(async (s) => {
      const before = s.observed.elicitations.length;
      const form = await callTool(s, { name: "trigger-elicitation-request", arguments: {} });
      const url = await callTool(s, {
        name: "trigger-url-elicitation",
        arguments: { url: "https://example.com/authorize", elicitationId: "e2e-elicitation" },
      });
      return { form, url, requests: s.observed.elicitations.slice(before) };
    });
    expect(run.requests.map((request) => request.mode ?? "form")).toEqual(["form", "url"]);
    expect(JSON.stringify(run.form.content)).toContain("Name: Ada Lovelace");
    expect(JSON.stringify(run.url.content)).toContain("User completed the URL elicitation flow");
  });

  sessionTest("roots: the server lists the client's roots and follows roots/list_changed", async () => {
    const { direct: run } = await both(async (s) => {
      const first = await callTool(s, { name: "get-roots-list", arguments: {} });
      const asked = s.observed.rootsRequests;
      s.roots.push(SECOND_ROOT);
      await s.client.sendRootsListChanged();
      await waitFor(() => s.observed.logMessages.some((line) => line.includes("2 root(s)")), `${s.route}: the server re-reading the roots`);
      const second = await callTool(s, { name: "get-roots-list", arguments: {} });
      s.roots.pop();
      return { first, second, askedAgain: s.observed.rootsRequests > asked };
    });
    expect(JSON.stringify(run.first.content)).toContain(WORKSPACE_ROOT.uri);
    expect(JSON.stringify(run.second.content)).toContain(SECOND_ROOT.uri);
    expect(run.askedAgain).toBe(true);
  });

  test("resources: list, templates and reads of static, text and blob resources", async () => {
    const { direct: run } = await both(async (s) => {
      const listed = await s.client.listResources();
      const templates = await s.client.listResourceTemplates();
      const firstStatic = listed.resources[0]?.uri ?? "missing";
      return {
        listed,
        templates,
        staticDoc: await s.client.readResource({ uri: firstStatic }),
        text: await s.client.readResource({ uri: "demo://resource/dynamic/text/5" }),
        blob: await s.client.readResource({ uri: "demo://resource/dynamic/blob/6" }),
        missing: await outcome(s.client.readResource({ uri: "demo://resource/dynamic/text/not-a-number" })),
      };
    });
    expect(run.listed.resources.length).toBeGreaterThan(0);
    expect(run.templates.resourceTemplates.map((template) => template.uriTemplate).sort()).toEqual([
      "demo://resource/dynamic/blob/{resourceId}",
      "demo://resource/dynamic/text/{resourceId}",
    ]);
    expect(JSON.stringify(run.text.contents)).toContain("Resource 5: This is a plaintext resource");
    expect(run.missing).toMatchObject({ rejected: { name: "McpError" } });
  });

  sessionTest("subscribe: notifications/resources/updated arrives for the subscribed resource", async () => {
    const uri = "demo://resource/dynamic/text/1";
    await both(async (s) => {
      const subscribed = await s.client.subscribeResource({ uri });
      const on = await callTool(s, { name: "toggle-subscriber-updates", arguments: {} });
      await waitFor(() => s.observed.updatedUris.includes(uri), `${s.route}: notifications/resources/updated for ${uri}`);
      const off = await callTool(s, { name: "toggle-subscriber-updates", arguments: {} });
      const unsubscribed = await s.client.unsubscribeResource({ uri });
      return { subscribed, on, off, unsubscribed, updated: [...new Set(s.observed.updatedUris)] };
    });
  });

  test("prompts: list and get, with and without arguments and embedded resources", async () => {
    const { direct: run } = await both(async (s) => ({
      listed: await s.client.listPrompts(),
      simple: await s.client.getPrompt({ name: "simple-prompt" }),
      args: await s.client.getPrompt({ name: "args-prompt", arguments: { city: "Lisbon", state: "Lisboa" } }),
      team: await s.client.getPrompt({ name: "completable-prompt", arguments: { department: "Sales", name: "Eve" } }),
      resource: await s.client.getPrompt({ name: "resource-prompt", arguments: { resourceType: "Text", resourceId: "2" } }),
      invalid: await outcome(s.client.getPrompt({ name: "resource-prompt", arguments: { resourceType: "Video", resourceId: "2" } })),
    }));
    expect(run.listed.prompts.map((prompt) => prompt.name).sort()).toEqual(["args-prompt", "completable-prompt", "resource-prompt", "simple-prompt"]);
    expect(run.args.messages[0]?.content).toEqual({ type: "text", text: "What's weather in Lisbon, Lisboa?" });
    expect(run.invalid).toMatchObject({ rejected: { name: "McpError" } });
  });

  test("completion: prompt arguments (with context) and resource template variables", async () => {
    const { direct: run } = await both(async (s) => ({
      department: await s.client.complete({ ref: { type: "ref/prompt", name: "completable-prompt" }, argument: { name: "department", value: "E" } }),
      member: await s.client.complete({
        ref: { type: "ref/prompt", name: "completable-prompt" },
        argument: { name: "name", value: "" },
        context: { arguments: { department: "Engineering" } },
      }),
      resourceId: await s.client.complete({
        ref: { type: "ref/resource", uri: "demo://resource/dynamic/text/{resourceId}" },
        argument: { name: "resourceId", value: "12" },
      }),
    }));
    expect(run.department.completion.values).toEqual(["Engineering"]);
    expect(run.member.completion.values).toEqual(["Alice", "Bob", "Charlie"]);
    expect(run.resourceId.completion.values).toEqual(["12"]);
  });

  test("ping and logging/setLevel", async () => {
    const { direct: run } = await both(async (s) => ({ ping: await s.client.ping(), level: await s.client.setLoggingLevel("warning") }));
    expect(run).toEqual({ ping: {}, level: {} });
  });

  test("cancellation: an aborted call rejects with the abort reason and the connection keeps working", async () => {
    const { direct: run } = await both(async (s) => {
      const controller = new AbortController();
      const aborted = await outcome(
        callTool(
          s,
          { name: "trigger-long-running-operation", arguments: { duration: 3, steps: 3 } },
          // Abort once the server is demonstrably working on it (its first progress report).
          { signal: controller.signal, onprogress: () => controller.abort(new Error("the user pressed stop")) },
        ),
      );
      const ping = await s.client.ping();
      const after = await callTool(s, { name: "echo", arguments: { message: "still here" } });
      return { aborted, ping, after };
    });
    // The SDK turns the abort reason into a RequestTimeout-coded McpError carrying the reason.
    expect(run.aborted).toEqual({ rejected: { name: "McpError", code: -32001, message: "MCP error -32001: Error: the user pressed stop" } });
    expect(run.after.content).toEqual([{ type: "text", text: "Echo: still here" }]);
  });

  test("a 5 MiB payload goes out and comes back intact", async () => {
    const message = payloadOf(5 * 1024 * 1024);
    expect(Buffer.byteLength(message)).toBeGreaterThan(5 * 1024 * 1024 - 4);
    const expected = `Echo: ${message}`;
    const { direct: echoed } = await both(async (s) => {
      const result = await callTool(s, { name: "echo", arguments: { message } });
      const text = (result.content as Array<{ text?: string }>)[0]?.text ?? "";
      // Compared as length + digest so a mismatch does not print 10 MiB.
      return { bytes: Buffer.byteLength(text), sha256: sha256Hex(text) };
    });
    expect(echoed).toEqual({ bytes: Buffer.byteLength(expected), sha256: sha256Hex(expected) });
    // Without a session the server that compressed the file is gone before the read.
    if (!options.sessions) return;

    // And a 5 MiB file the server compresses, returned as a resource the client reads back.
    const file = payloadOf(5 * 1024 * 1024 - 64);
    const data = `data:application/octet-stream;base64,${Buffer.from(file).toString("base64")}`;
    const { direct: roundTrip } = await both(async (s) => {
      await callTool(s, { name: "gzip-file-as-resource", arguments: { name: "big.txt.gz", data, outputType: "resourceLink" } });
      const read = await s.client.readResource({ uri: "demo://resource/session/big.txt.gz" });
      const blob = (read.contents[0] as { blob?: string } | undefined)?.blob ?? "";
      return sha256Hex(gunzipSync(Buffer.from(blob, "base64")).toString("utf8"));
    });
    expect(roundTrip).toBe(sha256Hex(file));
  });

  test("the audit log records the call the agent cancelled as cancelled", async () => {
    const eventsPath = shim.eventsPath as string;
    // The cancellation test's call is the last trigger-long-running-operation the shim saw.
    const start = readEvents(eventsPath).findLast((event) => event.type === "tool_call_start" && event.tool === "trigger-long-running-operation");
    expect(start).toBeDefined();
    // The server (as the spec asks) never answers a cancelled request, so only the agent's
    // notifications/cancelled can close this call in the log.
    const end = await waitFor(
      () => readEvents(eventsPath).find((event) => event.type === "tool_call_end" && event.call_id === start?.call_id),
      "tool_call_end for the cancelled call",
      5_000,
    ).catch(() => undefined);
    expect({ end: end ?? null }).toMatchObject({ end: { tool: "trigger-long-running-operation", status: "cancelled" } });
  });

  test("closing the client leaves no process behind", async () => {
    // This session ran a task tool, so the server holds a 5-minute task TTL timer and does not
    // exit on stdin EOF alone: the staged shutdown has to end it.
    const [directSurvivors, shimSurvivors] = await Promise.all([
      closeAndListSurvivors(direct, null),
      closeAndListSurvivors(shim, shimServerPid),
    ]);
    expect({ directSurvivors, shimSurvivors }).toEqual({ directSurvivors: [], shimSurvivors: [] });
  });

  test("the audit log accounts for every tools/call, seq 1, 2, 3… through run_end", async () => {
    await shim.client.close();
    const events = await finalEvents(shim);
    expect(auditProblems(events, shim.toolCalls)).toEqual([]);
  });
});
}
