/**
 * The scripted hour's agent (hour.ts), started by a real `thoughtgate wrap`:
 * `hour-agent.ts CONFIG SCRIPT REPORT ANSWER PAGE_FILE`. Like a real agent it reads its MCP config
 * (Claude Code's `~/.claude.json`, rewritten by wrap), starts every server in it with the real SDK
 * client (declaring form elicitation, as Claude Code does), and makes the calls of SCRIPT one after
 * another. Every approval form ThoughtGate shows through it is a prompt: counted, with the call it
 * came with, and answered by `personAnswers` (the person). REPORT gets the prompts and each call's
 * outcome as JSON.
 */
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { ElicitRequestSchema } from "@modelcontextprotocol/sdk/types.js";
import { existsSync, readFileSync, writeFileSync } from "node:fs";

export type Answer = "once" | "session" | "always";
export type ScriptedCall = { server: string; tool: string; arguments: Record<string, unknown> };
export type Prompt = { server: string; tool: string; message: string; via: string };
export type HourReport = { prompts: Prompt[]; calls: Array<{ server: string; tool: string; outcome: "ok" | "tool_error" | "refused"; code?: number }> };

const [configPath, scriptPath, reportPath, answer, pageFile] = process.argv.slice(2) as [string, string, string, Answer, string];
const config = JSON.parse(readFileSync(configPath, "utf8")) as { mcpServers: Record<string, { command: string; args?: string[]; env?: Record<string, string> }> };
const script = JSON.parse(readFileSync(scriptPath, "utf8")) as ScriptedCall[];
const report: HourReport = { prompts: [], calls: [] };
let current: ScriptedCall | null = null;

/**
 * The person: answers every form the same way, as this session's plan says. What the form offers
 * is read from the form itself, so when it offers "always", that is chosen there; until then
 * "always" is given on the approvals page (its key comes from wrap's banner, through PAGE_FILE)
 * and the form is then answered "once" (the page decided first; the form's answer changes nothing).
 */
async function personAnswers(schema: unknown): Promise<{ decision: string; via: string }> {
  const offered = formChoices(schema);
  if (offered.includes(answer)) return { decision: answer, via: "form" };
  if (answer !== "always") throw new Error(`the form offers ${offered.join(", ")}, not ${answer}`);
  await alwaysOnThePage();
  return { decision: "once", via: "page" };
}

function formChoices(schema: unknown): string[] {
  const decision = (schema as { properties?: { decision?: { oneOf?: Array<{ const: string }>; enum?: string[] } } }).properties?.decision;
  return decision?.oneOf?.map((choice) => choice.const) ?? decision?.enum ?? [];
}

/** "Always allow" on the approvals page for the task of the call being made. */
async function alwaysOnThePage(): Promise<void> {
  const deadline = Date.now() + 20_000;
  while (!existsSync(pageFile) && Date.now() < deadline) await Bun.sleep(20);
  const page = new URL(readFileSync(pageFile, "utf8").trim());
  const key = new URLSearchParams(page.hash.slice(1)).get("key") ?? "";
  const api = (path: string, init?: RequestInit) => fetch(new URL(path, page.origin), { ...init, headers: { authorization: `Bearer ${key}`, "content-type": "application/json" } });
  for (;;) {
    const { tasks } = (await (await api("/approvals/api/tasks")).json()) as { tasks: Array<{ task_id: string; status: string; server_id: string; name: string; digest: string }> };
    const task = tasks.find((t) => t.status === "pending" && t.server_id === current?.server && t.name === current?.tool);
    if (task) {
      const decided = await api(`/approvals/api/tasks/${task.task_id}`, { method: "POST", body: JSON.stringify({ decision: "approve", scope: "always", digest: task.digest }) });
      if (!decided.ok) throw new Error(`always allow ${task.server_id}.${task.name}: HTTP ${decided.status} ${await decided.text()}`);
      return;
    }
    if (Date.now() > deadline) throw new Error(`no pending task for ${current?.server}.${current?.tool} on the approvals page`);
    await Bun.sleep(20);
  }
}

const clients = new Map<string, Client>();
for (const [name, entry] of Object.entries(config.mcpServers)) {
  const client = new Client({ name: "hour-agent", version: "1" }, { capabilities: { elicitation: { form: {} } } });
  client.setRequestHandler(ElicitRequestSchema, async (request) => {
    const params = request.params as { message: string; requestedSchema?: unknown };
    const { decision, via } = await personAnswers(params.requestedSchema);
    report.prompts.push({ server: current?.server ?? name, tool: current?.tool ?? "?", message: params.message, via });
    return { action: "accept", content: { decision } };
  });
  const transport = new StdioClientTransport({ command: entry.command, args: entry.args ?? [], env: { ...(process.env as Record<string, string>), ...(entry.env ?? {}) }, stderr: "ignore" });
  await client.connect(transport);
  clients.set(name, client);
}

for (const call of script) {
  current = call;
  const client = clients.get(call.server);
  if (!client) throw new Error(`no server ${call.server} in ${configPath}`);
  try {
    const result = await client.callTool({ name: call.tool, arguments: call.arguments }, undefined, { timeout: 60_000 });
    report.calls.push({ server: call.server, tool: call.tool, outcome: result.isError ? "tool_error" : "ok" });
  } catch (error) {
    report.calls.push({ server: call.server, tool: call.tool, outcome: "refused", code: (error as { code?: number }).code ?? 0 });
  }
}
current = null;
for (const client of clients.values()) await client.close();
writeFileSync(reportPath, JSON.stringify(report));
