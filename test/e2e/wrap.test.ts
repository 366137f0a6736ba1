/**
 * `thoughtgate wrap` through the compiled binary: a fake agent reads its config and speaks MCP
 * (real SDK client) through the rewritten entry to server-everything; governance applies, the
 * agent's exit code comes back, and the config is restored on every exit path.
 */
import { afterEach, describe, expect, setDefaultTimeout, test } from "bun:test";
import type { Subprocess } from "bun";
import { existsSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { EVERYTHING_SERVER, fixture, isAlive, requireBinary, tempDir, waitFor } from "../support/harness.ts";

setDefaultTimeout(60_000);
requireBinary();

const ORIGINAL = (server: string[]) => `{
  // the fake agent's MCP servers
  "mcpServers": {
    "everything": { "command": ${JSON.stringify(server[0])}, "args": ${JSON.stringify(server.slice(1))} },
    "remote": { "url": "https://example.invalid/mcp" }, // governed too (shim --url); this agent never starts it
  },
}
`;
const POLICY = "schema: 1\ngovernance:\n  rules: [{ id: no-env, match: get-env, action: deny }]\n";

/** `exit`: wrap exited and its stderr is drained (children that outlive it hold stderr open: use `proc.exited` then). */
type Wrap = { proc: Subprocess<"ignore", "pipe", "pipe">; stderr: () => string; exit: Promise<number> };
const running: Wrap[] = [];
const strays: number[] = [];
afterEach(async () => {
  for (const wrap of running.splice(0)) {
    if (wrap.proc.exitCode === null) wrap.proc.kill("SIGTERM");
    await wrap.proc.exited;
  }
  for (const pid of strays.splice(0)) if (isAlive(pid)) process.kill(pid, "SIGKILL");
});

function setup(dir: string) {
  const config = join(dir, "mcp.json");
  const policy = join(dir, "thoughtgate.yaml");
  const report = join(dir, "report.json");
  writeFileSync(config, ORIGINAL(EVERYTHING_SERVER));
  writeFileSync(policy, POLICY);
  return { config, policy, report, original: ORIGINAL(EVERYTHING_SERVER) };
}

function wrap(files: ReturnType<typeof setup>, agentArgs: string[], extra: string[] = []): Wrap {
  const proc = Bun.spawn(
    [requireBinary(), "wrap", "--agent-type", "custom", "--config-path", files.config, "--thoughtgate-config", files.policy, ...extra, "--",
      ...fixture("wrap-agent-fixture.ts", files.config, files.report, ...agentArgs)],
    { stdin: "ignore", stdout: "pipe", stderr: "pipe" },
  );
  let stderr = "";
  const reading = (async () => {
    for await (const chunk of proc.stderr) stderr += new TextDecoder().decode(chunk);
  })();
  const exit = proc.exited.then(async (code) => {
    await reading;
    return code;
  });
  const handle = { proc, stderr: () => stderr, exit };
  running.push(handle);
  return handle;
}

const report = (path: string) => (existsSync(path) ? (JSON.parse(readFileSync(path, "utf8")) as Record<string, any>) : null);

describe("thoughtgate wrap", () => {
  test("governs the agent's calls, returns its exit code and restores the config byte for byte", async () => {
    using dir = tempDir();
    const files = setup(dir.path);
    const run = wrap(files, ["--call", 'echo:{"message":"hi"}', "--call", "get-env", "--exit", "7"]);
    expect(await run.exit).toBe(7);
    const seen = report(files.report);
    expect(seen?.thoughtgateActive).toBe("1");
    // The agent started the rewritten entry: this binary's shim in front of the original command,
    // through the session's pin of the binary (a hard link in the state directory: shim-path.ts).
    expect(seen?.command).toMatch(/\/thoughtgate\/bin\/[^/]+\/thoughtgate$/);
    expect(statSync(seen?.command).ino).toBe(statSync(requireBinary()).ino);
    expect(seen?.args).toEqual(expect.arrayContaining(["shim", "--server-id", "everything", "--", ...EVERYTHING_SERVER]));
    expect(seen?.results.echo).toEqual({ ok: [{ type: "text", text: "Echo: hi" }] });
    expect(seen?.results["get-env"]).toMatchObject({ code: -32014, data: { rule_id: "no-env" } });
    expect(readFileSync(files.config, "utf8")).toBe(files.original);
    for (const suffix of [".thoughtgate-backup", ".thoughtgate-lock"]) expect(existsSync(files.config + suffix)).toBe(false);
    expect(run.stderr()).toMatch(/everything\s+custom\s+\S+\s+yes/);
    expect(run.stderr()).toContain("remote");
    expect(run.stderr()).toMatch(/tool calls\s+2/);
    expect(run.stderr()).toMatch(/denied\s+1/);
  });

  for (const signal of ["SIGTERM", "SIGINT"] as const) {
    test(`${signal} to wrap stops the agent and restores the config`, async () => {
      using dir = tempDir();
      const files = setup(dir.path);
      const run = wrap(files, ["--call", 'echo:{"message":"x"}', "--wait"]);
      await waitFor(() => report(files.report)?.state === "ready", "the agent to be ready");
      expect(readFileSync(files.config, "utf8")).toContain("shim");
      run.proc.kill(signal);
      await run.exit;
      expect(readFileSync(files.config, "utf8")).toBe(files.original);
      expect(isAlive(report(files.report)?.pid)).toBe(false);
    });
  }

  test("an agent that crashes: wrap passes its status on and restores", async () => {
    using dir = tempDir();
    const files = setup(dir.path);
    const run = wrap(files, ["--call", 'echo:{"message":"x"}', "--crash"]);
    expect(await run.exit).toBe(128 + 9);
    expect(readFileSync(files.config, "utf8")).toBe(files.original);
  });

  test("the agent's own edits during the session survive the restore", async () => {
    using dir = tempDir();
    const files = setup(dir.path);
    const run = wrap(files, ["--call", 'echo:{"message":"x"}', "--edit-config"]);
    expect(await run.exit).toBe(0);
    const after = readFileSync(files.config, "utf8");
    expect(after).toContain('"agentSetting": "kept"');
    expect(after).not.toContain("thoughtgate");
    expect(after).toContain(`"everything": { "command": ${JSON.stringify(EVERYTHING_SERVER[0])}, "args": ${JSON.stringify(EVERYTHING_SERVER.slice(1))} }`);
    expect(run.stderr()).toContain("kept the agent's own changes");
  });

  test("kill -9 of wrap leaves the config rewritten; thoughtgate unwrap puts it back", async () => {
    using dir = tempDir();
    const files = setup(dir.path);
    const run = wrap(files, ["--wait"]);
    await waitFor(() => report(files.report)?.state === "ready", "the agent to be ready");
    strays.push(report(files.report)?.pid);
    run.proc.kill("SIGKILL");
    await run.proc.exited;
    expect(readFileSync(files.config, "utf8")).toContain("shim");
    const unwrap = Bun.spawnSync([requireBinary(), "unwrap", "--config-path", files.config]);
    expect({ code: unwrap.exitCode, out: unwrap.stdout.toString(), err: unwrap.stderr.toString() }).toMatchObject({ code: 0 });
    expect(readFileSync(files.config, "utf8")).toBe(files.original);
  });

  test("a second wrap of the same config exits with the lock error", async () => {
    using dir = tempDir();
    const files = setup(dir.path);
    const first = wrap(files, ["--wait"]);
    await waitFor(() => report(files.report)?.state === "ready", "the first agent to be ready");
    const second = Bun.spawnSync([requireBinary(), "wrap", "--agent-type", "custom", "--config-path", files.config, "--", "true"]);
    expect({ code: second.exitCode, err: second.stderr.toString() }).toMatchObject({ code: 1, err: expect.stringContaining(`is being wrapped by pid ${first.proc.pid}`) });
    first.proc.kill("SIGTERM");
    await first.exit;
    expect(readFileSync(files.config, "utf8")).toBe(files.original);
  });

  test("--dry-run prints the rewrite as a diff on stdout (the tables on stderr) and changes nothing", () => {
    using dir = tempDir();
    const files = setup(dir.path);
    const result = Bun.spawnSync([requireBinary(), "wrap", "--dry-run", "--agent-type", "custom", "--config-path", files.config, "--", "true"]);
    expect(result.exitCode).toBe(0);
    const diff = result.stdout.toString();
    expect(diff).toStartWith("Index: " + files.config);
    expect(diff).toContain("--- " + files.config);
    expect(diff).toMatch(/^\+.*"shim"/m);
    const said = result.stderr.toString();
    expect(said).toContain("nothing was changed");
    expect(said).not.toContain("--- " + files.config);
    expect(readFileSync(files.config, "utf8")).toBe(files.original);
  });

  test("an agent wrap cannot recognise needs --agent-type (exit 2)", () => {
    const result = Bun.spawnSync([requireBinary(), "wrap", "--", "some-editor"]);
    expect(result.exitCode).toBe(2);
    expect(result.stderr.toString()).toContain("--agent-type");
  });
});

describe("thoughtgate demo", () => {
  test("runs the scripted agent through a real wrap, shows both routes to a person, restores its config and ends with what to try next", () => {
    const result = Bun.spawnSync([requireBinary(), "demo"], { env: { ...process.env, THOUGHTGATE_DESKTOP_NOTIFY: "0" } });
    const [stdout, stderr] = [result.stdout.toString(), result.stderr.toString()];
    expect(result.exitCode).toBe(0);
    // The agent's own form: the person denies there.
    expect(stdout).toContain("  ? the agent shows ThoughtGate's question in its own form: ");
    expect(stdout).toContain("  → the user answers: deny");
    expect(stderr).toContain("notes.delete_notes: DENIED (rule default-destructive: approval required: rejected (elicitation))");
    // An agent that cannot ask (claude -p): the call waits for the page and the CLI, where the person approves.
    expect(stdout).toContain("  ? an agent that cannot ask anyone (claude -p, codex exec) answers the form at once, unread: no answer");
    expect(stderr).toContain("demo: the call now waits for you: on the approvals page (the link above), in a desktop notification where there is one, or in another terminal:");
    const task = /\n {2}\$ thoughtgate approve ([0-9a-f]{12})\n/.exec(stderr)?.[1];
    expect(task).toBeDefined();
    expect(stderr).toMatch(new RegExp(`\\n {2}\\$ thoughtgate tasks\\n(.*\\n)* {4}${task} +pending +notes\\.delete_notes +default-destructive `));
    expect(stderr).toContain(`\n    approved ${task}: notes.delete_notes\n`);
    expect(stderr).toContain("notes.delete_notes: forwarded (rule default-destructive: approval required: approved (cli))");
    expect(stdout).toContain("deleted 2 notes");
    expect(stderr).toContain("back, byte for byte");
    // It ends with the three commands to try next, each one that exists.
    const next = stderr.slice(stderr.lastIndexOf("\nnext:\n") + "\nnext:\n".length).trimEnd().split("\n");
    expect(next.map((line) => line.split(/ {2,}/)[1])).toEqual(["thoughtgate doctor", "thoughtgate wrap -- claude", "thoughtgate validate-config --explain"]);
    for (const line of next) {
      const words = (line.trim().split(/ {2,}/)[0] ?? "").split(" ").slice(1);
      const ours = words.includes("--") ? words.slice(0, words.indexOf("--")) : words;
      expect(Bun.spawnSync([requireBinary(), ...ours, "--help"]).exitCode).toBe(0);
    }
  });
});
