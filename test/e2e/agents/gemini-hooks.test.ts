/**
 * The real Gemini CLI 0.61's own tools under `thoughtgate wrap` (docs/governance.md, "Built-in
 * tools"): wrap adds ThoughtGate's BeforeTool hook to ~/.gemini/settings.json for the session
 * through the config guard (Gemini takes no hooks from a session-only system settings file:
 * measured), and puts the file back byte for byte. With `--approval-mode yolo` (Gemini runs
 * everything itself), `rm -rf ./data` is refused (a policy rule says no at once: `gemini -p` shows
 * no one to ask) and the directory stays, `ls` runs and its output reaches the model, and both are
 * in `thoughtgate log --session`. A wrap killed with SIGKILL mid-session leaves the hook in the
 * file; `thoughtgate unwrap` puts the bytes back.
 */
import { expect, setDefaultTimeout, test } from "bun:test";
import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { agentSandbox, describeRun, gemini } from "../../support/agents.ts";
import { startFakeGemini } from "../../support/fake-models/gemini.ts";
import { BINARY, requireBinary, waitFor } from "../../support/harness.ts";
import { NO_DELETES_POLICY, runWrapped, sessionCalls, throughWrap, writeUserPolicy } from "../../support/wrapped-agents.ts";

setDefaultTimeout(120_000);
requireBinary();


/** The user's settings, spaced their way, with a hook of their own: the same bytes must come back. */
function userSettings(path: string): string {
  const settings = JSON.parse(readFileSync(path, "utf8")) as Record<string, unknown>;
  const text = `${JSON.stringify({ ...settings, hooks: { BeforeTool: [{ matcher: "write_file", hooks: [{ type: "command", command: "true" }] }] } }, null, 4)}\n`;
  writeFileSync(path, text);
  return text;
}

test("under wrap, Gemini CLI's own run_shell_command goes through ThoughtGate's hook; settings.json byte for byte after", async () => {
  await using sandbox = agentSandbox();
  mkdirSync(join(sandbox.project, ".git"));
  mkdirSync(join(sandbox.project, "data"));
  const settingsFile = join(sandbox.home, ".gemini", "settings.json");
  await using model = startFakeGemini({
    calls: [
      { tool: "run_shell_command", arguments: { command: "rm -rf ./data" } },
      { tool: "run_shell_command", arguments: { command: "ls" } },
    ],
    finalText: "Done.",
  });
  writeUserPolicy(sandbox, NO_DELETES_POLICY);
  const launch = throughWrap(gemini(sandbox, { model, servers: {}, scope: "user", prompt: "Clean up, then list." }));
  const before = userSettings(settingsFile);
  const run = await runWrapped(launch, sandbox, 90_000);
  const why = describeRun(launch, run, model);
  expect(run.exitCode, why).toBe(0);
  expect(run.stderr, why).toContain("Gemini CLI's own tools (run_shell_command, write_file, replace, …) go through ThoughtGate too: its BeforeTool hook");
  expect(existsSync(join(sandbox.project, "data")), why).toBe(true);
  const results = model.toolResults.map(({ tool, text }) => [tool, text]);
  expect(results[0]?.[1], why).toContain("ThoughtGate denied this shell call: rule no-deletes: deny");
  expect(results[1]?.[1], why).toContain("data");
  expect(readFileSync(settingsFile, "utf8")).toBe(before);
  const calls = sessionCalls(launch.env, run.stderr).filter((call) => call.server === "agent");
  expect(calls.map((call) => [call.tool, call.arguments.command ?? null, call.outcome]).reverse()).toEqual([
    ["shell", "rm -rf ./data", "denied"],
    ["shell", "ls", "forwarded"],
  ]);
});

test("a wrap killed with SIGKILL while Gemini CLI's hook waits for a person leaves the hook in settings.json; thoughtgate unwrap puts the bytes back", async () => {
  await using sandbox = agentSandbox();
  mkdirSync(join(sandbox.project, ".git"));
  const settingsFile = join(sandbox.home, ".gemini", "settings.json");
  await using model = startFakeGemini({
    // Outside the project: the embedded default asks a person, so the hook waits.
    calls: [{ tool: "run_shell_command", arguments: { command: "touch ../outside.txt" } }],
    finalText: "Done.",
  });
  const launch = throughWrap(gemini(sandbox, { model, servers: {}, scope: "user", prompt: "Make a file." }));
  const before = userSettings(settingsFile);
  const wrap = Bun.spawn(launch.argv, { cwd: launch.cwd, env: launch.env, stdin: "ignore", stdout: "pipe", stderr: "pipe", detached: true });
  let stderr = "";
  const reading = (async () => {
    for await (const chunk of wrap.stderr) stderr += new TextDecoder().decode(chunk);
  })();
  try {
    await waitFor(() => stderr.includes("waits for a person"), "the hook's call to wait for a person", 60_000);
    expect(readFileSync(settingsFile, "utf8")).toContain("hook gemini");
    process.kill(wrap.pid, "SIGKILL");
    await wrap.exited;
  } finally {
    // The agent and the hook were wrap's children, in its process group: end them all.
    try {
      process.kill(-wrap.pid, "SIGKILL");
    } catch {
      // already gone
    }
    await reading;
  }
  expect(readFileSync(settingsFile, "utf8")).not.toBe(before);
  const unwrap = Bun.spawnSync([BINARY, "unwrap", "--all"], { cwd: sandbox.project, env: launch.env, stdout: "pipe", stderr: "pipe" });
  expect(unwrap.exitCode, unwrap.stderr.toString()).toBe(0);
  expect(readFileSync(settingsFile, "utf8")).toBe(before);
});
