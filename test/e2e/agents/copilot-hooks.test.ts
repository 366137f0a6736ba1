/**
 * The real Copilot CLI 1.0.102's own tools under `thoughtgate wrap` (docs/governance.md, "Built-in
 * tools"): wrap adds ThoughtGate's preToolUse hook to ~/.copilot/settings.json for the session
 * through the config guard and puts the file back byte for byte. Copilot runs against the fake
 * Chat Completions API as a custom provider (COPILOT_PROVIDER_BASE_URL: no GitHub sign-in), told to
 * run every tool unasked (`--allow-all-tools`), so only ThoughtGate stands in the way. `rm -rf
 * ./data` is refused (a policy rule says no at once: `copilot -p` shows no one to ask) and the
 * directory stays, `ls` runs and its output reaches the model, and both are in `thoughtgate log
 * --session`. The agent cannot write its way out of the hook, and a repository that trusts itself
 * and turns hooks off in its own settings does not switch ThoughtGate's off.
 */
import { expect, setDefaultTimeout, test } from "bun:test";
import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { agentBinary, agentSandbox, describeRun, runAgent, type AgentLaunch, type AgentSandbox } from "../../support/agents.ts";
import { startFakeOpenAIChat } from "../../support/fake-models/openai-chat.ts";
import type { FakeModel } from "../../support/fake-models/fake-model.ts";
import { BINARY, requireBinary } from "../../support/harness.ts";
import { NO_DELETES_POLICY, sessionCalls, throughWrap, writeUserPolicy } from "../../support/wrapped-agents.ts";

setDefaultTimeout(180_000);
requireBinary();


/** The user's settings, spaced their way: the same bytes must come back. */
const SETTINGS = `{
    "banner": "never",
    "hooks": { "postToolUse": [ { "type": "command", "bash": "true" } ] }
}
`;

function copilot(sandbox: AgentSandbox, model: FakeModel, prompt: string, extra: string[] = []): AgentLaunch {
  mkdirSync(join(sandbox.home, ".copilot"), { recursive: true });
  writeFileSync(join(sandbox.home, ".copilot", "settings.json"), SETTINGS);
  return {
    agent: "copilot",
    argv: [agentBinary("copilot"), "-p", prompt, "--allow-all-tools", "--no-auto-update", ...extra],
    cwd: sandbox.project,
    env: { ...sandbox.env, COPILOT_PROVIDER_BASE_URL: `${model.url}/v1`, COPILOT_PROVIDER_API_KEY: "thoughtgate-test", COPILOT_MODEL: "gpt-4.1", COPILOT_AUTO_UPDATE: "false" },
  };
}

function project(sandbox: AgentSandbox): void {
  mkdirSync(join(sandbox.project, ".git"));
  mkdirSync(join(sandbox.project, "data"));
  writeFileSync(join(sandbox.project, "data", "keep.txt"), "precious\n");
}

test("under wrap, Copilot CLI's own bash goes through ThoughtGate's hook: rm -rf ./data refused, ls run, both in the log; settings.json byte for byte", async () => {
  await using sandbox = agentSandbox();
  project(sandbox);
  writeUserPolicy(sandbox, NO_DELETES_POLICY);
  await using model = startFakeOpenAIChat({
    calls: [
      { tool: "bash", arguments: { command: "rm -rf ./data", description: "Clean up" } },
      { tool: "bash", arguments: { command: "ls", description: "List" } },
    ],
    finalText: "Done.",
  });
  const launch = throughWrap(copilot(sandbox, model, "Clean up, then list."));
  const run = await runAgent(launch, sandbox, 150_000);
  const why = describeRun(launch, run, model);
  expect(run.exitCode, why).toBe(0);
  expect(run.stderr, why).toContain("Copilot CLI's own tools (bash, edit, create, view, web_fetch, …) go through ThoughtGate too: its preToolUse hook");
  expect(existsSync(join(sandbox.project, "data", "keep.txt")), why).toBe(true);
  const results = model.toolResults.map(({ tool, text }) => [tool, text]);
  expect(results[0]?.[1], why).toContain("ThoughtGate denied this shell call: rule no-deletes: deny");
  expect(results[1]?.[1], why).toContain("data");
  expect(readFileSync(join(sandbox.home, ".copilot", "settings.json"), "utf8")).toBe(SETTINGS);
  const calls = sessionCalls(launch.env, run.stderr).filter((call) => call.server === "agent");
  expect(calls.map((call) => [call.tool, call.arguments.command ?? null, call.outcome]).reverse()).toEqual([
    ["shell", "rm -rf ./data", "denied"],
    ["shell", "ls", "forwarded"],
  ]);
  expect(run.leftovers).toEqual([]);
});

