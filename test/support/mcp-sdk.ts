/**
 * The real MCP TypeScript SDK client, connected either straight to a server or through the
 * compiled `thoughtgate shim`, so e2e tests can compare what an agent sees on both routes.
 */
import { Client, type ClientOptions } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import type { CallToolRequest, JSONRPCMessage, JSONRPCNotification } from "@modelcontextprotocol/sdk/types.js";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import type { Readable } from "node:stream";
import { descendants, isAlive, readEvents, requireBinary, waitFor } from "./harness.ts";

export type Route = "direct" | "shim";

export type Connection = {
  route: Route;
  client: Client;
  transport: StdioClientTransport | StreamableHTTPClientTransport;
  /** The process the transport spawned: the shim, or the server itself on the direct route. */
  pid: number | null;
  /** The shim's JSONL event file (shim route only). */
  eventsPath: string | null;
  /**
   * Every notification as it came off the wire, in order. The SDK dispatches notifications a
   * microtask after reading them but settles responses at once, so a progress notification read in
   * the same chunk as its response never reaches `onprogress` (measured on direct connections
   * too); this is what the transport actually delivered.
   */
  notifications: JSONRPCNotification[];
  /** Every tools/call this connection sent: name and arguments, in order. */
  toolCalls: Array<{ name: string; arguments: Record<string, unknown> }>;
  /** What the shim (and the server behind it) wrote to stderr, for failure messages. */
  stderr: () => string;
};

export type ConnectOptions = {
  route: Route;
  /** The server command, e.g. EVERYTHING_SERVER. */
  server: string[];
  /**
   * A remote server's Streamable HTTP URL instead of `server`: the direct route talks HTTP to it
   * (the SDK's own client transport), the shim route runs `thoughtgate shim --url` on stdio.
   */
  url?: string;
  serverId: string;
  /** A directory for the shim's event file. */
  dir: string;
  capabilities: NonNullable<ClientOptions["capabilities"]>;
  /** Register request and notification handlers before `initialize` is sent. */
  setup?: (client: Client) => void;
  /** The shim's `--thoughtgate-config` (shim route only); absent: discovery (the embedded default in the tests' HOME). */
  policy?: string;
};

/** Spawn the server (direct) or `thoughtgate shim … -- server` (or `shim --url`) and run the MCP handshake. */
export async function connect(options: ConnectOptions): Promise<Connection> {
  const eventsPath = options.route === "shim" ? join(options.dir, `${options.serverId}-events.jsonl`) : null;
  const target = options.url === undefined ? ["--", ...options.server] : ["--url", options.url];
  const [command, ...args] =
    options.route === "shim"
      ? [requireBinary(), "shim", "--server-id", options.serverId, "--events", eventsPath ?? "", ...(options.policy ? ["--thoughtgate-config", options.policy] : []), ...target]
      : options.server;
  let stderr = "";
  let transport: StdioClientTransport | StreamableHTTPClientTransport;
  if (options.route === "direct" && options.url !== undefined) {
    transport = new StreamableHTTPClientTransport(new URL(options.url));
  } else {
    if (command === undefined) throw new Error("empty server command");
    const stdio = new StdioClientTransport({ command, args, stderr: "pipe" });
    (stdio.stderr as Readable | null)?.on("data", (chunk: Buffer) => {
      stderr += chunk.toString("utf8");
    });
    transport = stdio;
  }
  const client = new Client({ name: "thoughtgate-e2e", version: "1.0.0" }, { capabilities: options.capabilities });
  options.setup?.(client);
  await client.connect(transport);
  const notifications: JSONRPCNotification[] = [];
  const dispatch = transport.onmessage;
  transport.onmessage = (message: JSONRPCMessage) => {
    if ("method" in message && !("id" in message)) notifications.push(message);
    dispatch?.(message);
  };
  const pid = transport instanceof StdioClientTransport ? transport.pid : null;
  return { route: options.route, client, transport, pid, eventsPath, notifications, toolCalls: [], stderr: () => stderr };
}

/** `client.callTool`, remembering the call so the audit log can be checked against it. */
export function callTool(
  connection: Connection,
  params: CallToolRequest["params"],
  options?: Parameters<Client["callTool"]>[2],
): ReturnType<Client["callTool"]> {
  connection.toolCalls.push({ name: params.name, arguments: params.arguments ?? {} });
  return connection.client.callTool(params, undefined, options);
}

/** The MCP server's pid behind a shim, from the shim's `server_state` event. */
export async function serverPidBehindShim(connection: Connection): Promise<number> {
  const eventsPath = connection.eventsPath;
  if (eventsPath === null) throw new Error("a direct connection has no shim");
  const running = await waitFor(
    () => readEvents(eventsPath).find((event) => event.type === "server_state" && event.state === "running"),
    "the shim's server_state running event",
  );
  return running.pid as number;
}

export type Survivor = { pid: number; command: string };

/**
 * Close the client (the SDK ends stdin, waits 2 s, SIGTERM, waits 2 s, SIGKILL) and report which
 * of the processes it started (the shim or server it spawned and all their descendants, plus
 * `serverPid`, which may have left the tree) are still alive afterwards.
 */
