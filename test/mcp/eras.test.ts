/**
 * The two MCP eras on the wire, without ThoughtGate in between: raw NDJSON to the 2026-07-28
 * fixture (tmcp) and to the initialize-era fixture (SDK 1.x), checked against what the
 * specification says each must answer. The shim's tests build on these fixtures.
 */
import { describe, expect, test } from "bun:test";
import type { Subprocess } from "bun";
import { fixture } from "../support/harness.ts";

const TEST_TIMEOUT_MS = 30_000;
const MODERN = "2026-07-28";

type Message = {
  jsonrpc?: string;
  id?: string | number;
  method?: string;
  params?: any;
  result?: any;
  error?: { code: number; message: string; data?: any };
};

/** A client that writes NDJSON to a server's stdin and reads its stdout line by line. */
class Peer {
  private readonly proc: Subprocess<"pipe", "pipe", "pipe">;
  private readonly lines: string[] = [];
  private stdoutDone = false;
  private wake: () => void = () => {};
  private stderr = "";
  /** Every line the server wrote, in order. */
  readonly received: Message[] = [];

  constructor(command: string[]) {
    this.proc = Bun.spawn(command, { stdin: "pipe", stdout: "pipe", stderr: "pipe" });
    void this.read();
    void new Response(this.proc.stderr).text().then((text) => (this.stderr = text));
  }

  send(message: Message): void {
    this.proc.stdin.write(`${JSON.stringify({ jsonrpc: "2.0", ...message })}\n`);
    this.proc.stdin.flush();
  }

  /** The next message the server writes. */
  async next(timeoutMs = 10_000): Promise<Message> {
    const deadline = performance.now() + timeoutMs;
    while (this.lines.length === 0) {
      if (this.stdoutDone) throw new Error(`server closed stdout; stderr:\n${this.stderr}`);
      if (performance.now() > deadline) throw new Error(`no message within ${timeoutMs} ms; stderr:\n${this.stderr}`);
      await new Promise<void>((resolve) => {
        this.wake = resolve;
        setTimeout(resolve, 50);
      });
    }
    return JSON.parse(this.lines.shift() as string) as Message;
  }

  /** Send a request and read until its response; messages before it are returned too. */
  async request(id: string | number, method: string, params?: unknown): Promise<{ response: Message; before: Message[] }> {
    this.send({ id, method, ...(params === undefined ? {} : { params }) });
    const before: Message[] = [];
    for (;;) {
      const message = await this.next();
      if (message.id === id && message.method === undefined) return { response: message, before };
      before.push(message);
    }
  }

  async close(): Promise<number> {
    this.proc.stdin.end();
    return this.proc.exited;
  }

  async [Symbol.asyncDispose](): Promise<void> {
    this.proc.stdin.end();
    const exited = await Promise.race([this.proc.exited, Bun.sleep(3_000).then(() => null)]);
    if (exited === null) this.proc.kill("SIGKILL");
  }

  private async read(): Promise<void> {
    let buffered = "";
    const decoder = new TextDecoder();
    for await (const chunk of this.proc.stdout) {
      buffered += decoder.decode(chunk, { stream: true });
      let end: number;
      while ((end = buffered.indexOf("\n")) !== -1) {
        const line = buffered.slice(0, end);
        buffered = buffered.slice(end + 1);
        this.lines.push(line);
        this.received.push(JSON.parse(line) as Message);
      }
      this.wake();
    }
    this.stdoutDone = true;
    this.wake();
  }
}

/** The `_meta` every 2026-07-28 request carries. */
function meta(capabilities: Record<string, unknown> = {}, version = MODERN): Record<string, unknown> {
  return {
    "io.modelcontextprotocol/protocolVersion": version,
    "io.modelcontextprotocol/clientCapabilities": capabilities,
    "io.modelcontextprotocol/clientInfo": { name: "eras-test", version: "1.0.0" },
  };
}

const ELICIT = { elicitation: { form: {} } };
/** Codes that mark a server as of the 2026-07-28 era (a dual-era client does not fall back on them). */
const MODERN_ERRORS = [-32020, -32021, -32022];

function tmcpFixture(era: "modern" | "dual"): Peer {
  return new Peer(fixture("tmcp-server-fixture.ts", "--era", era));
}

function text(result: any): string {
  return result.content.map((block: { text: string }) => block.text).join("");
}

