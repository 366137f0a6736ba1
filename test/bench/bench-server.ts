/**
 * The benchmark's MCP server: NDJSON JSON-RPC on stdin/stdout, every answer written at once, so
 * the figures measure the proxy in front of it, not the server. It answers `initialize`, `ping`,
 * `tools/list` and `tools/call` for two tools: `echo`, whose result is its arguments, and `blob`,
 * whose result is a text of `bytes` bytes (source code and prose), with fake credentials spread
 * through it when `secrets` is true (secrets.ts). It exits on stdin EOF (MCP stdio lifecycle).
 * Extra command-line arguments are ignored: the bench passes a run marker so it can find any
 * server left behind.
 *
 * With `--tools N` its tools/list has N tools: `echo` and N-1 others shaped like a filesystem
 * server's (a paragraph of description, a schema with three properties, annotations), for pricing
 * the shim's work on a list (the pin check).
 *
 * With `--http` it answers the same over Streamable HTTP instead (POST /mcp, one JSON body per
 * request, 202 for notifications, no session) on 127.0.0.1, a free port, and prints
 * `listening URL`: the remote server of the bench's `shim --url` phase.
 */
import type { FileSink } from "bun";
import { blobText } from "./blob-text.ts";

type RpcRequest = { id?: unknown; method?: unknown; params?: unknown };

const ECHO_TOOL = {
  name: "echo",
  description: "Returns its arguments",
  inputSchema: { type: "object", additionalProperties: true },
  // Read-only, so the embedded default policy forwards it (an unannotated tool would need approval).
  annotations: { readOnlyHint: true },
};

const BLOB_TOOL = {
  name: "blob",
  description: "Returns a text of the given size",
  inputSchema: { type: "object", properties: { bytes: { type: "number" }, secrets: { type: "boolean" } } },
  annotations: { readOnlyHint: true },
};

/** Serialised once per size and kind: the server's own cost stays out of the figures. */
const blobs = new Map<string, string>();

function blobResult(id: unknown, bytes: number, secrets: boolean): string {
  const key = `${bytes}:${secrets}`;
  let serialised = blobs.get(key);
  if (serialised === undefined) {
    serialised = JSON.stringify({ content: [{ type: "text", text: blobText(bytes, secrets) }] });
    blobs.set(key, serialised);
  }
  return `{"jsonrpc":"2.0","id":${JSON.stringify(id)},"result":${serialised}}`;
}
const toolsFlag = process.argv.indexOf("--tools");
const TOOL_COUNT = toolsFlag === -1 ? 2 : Number(process.argv[toolsFlag + 1]);
const TOOLS = [
  ECHO_TOOL,
  BLOB_TOOL,
  ...Array.from({ length: Math.max(0, TOOL_COUNT - 2) }, (_, i) => ({
    name: `read_file_${i}`,
    description: `Read the complete contents of file set ${i} as text. Handles various text encodings and provides detailed error messages if the file cannot be read. Only works within allowed directories.`,
    inputSchema: { type: "object", properties: { path: { type: "string" }, head: { type: "number", description: "Only the first N lines" }, tail: { type: "number", description: "Only the last N lines" } }, required: ["path"] },
    annotations: { readOnlyHint: true },
  })),
];

function result(id: unknown, value: unknown): string {
  return JSON.stringify({ jsonrpc: "2.0", id, result: value });
}

function error(id: unknown, code: number, message: string): string {
  return JSON.stringify({ jsonrpc: "2.0", id, error: { code, message } });
}

/** The response line for one request line, or null for a notification. */
function answer(line: string): string | null {
  let request: RpcRequest;
  try {
    request = JSON.parse(line) as RpcRequest;
  } catch {
    return error(null, -32700, "parse error");
  }
  if (request.id === undefined) return null;
  const params = (request.params ?? {}) as { protocolVersion?: unknown; name?: unknown; arguments?: unknown };
  switch (request.method) {
    case "initialize":
      return result(request.id, {
        protocolVersion: typeof params.protocolVersion === "string" ? params.protocolVersion : "2025-06-18",
        capabilities: { tools: {} },
        serverInfo: { name: "bench-server", version: "1.0.0" },
      });
    case "ping":
      return result(request.id, {});
    case "tools/list":
      return result(request.id, { tools: TOOLS });
    case "tools/call": {
      if (params.name === "blob") {
        const { bytes, secrets } = (params.arguments ?? {}) as { bytes?: unknown; secrets?: unknown };
        return blobResult(request.id, typeof bytes === "number" ? bytes : 1024, secrets === true);
      }
      if (params.name !== "echo") return error(request.id, -32602, `unknown tool ${JSON.stringify(params.name)}`);
      const args = params.arguments ?? {};
      return result(request.id, { content: [{ type: "text", text: JSON.stringify(args) }], structuredContent: args });
    }
    default:
      return error(request.id, -32601, `method not found: ${String(request.method)}`);
  }
}

if (process.argv.includes("--http")) {
  const http = Bun.serve({
    hostname: "127.0.0.1",
    port: 0,
    idleTimeout: 0,
    async fetch(request) {
      const reply = answer(await request.text());
      return reply === null ? new Response(null, { status: 202 }) : new Response(reply, { headers: { "content-type": "application/json" } });
    },
  });
  process.stdout.write(`listening http://127.0.0.1:${http.port}/mcp\n`);
} else {
  await serveStdio();
}

async function serveStdio(): Promise<void> {
  const out: FileSink = Bun.stdout.writer();
  const input = Bun.stdin.stream().getReader();
  const decoder = new TextDecoder();
  let partial = "";
  for (;;) {
    const { value, done } = await input.read();
    if (done) break;
    const lines = (partial + decoder.decode(value, { stream: true })).split("\n");
    partial = lines.pop() ?? "";
    // One write per chunk: a pipelined burst costs one syscall, not one per response.
    let replies = "";
    for (const line of lines) {
      if (line.trim() === "") continue;
      const reply = answer(line);
      if (reply !== null) replies += `${reply}\n`;
    }
    if (replies === "") continue;
    out.write(replies);
    const flushed = out.flush();
    if (flushed instanceof Promise) await flushed;
  }
  await out.end();
}
