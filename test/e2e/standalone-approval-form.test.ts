/**
 * The question a shim that governs on its own asks through the agent (a plain run of an enrolled
 * agent, a standalone `thoughtgate shim`), through the compiled binary with the real MCP SDK
 * client in front and server-filesystem behind, under the user's own (here: embedded default)
 * policy:
 *
 * - an edit's and an overwrite's question leads with the change: its first three lines (what
 *   Claude Code's form shows) are the headline naming the file, and what is replaced by what;
 * - the four answers are offered (once, this session, always here or everywhere), and "always in
 *   this project" writes the rule into the user's policy so the next call asks no one;
 * - Esc at a person's pace is the person's refusal, and the model is told so.
 */
import { afterEach, describe, expect, setDefaultTimeout, test } from "bun:test";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { ElicitRequestSchema, McpError, type CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import { mkdirSync, readFileSync, realpathSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { personReads } from "../support/approval-answers.ts";
import { FILESYSTEM_SERVER_JS, requireBinary, tempDir } from "../support/harness.ts";

setDefaultTimeout(60_000);
requireBinary();

type Asked = { message: string; choices: string[] };
type Answer = { action: "accept"; content: { decision: string } } | { action: "cancel" };

const open: Client[] = [];
afterEach(async () => {
  for (const client of open.splice(0)) await client.close();
});

/** A shim with no session and no --thoughtgate-config: the user's policy (here the embedded default) in its own engine. */
async function plainRun(dir: string, answers: Answer[], asked: Asked[]): Promise<{ client: Client; project: string; home: string }> {
  const home = join(dir, "home");
  const project = join(dir, "project");
  mkdirSync(home);
  mkdirSync(join(project, ".git"), { recursive: true });
  const transport = new StdioClientTransport({
    command: requireBinary(),
    args: ["shim", "--server-id", "fs", "--", "node", FILESYSTEM_SERVER_JS, project],
    cwd: project,
    env: { PATH: process.env.PATH ?? "", HOME: home, XDG_CONFIG_HOME: join(home, ".config"), XDG_STATE_HOME: join(home, ".local", "state") },
    stderr: "pipe",
  });
  const client = new Client({ name: "plain-run", version: "1" }, { capabilities: { elicitation: {} } });
  client.setRequestHandler(ElicitRequestSchema, async (request) => {
    const { requestedSchema } = request.params as unknown as { requestedSchema: { properties: { decision: { oneOf: Array<{ const: string }> } } } };
    const decision = requestedSchema.properties.decision;
    asked.push({ message: String(request.params.message), choices: decision.oneOf.map((c) => c.const) });
    await personReads();
    const answer = answers.shift();
    if (!answer) throw new Error("asked once too often");
    return answer;
  });
  await client.connect(transport);
  open.push(client);
  return { client, project, home };
}

async function refusal(client: Client, name: string, args: Record<string, unknown>): Promise<McpError> {
  try {
    await client.callTool({ name, arguments: args });
  } catch (error) {
    if (error instanceof McpError) return error;
    throw error;
  }
  throw new Error(`${name} was not refused`);
}

describe("a shim that governs on its own asks as wrap does", () => {
  test("the edit's change leads the question; all four answers are offered; always in this project writes the rule; the next edit asks no one", async () => {
    using dir = tempDir();
    const asked: Asked[] = [];
    const { client, project, home } = await plainRun(dir.path, [{ action: "accept", content: { decision: "always_project" } }], asked);
    const notes = join(realpathSync(project), "notes.md");
    writeFileSync(notes, "# Notes\nStatus: draft\nowner: me\n");

    const edit = { path: notes, edits: [{ oldText: "Status: draft", newText: "Status: final" }] };
    const first = (await client.callTool({ name: "edit_file", arguments: edit })) as CallToolResult;
    expect(first.isError).toBeFalsy();
    expect(readFileSync(notes, "utf8")).toBe("# Notes\nStatus: final\nowner: me\n");

    expect(asked).toHaveLength(1);
    expect(asked[0]?.message.split("\n").slice(0, 4)).toEqual([
      `ThoughtGate: allow edit_file on server fs to change ${notes}? (rule default-destructive: approval required)`,
      "-Status: draft",
      "+Status: final",
      "1 line removed, 1 added",
    ]);
    expect(asked[0]?.choices).toEqual(["once", "session", "always_project", "always_everywhere", "deny"]);

    // The rule is the user's, kept to this project, naming the program that served the tool.
    const policy = readFileSync(join(home, ".config", "thoughtgate", "thoughtgate.yaml"), "utf8");
    expect(policy).toContain('id: "always-allow-fs-edit_file"');
    expect(policy).toContain(`project: ${JSON.stringify(realpathSync(project))}`);
    expect(policy).toContain(FILESYSTEM_SERVER_JS);

    const again = (await client.callTool({ name: "edit_file", arguments: { path: notes, edits: [{ oldText: "owner: me", newText: "owner: you" }] } })) as CallToolResult;
    expect(again.isError).toBeFalsy();
    expect(asked).toHaveLength(1);
  });

  test("an overwrite's question leads with its diff against the file; Esc at a person's pace is the person's refusal", async () => {
    using dir = tempDir();
    const asked: Asked[] = [];
    const { client, project } = await plainRun(dir.path, [{ action: "cancel" }], asked);
    const plan = join(realpathSync(project), "plan.txt");
    writeFileSync(plan, "step 1\nstep 2\nstep 3\n");

    const error = await refusal(client, "write_file", { path: plan, content: "step 1\nstep two\nstep 3\nstep 4\nstep 5\n" });
    expect(readFileSync(plan, "utf8")).toBe("step 1\nstep 2\nstep 3\n");
    expect(asked[0]?.message.split("\n").slice(0, 4)).toEqual([
      `ThoughtGate: allow write_file on server fs to change ${plan}? (rule default-destructive: approval required)`,
      "-step 2",
      "+step two",
      "1 line removed, 3 added; 2 more changed lines in the diff below",
    ]);
    expect(error.code).toBe(-32007);
    expect(error.message).toContain("rule default-destructive: approval required: refused by the person: they dismissed the agent's prompt (Esc)");
    expect(error.message).not.toContain("the agent answered the approval form itself");
  });
});