describe("tmcp fixture, --era modern (2026-07-28 only)", () => {
  test("server/discover advertises the version, capabilities and identity", async () => {
    await using server = tmcpFixture("modern");
    const { response } = await server.request("d-1", "server/discover", { _meta: meta() });
    expect(response.result).toMatchObject({
      resultType: "complete",
      supportedVersions: [MODERN],
      capabilities: { tools: {}, resources: {}, prompts: {} },
      _meta: { "io.modelcontextprotocol/serverInfo": { name: "tmcp-server-fixture", version: "1.0.0" } },
    });
    expect(typeof response.result.ttlMs).toBe("number");
    expect(["public", "private"]).toContain(response.result.cacheScope);
  }, TEST_TIMEOUT_MS);

  test("initialize is refused with an error that names the supported version", async () => {
    await using server = tmcpFixture("modern");
    const { response } = await server.request(1, "initialize", {
      protocolVersion: "2025-11-25",
      capabilities: {},
      clientInfo: { name: "legacy", version: "1" },
    });
    expect(response.error?.code).toBe(-32601);
    expect(response.error?.data).toEqual({ supported: [MODERN] });
    expect(response.error?.message).toContain(MODERN);
  }, TEST_TIMEOUT_MS);

  test("a request without the per-request _meta is malformed (-32602); with only part of it too", async () => {
    await using server = tmcpFixture("modern");
    expect((await server.request(1, "tools/list")).response.error?.code).toBe(-32602);
    expect((await server.request(2, "ping")).response.error?.code).toBe(-32602);
    const partial = { _meta: { "io.modelcontextprotocol/protocolVersion": MODERN } };
    expect((await server.request(3, "tools/list", partial)).response.error?.code).toBe(-32602);
  }, TEST_TIMEOUT_MS);

  test("an unsupported version gets UnsupportedProtocolVersionError with the supported list", async () => {
    await using server = tmcpFixture("modern");
    const { response } = await server.request(1, "tools/list", { _meta: meta({}, "1900-01-01") });
    expect(response.error?.code).toBe(-32022);
    expect(response.error?.data).toEqual({ supported: [MODERN], requested: "1900-01-01" });
  }, TEST_TIMEOUT_MS);

  test("tools/list: annotations, resultType and the cache hints", async () => {
    await using server = tmcpFixture("modern");
    const { response } = await server.request(1, "tools/list", { _meta: meta() });
    expect(response.result.resultType).toBe("complete");
    expect(response.result.ttlMs).toBe(300_000);
    expect(response.result.cacheScope).toBe("public");
    const byName = Object.fromEntries(response.result.tools.map((tool: { name: string }) => [tool.name, tool]));
    expect(Object.keys(byName).sort()).toEqual(["confirm_action", "delete_note", "read_note"]);
    expect(byName.read_note.annotations).toEqual({ readOnlyHint: true });
    expect(byName.delete_note.annotations).toEqual({ readOnlyHint: false, destructiveHint: true });
  }, TEST_TIMEOUT_MS);

  test("an ordinary tools/call completes; removed methods are unknown", async () => {
    await using server = tmcpFixture("modern");
    const read = (await server.request(1, "tools/call", { name: "read_note", arguments: { id: "a" }, _meta: meta() })).response;
    expect(read.result.resultType).toBe("complete");
    expect(text(read.result)).toBe("first note");
    for (const method of ["ping", "logging/setLevel", "resources/subscribe"]) {
      const { response } = await server.request(method, method, { _meta: meta() });
      expect(response.error?.code).toBe(-32601);
    }
  }, TEST_TIMEOUT_MS);

  test("input_required: the question comes back as a result; the retry with inputResponses completes", async () => {
    await using server = tmcpFixture("modern");
    const call = { name: "confirm_action", arguments: { action: "wipe" } };
    const first = (await server.request(1, "tools/call", { ...call, _meta: meta(ELICIT) })).response.result;
    expect(first.resultType).toBe("input_required");
    expect(Object.keys(first.inputRequests)).toEqual(["confirm"]);
    expect(first.inputRequests.confirm).toMatchObject({
      method: "elicitation/create",
      params: {
        message: "Confirm: wipe?",
        requestedSchema: { type: "object", properties: { confirm: { type: "boolean" } }, required: ["confirm"] },
      },
    });
    // An interim result is not cacheable and carries no cache hints.
    expect(first.ttlMs).toBeUndefined();
    expect(first.cacheScope).toBeUndefined();

    // The retry is a new request (new id): same name and arguments, the answers, and the state echoed.
    const echo = first.requestState === undefined ? {} : { requestState: first.requestState };
    const accept = { confirm: { action: "accept", content: { confirm: true } } };
    const second = (await server.request(2, "tools/call", { ...call, inputResponses: accept, ...echo, _meta: meta(ELICIT) })).response;
    expect(second.result.resultType).toBe("complete");
    expect(text(second.result)).toBe("confirmed: wipe");

    const decline = { confirm: { action: "decline" } };
    const third = (await server.request(3, "tools/call", { ...call, inputResponses: decline, ...echo, _meta: meta(ELICIT) })).response;
    expect(text(third.result)).toBe("declined: wipe");

    // Never a server-to-client request: everything the server wrote was a response.
    expect(server.received.filter((message) => message.method !== undefined)).toEqual([]);
  }, TEST_TIMEOUT_MS);

  test("a client that did not declare elicitation gets MissingRequiredClientCapability", async () => {
    await using server = tmcpFixture("modern");
    const { response } = await server.request(1, "tools/call", { name: "confirm_action", arguments: { action: "x" }, _meta: meta() });
    expect(response.error?.code).toBe(-32021);
    expect(response.error?.data?.requiredCapabilities).toHaveProperty("elicitation");
  }, TEST_TIMEOUT_MS);

  test("inputResponses on a method that cannot ask for input is invalid params", async () => {
    await using server = tmcpFixture("modern");
    const { response } = await server.request(1, "tools/list", { inputResponses: {}, _meta: meta() });
    expect(response.error?.code).toBe(-32602);
  }, TEST_TIMEOUT_MS);
});

