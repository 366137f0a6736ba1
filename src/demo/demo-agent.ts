import { readFileSync } from "node:fs";
import { parse } from "jsonc-parser";
import { messageOf } from "../core/errors.ts";
import { McpClient } from "../mcp/client.ts";
import { RpcError } from "../mcp/rpc-errors.ts";

/**
 * The demo's agent (hidden `thoughtgate __demo-agent CONFIG`): like a real agent it reads its MCP
 * config, starts the server entry exactly as written there (after `wrap`, that is
 * `thoughtgate shim … -- <server>`), and talks MCP to it. It declares MCP elicitation, so approvals
 * come to it. It meets both routes a person answers by: the first time it asks to delete, it shows
 * the form, as an interactive agent does, and its scripted user reads it (a person takes longer
 * than ThoughtGate's 300 ms: a faster answer is taken for the agent's own, docs/governance.md) and denies; the second time it answers
 * the form at once without showing it, as `claude -p` does, so the call waits for the approvals
 * page and `thoughtgate approve` (the demo answers there: src/demo/demo-person.ts).
 */
type Entry = { command: string; args?: string[]; env?: Record<string, string> };

/** How long the scripted user reads a question before answering it. */
const USER_READS_MS = 500;

export async function runDemoAgent(configPath: string, out: (line: string) => void): Promise<number> {
  // JSONC, as agents read their configs (comments and trailing commas allowed).
  const config = parse(readFileSync(configPath, "utf8")) as { mcpServers?: Record<string, Entry> };
  const [name, entry] = Object.entries(config.mcpServers ?? {})[0] ?? [];
  if (!name || !entry) throw new Error(`${configPath} has no mcpServers entry`);
  out(`agent: starting "${name}" as written in its config: ${[entry.command, ...(entry.args ?? [])].join(" ")}`);
  const client = McpClient.start({
    command: [entry.command, ...(entry.args ?? [])],
    env: { ...process.env, ...entry.env },
    keepThoughtGateEnv: true,
    label: name,
  });
  let asked = 0;
  client.setRequestHandler("elicitation/create", async (params) => {
    asked += 1;
    if (asked === 1) {
      out(`  ? the agent shows ThoughtGate's question in its own form: ${((params as { message?: string }).message ?? "(approval)").replaceAll("\n", "\n    ")}`);
      await Bun.sleep(USER_READS_MS);
      out("  → the demo's scripted user, standing in for you, reads it and answers: deny");
      return { action: "accept", content: { decision: "deny" } };
    }
    out("  ? an agent that cannot show a form (claude -p, codex exec) answers it itself at once, unread: no person was asked, so the call waits for you elsewhere");
    return { action: "cancel" };
  });
  try {
    await client.initialize({ capabilities: { elicitation: {} } });
    const { tools } = (await client.request("tools/list")) as { tools: Array<{ name: string; annotations?: Record<string, boolean> }> };
    out(`agent: the server offers ${tools.map((t) => `${t.name}${hint(t.annotations)}`).join(", ")}`);
    const calls: Array<[string, Record<string, unknown>]> = [
      ["read_notes", {}],
      ["add_note", { text: "remember the milk" }],
      ["delete_notes", {}],
      ["delete_notes", {}],
      ["read_notes", {}],
    ];
    for (const [tool, args] of calls) {
      out(`agent → ${tool} ${JSON.stringify(args)}`);
      try {
        const result = (await client.request("tools/call", { name: tool, arguments: args }, 60_000)) as { content?: Array<{ text?: string }> };
        out(`  ✓ ${(result.content ?? []).map((c) => c.text ?? "").join(" ").replaceAll("\n", " | ")}`);
      } catch (error) {
        out(`  ✗ ${error instanceof RpcError ? `${error.rpc.message} (${error.rpc.code})` : messageOf(error)}`);
      }
    }
  } finally {
    await client.close();
  }
  return 0;
}

function hint(annotations: Record<string, boolean> | undefined): string {
  if (annotations?.readOnlyHint) return " (read-only)";
  if (annotations?.destructiveHint) return " (destructive)";
  return "";
}