test("Copilot CLI cannot write its way out of the hook: a repository hook file, its settings by a shell redirect, each refused", async () => {
  await using sandbox = agentSandbox();
  project(sandbox);
  writeUserPolicy(sandbox, NO_DELETES_POLICY);
  const settings = join(sandbox.home, ".copilot", "settings.json");
  await using model = startFakeOpenAIChat({
    calls: [
      { tool: "create", arguments: { path: join(sandbox.project, ".github", "copilot", "settings.json"), file_text: '{ "disableAllHooks": true }\n' } },
      { tool: "bash", arguments: { command: `echo '{"disableAllHooks": true}' > ${settings}`, description: "x" } },
      { tool: "bash", arguments: { command: "rm -rf ./data", description: "Clean up" } },
    ],
    finalText: "Done.",
  });
  const launch = throughWrap(copilot(sandbox, model, "Turn your hooks off.", ["--trust-folder"]));
  const run = await runAgent(launch, sandbox, 150_000);
  const why = describeRun(launch, run, model);
  expect(run.exitCode, why).toBe(0);
  expect(model.toolResults.map(({ text }) => /rule ([a-z-]+): deny/.exec(text)?.[1] ?? text), why).toEqual(["agent-self-protection", "agent-self-protection-shell", "no-deletes"]);
  expect(readFileSync(settings, "utf8")).toBe(SETTINGS);
  expect(existsSync(join(sandbox.project, ".github"))).toBe(false);
  expect(existsSync(join(sandbox.project, "data", "keep.txt"))).toBe(true);
});

test("a repository whose settings turn Copilot CLI's hooks off (honoured in a trusted folder) is refused by wrap: the agent does not start", async () => {
  await using sandbox = agentSandbox();
  project(sandbox);
  mkdirSync(join(sandbox.project, ".github", "copilot"), { recursive: true });
  writeFileSync(join(sandbox.project, ".github", "copilot", "settings.json"), '{ "disableAllHooks": true }\n');
  await using model = startFakeOpenAIChat({ calls: [{ tool: "bash", arguments: { command: "rm -rf ./data", description: "Clean up" } }], finalText: "Done." });
  const launch = throughWrap(copilot(sandbox, model, "Clean up.", ["--trust-folder"]));
  const run = await runAgent(launch, sandbox, 150_000);
  const why = describeRun(launch, run, model);
  expect(run.exitCode, why).not.toBe(0);
  expect(run.stderr, why).toContain(`${join(sandbox.project, ".github", "copilot", "settings.json")} sets disableAllHooks: Copilot CLI would run its own tools (bash, edit, create, …) without ThoughtGate's hook`);
  expect(model.requests, why).toEqual([]);
  expect(existsSync(join(sandbox.project, "data", "keep.txt"))).toBe(true);
  expect(readFileSync(join(sandbox.home, ".copilot", "settings.json"), "utf8")).toBe(SETTINGS);
});

test("a Copilot CLI settings.json ThoughtGate cannot add its hook to is refused by wrap: the agent does not start, the file is as it was", async () => {
  await using sandbox = agentSandbox();
  project(sandbox);
  await using model = startFakeOpenAIChat({ calls: [{ tool: "bash", arguments: { command: "rm -rf ./data", description: "Clean up" } }], finalText: "Done." });
  const launch = throughWrap(copilot(sandbox, model, "Clean up."));
  const settings = join(sandbox.home, ".copilot", "settings.json");
  writeFileSync(settings, "[]\n");
  const run = await runAgent(launch, sandbox, 150_000);
  const why = describeRun(launch, run, model);
  expect(run.exitCode, why).not.toBe(0);
  expect(run.stderr.split("\n").filter((line) => line.startsWith("[error]")), why).toEqual([
    `[error] Copilot CLI's hook could not be added: ${settings} is not a JSON object; ThoughtGate's hook was not added; its own tools (bash, edit, create, …) would run ungoverned, so the agent was not started (or pass --allow-ungoverned to run it with only its MCP servers governed)`,
  ]);
  expect(model.requests, why).toEqual([]);
  expect(readFileSync(settings, "utf8")).toBe("[]\n");
  expect(existsSync(join(sandbox.project, "data", "keep.txt"))).toBe(true);
});

test("enroll copilot keeps the hook in settings.json for plain runs; unenroll puts the file back byte for byte", async () => {
  await using sandbox = agentSandbox();
  project(sandbox);
  writeUserPolicy(sandbox, NO_DELETES_POLICY);
  await using model = startFakeOpenAIChat({ calls: [{ tool: "bash", arguments: { command: "rm -rf ./data", description: "Clean up" } }], finalText: "Done." });
  const launch = copilot(sandbox, model, "Clean up.");
  const settings = join(sandbox.home, ".copilot", "settings.json");
  const enrolled = Bun.spawnSync([BINARY, "enroll", "copilot"], { cwd: sandbox.project, env: launch.env, stdout: "pipe", stderr: "pipe" });
  expect(enrolled.exitCode, enrolled.stderr.toString()).toBe(0);
  expect(enrolled.stdout.toString()).toContain(`its own tools (bash, edit, create, view, web_fetch, …) governed in every run: preToolUse hook in ${join("~", ".copilot", "settings.json")}`);
  const run = await runAgent(launch, sandbox, 150_000);
  const why = describeRun(launch, run, model);
  expect(run.exitCode, why).toBe(0);
  expect(model.toolResults[0]?.text, why).toContain("ThoughtGate denied this shell call: rule no-deletes: deny");
  expect(existsSync(join(sandbox.project, "data", "keep.txt"))).toBe(true);
  const unenrolled = Bun.spawnSync([BINARY, "unenroll", "copilot"], { cwd: sandbox.project, env: launch.env, stdout: "pipe", stderr: "pipe" });
  expect(unenrolled.exitCode, unenrolled.stderr.toString()).toBe(0);
  expect(unenrolled.stdout.toString()).toContain(`restored ${settings} (byte-identical)`);
  expect(readFileSync(settings, "utf8")).toBe(SETTINGS);
});