describe("tmcp fixture, --era dual", () => {
  test("per-request _meta is served as 2026-07-28, initialize as a legacy session", async () => {
    await using server = tmcpFixture("dual");
    const discover = (await server.request(1, "server/discover", { _meta: meta() })).response;
    expect(discover.result.supportedVersions).toEqual([MODERN]);

    const init = (
      await server.request(2, "initialize", {
        protocolVersion: "2025-11-25",
        capabilities: { elicitation: {} },
        clientInfo: { name: "legacy", version: "1" },
      })
    ).response;
    // tmcp knows the legacy versions up to 2025-06-18 and offers that for 2025-11-25.
    expect(init.result.protocolVersion).toBe("2025-06-18");
    expect(init.result.serverInfo).toEqual({ name: "tmcp-server-fixture", version: "1.0.0" });
    server.send({ method: "notifications/initialized" });

    const legacyList = (await server.request(3, "tools/list")).response;
    expect(legacyList.result.resultType).toBeUndefined();
    expect(legacyList.result.tools).toHaveLength(3);
    expect((await server.request(4, "ping")).response.result).toEqual({});

    // In the legacy session the question is a server-to-client request.
    server.send({ id: 5, method: "tools/call", params: { name: "confirm_action", arguments: { action: "wipe" } } });
    const ask = await server.next();
    expect(ask.method).toBe("elicitation/create");
    expect(ask.params.message).toBe("Confirm: wipe?");
    server.send({ id: ask.id, result: { action: "accept", content: { confirm: true } } });
    const done = await server.next();
    expect(done.id).toBe(5);
    expect(text(done.result)).toBe("confirmed: wipe");

    // A modern request on the same stdio process is still served statelessly.
    const modernList = (await server.request(6, "tools/list", { _meta: meta() })).response;
    expect(modernList.result.resultType).toBe("complete");
  }, TEST_TIMEOUT_MS);
});

describe("SDK 1.x fixture (initialize era)", () => {
  test("a dual-era client's server/discover probe fails with a legacy error, then initialize works", async () => {
    await using server = new Peer(fixture("sdk-server-fixture.ts"));
    const probe = (await server.request(1, "server/discover", { _meta: meta(ELICIT) })).response;
    expect(probe.result).toBeUndefined();
    expect(MODERN_ERRORS).not.toContain(probe.error?.code);
    expect(probe.error?.code).toBe(-32601);

    const init = (
      await server.request(2, "initialize", {
        protocolVersion: "2025-11-25",
        capabilities: { elicitation: {} },
        clientInfo: { name: "legacy", version: "1" },
      })
    ).response;
    expect(init.result.protocolVersion).toBe("2025-11-25");
    server.send({ method: "notifications/initialized" });

    const list = (await server.request(3, "tools/list")).response;
    const byName = Object.fromEntries(list.result.tools.map((tool: { name: string }) => [tool.name, tool]));
    expect(byName.read_note.annotations).toEqual({ readOnlyHint: true });
    expect(byName.delete_note.annotations).toEqual({ readOnlyHint: false, destructiveHint: true });

    server.send({ id: 4, method: "tools/call", params: { name: "confirm_action", arguments: { action: "wipe" } } });
    const ask = await server.next();
    expect(ask).toMatchObject({ method: "elicitation/create", params: { mode: "form", message: "Confirm: wipe?" } });
    server.send({ id: ask.id, result: { action: "decline" } });
    const done = await server.next();
    expect(done.id).toBe(4);
    expect(text(done.result)).toBe("declined: wipe");
  }, TEST_TIMEOUT_MS);
});
