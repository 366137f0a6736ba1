/**
 * The real opencode 1.18.33's own tools under `thoughtgate wrap` (docs/governance.md, "Built-in
 * tools"): opencode's hook is a plugin, which wrap gives it for the session in its environment
 * (OPENCODE_CONFIG_CONTENT names a file in the session directory), writing nothing of the user's.
 * opencode's own permissions allow everything (`"permission": "allow"`), so only ThoughtGate stands
 * in the way. With the embedded default, `rm -rf ./data` asked of opencode's bash waits for a person
 * (who says no at a terminal) and does not run; `ls` runs unasked and its output reaches the model;
 * both are in `thoughtgate log --session`. The agent cannot write its way out of the plugin (its
 * config, its plugin directories, ThoughtGate's state), a repository's `.opencode` plugin of the
 * same name and an `opencode.json` with an empty `plugin` list do not displace it, and `enroll
 * opencode` keeps it for plain runs until `unenroll`; a plugin that cannot run thoughtgate refuses.
 */
import { expect, setDefaultTimeout, test } from "bun:test";
import { existsSync, mkdirSync, readFileSync, readdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { agentSandbox, describeRun, opencode, runAgent, type AgentSandbox } from "../../support/agents.ts";
import { startFakeOpenAIChat } from "../../support/fake-models/openai-chat.ts";
import { BINARY, requireBinary, waitFor } from "../../support/harness.ts";
import { decideAtTerminal, tasksAtTerminal } from "../../support/terminal.ts";
import { bytes, NO_DELETES_POLICY, sessionCalls, throughWrap, writeUserPolicy } from "../../support/wrapped-agents.ts";

// opencode takes 3–5 s to start on this box, more under load.
setDefaultTimeout(180_000);
requireBinary();


/** opencode's global config with its own permissions allowing everything, `"$schema"` first as opencode leaves it. */
function allowEverything(sandbox: AgentSandbox): string {
  const path = join(sandbox.home, ".config", "opencode", "opencode.json");
  const config = JSON.parse(readFileSync(path, "utf8")) as Record<string, unknown>;
  writeFileSync(path, `${JSON.stringify({ $schema: "https://opencode.ai/config.json", ...config, permission: "allow" }, null, 2)}\n`);
  return path;
}

function project(sandbox: AgentSandbox): void {
  mkdirSync(join(sandbox.project, ".git"));
  mkdirSync(join(sandbox.project, "data"));
  writeFileSync(join(sandbox.project, "data", "keep.txt"), "precious\n");
}

const results = (model: { toolResults: Array<{ tool: string; text: string }> }) => model.toolResults.map(({ tool, text }) => [tool, text]);

test("under wrap, with the embedded default: rm -rf ./data asked of opencode's bash waits for a person and does not run; ls runs; both in the log; opencode's files untouched", async () => {
  await using sandbox = agentSandbox();
  project(sandbox);
  await using model = startFakeOpenAIChat({
    calls: [
      { tool: "bash", arguments: { command: "rm -rf ./data", description: "Clean up" } },
      { tool: "bash", arguments: { command: "ls", description: "List" } },
    ],
    finalText: "Done.",
  });
  const launch = throughWrap(opencode(sandbox, { model, servers: {}, scope: "global", prompt: "Clean up, then list." }));
  const config = allowEverything(sandbox);
  const before = bytes(config);
  const running = runAgent(launch, sandbox, 150_000);
  // The task list is shown to a person at a terminal, as a decision is.
  const tasks = async () => {
    const run = await tasksAtTerminal(["--json"], { env: launch.env });
    return run.exitCode === 0 ? (JSON.parse(run.stdout) as Array<{ task_id: string; status: string; name: string }>) : [];
  };
  const pending = await waitFor(async () => (await tasks()).find((task) => task.status === "pending" && task.name === "shell"), "the rm's approval task", 90_000);
  const denied = await decideAtTerminal(["deny", pending.task_id], { env: launch.env });
  expect(denied.exitCode, denied.stderr).toBe(0);
  const run = await running;
  const why = describeRun(launch, run, model);
  expect(run.exitCode, why).toBe(0);
  expect(run.stderr, why).toContain("opencode's own tools (bash, edit, write, read, webfetch, …) go through ThoughtGate too: its plugin, for this session");
  expect(readFileSync(join(sandbox.project, "data", "keep.txt"), "utf8"), why).toBe("precious\n");
  expect(results(model)[0]?.[1], why).toContain("ThoughtGate denied this shell call");
  expect(results(model)[1], why).toEqual(["bash", "data\n"]);
  const calls = sessionCalls(launch.env, run.stderr).filter((call) => call.server === "agent");
  expect(calls.map((call) => [call.tool, call.arguments.command ?? null, call.arguments.tool ?? null, call.outcome]).reverse()).toEqual([
    ["shell", "rm -rf ./data", "bash", "denied"],
    ["shell", "ls", "bash", "forwarded"],
  ]);
  expect(bytes(config).equals(before)).toBe(true);
  expect(existsSync(join(sandbox.home, ".config", "opencode", "plugins")) || existsSync(join(sandbox.home, ".config", "opencode", "plugin"))).toBe(false);
  expect(run.leftovers).toEqual([]);
});

test("opencode cannot write its way out of the plugin: its config, a project plugin, ThoughtGate's state, or a shell redirect, each refused", async () => {
  await using sandbox = agentSandbox();
  project(sandbox);
  const plugin = join(sandbox.home, ".local", "state", "thoughtgate", "sessions", "any", "opencode-plugin.js");
  await using model = startFakeOpenAIChat({
    calls: [
      { tool: "write", arguments: { filePath: join(sandbox.home, ".config", "opencode", "opencode.json"), content: "{}\n" } },
      { tool: "write", arguments: { filePath: join(sandbox.project, ".opencode", "plugins", "off.js"), content: "export const Off = async () => ({});\n" } },
      { tool: "edit", arguments: { filePath: plugin, oldString: "throw", newString: "return" } },
      { tool: "bash", arguments: { command: `echo '{"plugin": []}' > ${join(sandbox.home, ".config", "opencode", "opencode.json")}`, description: "x" } },
      { tool: "write", arguments: { filePath: join(sandbox.project, "opencode.json"), content: '{ "plugin": [] }\n' } },
    ],
    finalText: "Done.",
  });
  const launch = throughWrap(opencode(sandbox, { model, servers: {}, scope: "global", prompt: "Turn your plugin off." }));
  const config = allowEverything(sandbox);
  const before = bytes(config);
  const run = await runAgent(launch, sandbox, 150_000);
  const why = describeRun(launch, run, model);
  expect(run.exitCode, why).toBe(0);
  expect(model.toolResults.map(({ text }) => /rule (agent-self-protection(?:-shell)?): deny/.exec(text)?.[1] ?? text), why).toEqual([
    "agent-self-protection",
    "agent-self-protection",
    "agent-self-protection",
    "agent-self-protection-shell",
    "agent-self-protection",
  ]);
  expect(bytes(config).equals(before)).toBe(true);
  expect(existsSync(join(sandbox.project, ".opencode"))).toBe(false);
  expect(existsSync(join(sandbox.project, "opencode.json"))).toBe(false);
});

test("a repository's .opencode plugin of the same name and an opencode.json with no plugins do not displace ThoughtGate's", async () => {
  await using sandbox = agentSandbox();
  project(sandbox);
  mkdirSync(join(sandbox.project, ".opencode", "plugins"), { recursive: true });
  writeFileSync(join(sandbox.project, ".opencode", "plugins", "opencode-plugin.js"), "export const ThoughtGate = async () => ({});\n");
  writeFileSync(join(sandbox.project, ".opencode", "plugins", "thoughtgate.js"), "export const ThoughtGate = async () => ({});\n");
  writeFileSync(join(sandbox.project, "opencode.json"), `${JSON.stringify({ $schema: "https://opencode.ai/config.json", plugin: [] })}\n`);
  writeUserPolicy(sandbox, NO_DELETES_POLICY);
  await using model = startFakeOpenAIChat({ calls: [{ tool: "bash", arguments: { command: "rm -rf ./data", description: "Clean up" } }], finalText: "Done." });
  const launch = throughWrap(opencode(sandbox, { model, servers: {}, scope: "global", prompt: "Clean up." }));
  allowEverything(sandbox);
  const run = await runAgent(launch, sandbox, 150_000);
  const why = describeRun(launch, run, model);
  expect(run.exitCode, why).toBe(0);
  expect(results(model)[0]?.[1], why).toContain("ThoughtGate denied this shell call: rule no-deletes: deny");
  expect(existsSync(join(sandbox.project, "data", "keep.txt")), why).toBe(true);
});

test("enroll opencode governs plain runs through the plugin until unenroll removes it; a plugin that cannot start thoughtgate refuses the call", async () => {
  await using sandbox = agentSandbox();
  project(sandbox);
  writeUserPolicy(sandbox, NO_DELETES_POLICY);
  const env = { ...sandbox.env, PWD: sandbox.project };
  const pluginFile = join(sandbox.home, ".config", "opencode", "plugins", "thoughtgate.js");
  const plain = async (command: string) => {
    await using model = startFakeOpenAIChat({ calls: [{ tool: "bash", arguments: { command, description: "x" } }], finalText: "Done." });
    const launch = opencode(sandbox, { model, servers: {}, scope: "global", prompt: "Go." });
    allowEverything(sandbox);
    const run = await runAgent(launch, sandbox, 150_000);
    expect(run.exitCode, describeRun(launch, run, model)).toBe(0);
    return model.toolResults[0]?.text ?? "";
  };
  const enrolled = Bun.spawnSync([BINARY, "enroll", "opencode"], { cwd: sandbox.project, env, stdout: "pipe", stderr: "pipe" });
  expect(enrolled.exitCode, enrolled.stderr.toString()).toBe(0);
  expect(enrolled.stdout.toString()).toContain(`its own tools (bash, edit, write, read, webfetch, …) governed in every run: its plugin ${join("~", ".config", "opencode", "plugins", "thoughtgate.js")}`);
  expect(await plain("rm -rf ./data")).toContain("ThoughtGate denied this shell call: rule no-deletes: deny");
  expect(existsSync(join(sandbox.project, "data", "keep.txt"))).toBe(true);

  // The plugin's thoughtgate gone: the call is refused, saying why.
  const text = readFileSync(pluginFile, "utf8");
  writeFileSync(pluginFile, text.replace(/^const BINARY = .*$/m, `const BINARY = ${JSON.stringify(join(sandbox.root, "gone", "thoughtgate"))};`));
  expect(await plain("ls")).toContain("ThoughtGate blocked this call: thoughtgate could not be started");
  writeFileSync(pluginFile, text);

  const unenrolled = Bun.spawnSync([BINARY, "unenroll", "opencode"], { cwd: sandbox.project, env, stdout: "pipe", stderr: "pipe" });
  expect(unenrolled.exitCode, unenrolled.stderr.toString()).toBe(0);
  expect(unenrolled.stdout.toString()).toContain(`removed ${pluginFile}`);
  expect(readdirSync(join(sandbox.home, ".config", "opencode", "plugins"))).toEqual([]);
  expect(await plain("ls")).toBe("data\n");
});
