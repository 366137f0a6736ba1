import { errorResponse, RPC, type JsonObject, type JsonRpcRequest } from "../core/jsonrpc.ts";
import { readFramed } from "../stdio/framed-reader.ts";
import { LineSink } from "../stdio/line-sink.ts";
import { VERSION } from "../version.ts";

/**
 * The demo's MCP server (hidden `thoughtgate __demo-server`): a notebook with one read-only tool,
 * one ordinary tool and one destructive tool, so the embedded default policy has something to do
 * with each. Speaks just enough MCP: initialize, ping, tools/list, tools/call.
 */
const TOOLS = [
  {
    name: "read_notes",
    description: "Read every note",
    inputSchema: { type: "object", properties: {} },
    annotations: { readOnlyHint: true, destructiveHint: false },
  },
  {
    name: "add_note",
    description: "Add a note",
    inputSchema: { type: "object", properties: { text: { type: "string" } }, required: ["text"] },
    // A local notebook: it adds, and reaches nothing outside this machine (the embedded default forwards it).
    annotations: { readOnlyHint: false, destructiveHint: false, openWorldHint: false },
  },
  {
    name: "delete_notes",
    description: "Delete every note",
    inputSchema: { type: "object", properties: {} },
    annotations: { readOnlyHint: false, destructiveHint: true },
  },
] as const;

export async function runDemoServer(): Promise<number> {
  const notes: string[] = ["ThoughtGate sits between the agent and this server."];
  const out = new LineSink(Bun.stdout.writer(), () => {});
  const reply = (id: unknown, result: JsonObject) => out.sendText(JSON.stringify({ jsonrpc: "2.0", id, result }));
  const text = (value: string) => ({ content: [{ type: "text", text: value }] });

  const handle = (message: JsonRpcRequest) => {
    const params = (message.params ?? {}) as { name?: string; arguments?: { text?: unknown }; protocolVersion?: string };
    switch (message.method) {
      case "initialize":
        return reply(message.id, {
          protocolVersion: params.protocolVersion ?? "2025-06-18",
          capabilities: { tools: {} },
          serverInfo: { name: "thoughtgate-demo-notes", version: VERSION },
        });
      case "ping":
        return reply(message.id, {});
      case "tools/list":
        return reply(message.id, { tools: TOOLS });
      case "tools/call":
        if (params.name === "read_notes") return reply(message.id, text(notes.length ? notes.map((n, i) => `${i + 1}. ${n}`).join("\n") : "(no notes)"));
        if (params.name === "add_note") {
          notes.push(String(params.arguments?.text ?? ""));
          return reply(message.id, text(`added note ${notes.length}`));
        }
        if (params.name === "delete_notes") {
          const count = notes.splice(0).length;
          return reply(message.id, text(`deleted ${count} notes`));
        }
        return out.sendText(errorResponse(message.id, -32602, `unknown tool ${params.name}`));
      default:
        return out.sendText(errorResponse(message.id, RPC.methodNotFound, `method not found: ${message.method}`));
    }
  };

  await readFramed(
    Bun.stdin.stream().getReader(),
    (unit) => {
      if (unit.kind === "message" && unit.message.kind === "request") handle(unit.message);
    },
    { label: "demo-server" },
  );
  await out.backpressure();
  return 0;
}