export async function closeAndListSurvivors(connection: Connection, serverPid: number | null): Promise<Survivor[]> {
  const topPid = connection.pid;
  const watched = new Map<number, string>();
  for (const pid of [topPid, ...(topPid === null ? [] : descendants(topPid)), serverPid]) {
    if (pid !== null) watched.set(pid, commandOf(pid));
  }
  await connection.client.close();
  // Same pid and same command line: still the process we started, not a reused pid.
  const survivors = () => [...watched].filter(([pid, command]) => isAlive(pid) && commandOf(pid) === command).map(([pid]) => pid);
  // close() has already spent up to ~4 s; give the processes as long again to finish exiting.
  await waitFor(() => survivors().length === 0, "every process of the connection to exit", 5_000).catch(() => undefined);
  return survivors().map((pid) => ({ pid, command: watched.get(pid) ?? "" }));
}

function commandOf(pid: number): string {
  try {
    return readFileSync(`/proc/${pid}/cmdline`, "utf8").split("\0").join(" ").trim();
  } catch {
    return "";
  }
}

/** Last resort after a failed assertion or a filtered run: nothing a test started may outlive it. */
export function killLeftovers(survivors: Survivor[]): void {
  for (const { pid } of survivors) {
    try {
      process.kill(pid, "SIGKILL");
    } catch {
      // Already gone.
    }
  }
}

/** Canonical JSON (keys sorted, no whitespace): what `args_hash` is the SHA-256 of. */
export function canonicalJson(value: unknown): string {
  if (value === null || typeof value !== "object") return JSON.stringify(value) ?? "null";
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(",")}]`;
  const record = value as Record<string, unknown>;
  const keys = Object.keys(record)
    .filter((key) => record[key] !== undefined)
    .sort();
  return `{${keys.map((key) => `${JSON.stringify(key)}:${canonicalJson(record[key])}`).join(",")}}`;
}

export function sha256Hex(text: string): string {
  return new Bun.CryptoHasher("sha256").update(text).digest("hex");
}

type Event = Record<string, unknown>;

/** The shim's events once it has finished: after `run_end`, or whatever is there once the shim is gone. */
export async function finalEvents(connection: Connection): Promise<Event[]> {
  const eventsPath = connection.eventsPath;
  if (eventsPath === null) throw new Error("a direct connection has no event file");
  const shimPid = connection.pid;
  const finished = () => readEvents(eventsPath).at(-1)?.type === "run_end" || shimPid === null || !isAlive(shimPid);
  await waitFor(finished, "the shim to write run_end and exit", 15_000).catch(() => undefined);
  return readEvents(eventsPath);
}

/**
 * What every shim event file must show: `run_start` first with seq 1, seq rising by exactly one,
 * `run_end` last, and for every tools/call the agent sent (in order) a start, a decision and an
 * end sharing one call_id, naming the tool and carrying the SHA-256 of its canonical arguments.
 */
export function auditProblems(events: Event[], toolCalls: Connection["toolCalls"]): string[] {
  const problems: string[] = [];
  const first = events[0];
  if (first?.type !== "run_start" || first.seq !== 1) problems.push(`first event is ${JSON.stringify(first)}, not run_start with seq 1`);
  events.forEach((event, index) => {
    if (index > 0 && event.seq !== (events[index - 1]?.seq as number) + 1) {
      problems.push(`seq ${String(event.seq)} follows seq ${String(events[index - 1]?.seq)} (event ${index}, ${String(event.type)})`);
    }
  });
  if (events.at(-1)?.type !== "run_end") problems.push(`last event is ${String(events.at(-1)?.type)}, not run_end`);

  const starts = events.filter((event) => event.type === "tool_call_start");
  if (starts.length !== toolCalls.length) problems.push(`${toolCalls.length} tools/call sent, ${starts.length} tool_call_start events`);
  toolCalls.forEach((call, index) => {
    const start = starts[index];
    if (!start) return;
    const expectedHash = sha256Hex(canonicalJson(call.arguments));
    if (start.tool !== call.name) problems.push(`call ${index}: tool_call_start names ${String(start.tool)}, the agent called ${call.name}`);
    if (typeof start.args_hash !== "string" || !/^[0-9a-f]{64}$/.test(start.args_hash)) {
      problems.push(`call ${index} (${call.name}): args_hash ${String(start.args_hash)} is not 64 hex digits`);
    } else if (start.args_hash !== expectedHash) {
      problems.push(`call ${index} (${call.name}): args_hash ${start.args_hash} is not sha256(canonical arguments) ${expectedHash}`);
    }
    const related = events.filter((event) => event.call_id === start.call_id);
    const types = related.map((event) => event.type);
    // A call that waited for a human has a `pending` decision before the final one.
    const decisions = related.filter((event) => event.type === "tool_call_decision").map((event) => event.decision);
    const shapeOk =
      types.join(",") === "tool_call_start,tool_call_decision,tool_call_end" ||
      (types.join(",") === "tool_call_start,tool_call_decision,tool_call_decision,tool_call_end" && decisions[0] === "pending" && decisions[1] !== "pending");
    if (!shapeOk) {
      problems.push(`call ${index} (${call.name}): events for its call_id are [${types.join(", ")}] with decisions [${decisions.join(", ")}]`);
    }
    for (const event of related) {
      if (event.tool !== call.name) problems.push(`call ${index}: ${String(event.type)} names tool ${String(event.tool)}`);
    }
    const end = related.find((event) => event.type === "tool_call_end");
    if (end && end.args_hash !== start.args_hash) problems.push(`call ${index}: tool_call_end args_hash differs from tool_call_start's`);
  });
  return problems;
}
