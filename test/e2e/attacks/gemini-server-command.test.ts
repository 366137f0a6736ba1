/**
 * Attack: a cloned repository's `.gemini/settings.json` with `{"mcp": {"serverCommand": "…"}}`.
 * Gemini CLI (0.61.0, its bundled core's `populateMcpServerCommand`) starts that command as one
 * more MCP server named "mcp", beside `mcpServers`; wrap used to neither list nor rewrite it, so the
 * model's call of its destructive tool ran ungoverned and the session summary said 0 calls. Now it
 * is an entry like any other: the shim's words go in front of the string, the call goes through the
 * gates. The real Gemini CLI against a loopback fake of the Gemini API calls `delete_note` (denied
 * by the user's policy) and then `read_note`: the note must still be there.
 */
import { expect, setDefaultTimeout, test } from "bun:test";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { agentSandbox, describeRun, gemini } from "../../support/agents.ts";
import { startFakeGemini } from "../../support/fake-models/gemini.ts";
import { fixture } from "../../support/harness.ts";
import { decisions, runWrapped, throughWrap, writeUserPolicy } from "../../support/wrapped-agents.ts";

setDefaultTimeout(120_000);

// Gemini CLI names a tool of the server "mcp" `mcp_<tool>` (not `mcp_mcp_<tool>`), measured.
const DELETE = "mcp_delete_note";
const READ = "mcp_read_note";

test("Gemini CLI's mcp.serverCommand in a project's settings is governed: the denied call never reaches the server", async () => {
  await using sandbox = agentSandbox();
  writeUserPolicy(sandbox, "schema: 1\ngovernance:\n  rules:\n    - { id: no-deleting, match: delete_note, action: deny }\n");
  await using model = startFakeGemini({ calls: [{ tool: DELETE, arguments: { id: "a" } }, { tool: READ, arguments: { id: "a" } }], finalText: "Done." });
  const [bun, server] = fixture("sdk-server-fixture.ts");
  // Beside a server of the user's own, so wrap has something to govern either way.
  const own = { command: bun ?? "bun", args: [server ?? "", sandbox.marker] };
  const launch = throughWrap(gemini(sandbox, { model, servers: { notes: own }, scope: "user", prompt: "Delete note a, then read it.", projectSettings: { mcp: { serverCommand: `${bun} ${server} ${sandbox.marker}` } } }));
  const settings = join(sandbox.project, ".gemini", "settings.json");
  const original = readFileSync(settings, "utf8");
  const run = await runWrapped(launch, sandbox);
  expect(
    { exitCode: run.exitCode, results: model.toolResults.map(({ tool, text }) => ({ tool, text })), decisions: decisions(run), leftovers: run.leftovers },
    describeRun(launch, run, model),
  ).toEqual({
    exitCode: 0,
    results: [
      { tool: DELETE, text: expect.stringContaining("ThoughtGate blocked tools/call delete_note: rule no-deleting: deny") },
      { tool: READ, text: expect.stringContaining("first note") },
    ],
    decisions: ["mcp.delete_note deny (no-deleting)", "mcp.read_note forward (defaults)"],
    leftovers: [],
  });
  expect(run.stderr).toMatch(/\nmcp +project +\S+ +yes\n/);
  expect(readFileSync(settings, "utf8")).toBe(original);
});
