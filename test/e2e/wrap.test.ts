/**
 * `thoughtgate wrap` through the compiled binary: a fake agent reads its config and speaks MCP
 * (real SDK client) through the rewritten entry to server-everything; governance applies, the
 * agent's exit code comes back, and the config is restored on every exit path.
 */
import { afterEach, describe, expect, setDefaultTimeout, test } from "bun:test";
import type { Subprocess } from "bun";
import { existsSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { EVERYTHING_SERVER, fixture, isAlive, readEvents, requireBinary, tempDir, waitFor } from "../support/harness.ts";

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
    // through the shim path (a hard link in the state directory: shim-path.ts), and nothing of the
    // session: no endpoint, secret or record (the shim finds its session from the agent).
    expect(seen?.command).toMatch(/\/thoughtgate\/bin\/thoughtgate$/);
    expect(statSync(seen?.command).ino).toBe(statSync(requireBinary()).ino);
    expect(seen?.args).toEqual(["shim", "--server-id", "everything", "--", ...EVERYTHING_SERVER]);
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

  test("a server the user changed during the session stays as they made it, and wrap says so", async () => {
    using dir = tempDir();
    const files = setup(dir.path);
    const run = wrap(files, ["--call", 'echo:{"message":"x"}', "--wait"]);
    await waitFor(() => report(files.report)?.state === "ready", "the agent to be ready");
    // The user re-adds the server as another command meanwhile (an agent's `mcp add`, an editor).
    const rewritten = readFileSync(files.config, "utf8");
    const mine = `"everything": { "command": "node", "args": ["new-server.mjs", "--fixed"] }`;
    writeFileSync(files.config, rewritten.replace(/"everything": \{[^}]*\}/, mine));
    run.proc.kill("SIGTERM");
    await run.exit;
    expect(readFileSync(files.config, "utf8")).toBe(files.original.replace(/"everything": \{[^}]*\}/, mine));
    expect(run.stderr()).toContain("kept everything's command, args as you changed them since ThoughtGate rewrote them");
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

  test("two wraps of one config at once: both run and exit with their agent's code, each record holds its own calls, a plain run meanwhile joins neither, the config comes back byte for byte", async () => {
    using dir = tempDir();
    const files = setup(dir.path);
    const reportOf = (name: string) => ({ ...files, report: join(dir.path, `${name}.json`) });
    // Started together: their rewrites take turns under the configs lock, the second joining the first's.
    const first = wrap(reportOf("first"), ["--call", 'echo:{"message":"first"}', "--wait", "--exit", "3"]);
    const second = wrap(reportOf("second"), ["--call", 'get-sum:{"a":1,"b":2}', "--wait", "--exit", "4"]);
    for (const name of ["first", "second"]) await waitFor(() => report(join(dir.path, `${name}.json`))?.state === "ready", `the ${name} agent to be ready`);
    // A plain run of the agent meanwhile, reading the same (rewritten) config.
    const plain = Bun.spawn(fixture("wrap-agent-fixture.ts", files.config, join(dir.path, "plain.json"), "--call", "get-tiny-image"), { stdin: "ignore", stdout: "ignore", stderr: "pipe" });
    expect(await plain.exited).toBe(0);
    expect(report(join(dir.path, "plain.json"))?.results["get-tiny-image"]).toMatchObject({ ok: expect.any(Array) });
    process.kill(report(join(dir.path, "first.json"))?.pid, "SIGTERM");
    expect(await first.exit).toBe(3);
    // The second session still uses it.
    expect(readFileSync(files.config, "utf8")).toContain('"shim"');
    process.kill(report(join(dir.path, "second.json"))?.pid, "SIGTERM");
    expect(await second.exit).toBe(4);

    const recordOf = (run: Wrap) => /session record (\S+)/.exec(run.stderr())?.[1] ?? "missing";
    const tools = (path: string) => readEvents(path).filter((event) => event.type === "tool_call_start").map((event) => event.tool);
    expect({ first: tools(recordOf(first)), second: tools(recordOf(second)) }).toEqual({ first: ["echo"], second: ["get-sum"] });
    // The plain run's shim governed on its own: its audit is its own, under the state directory.
    const own = new Bun.Glob("**/*.jsonl").scanSync({ cwd: join(process.env.HOME ?? "", ".local", "state", "thoughtgate", "runs"), absolute: true });
    expect([...own].flatMap(tools)).toContain("get-tiny-image");
    expect(readFileSync(files.config, "utf8")).toBe(files.original);
    for (const suffix of [".thoughtgate-backup", ".thoughtgate-lock"]) expect(existsSync(files.config + suffix)).toBe(false);
    expect(second.stderr()).toContain(`restored ${files.config} (byte-identical)`);
    expect(first.stderr()).toContain(`left ${files.config} rewritten for wrap pid ${second.proc.pid}`);
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
    expect(stdout).toContain("  → the demo's scripted user, standing in for you, reads it and answers: deny");
    // Each decision line names its call by the short id `thoughtgate log --show` takes: a line printed late is still tied to its call.
    const denied = /notes\.delete_notes ([0-9a-f]{8}): DENIED \(rule default-destructive: approval required: rejected by the person in the agent's prompt\)/.exec(stderr)?.[1];
    expect(denied).toBeDefined();
    // An agent that cannot ask (claude -p): the call waits for the page and the CLI, where the person approves.
    expect(stdout).toContain("  ? an agent that cannot show a form (claude -p, codex exec) answers it itself at once, unread: no person was asked, so the call waits for you elsewhere");
    expect(stdout).not.toContain("the user answers");
    expect(stderr).toContain("demo: the call now waits for you: on the approvals page (the link above), in a desktop notification where there is one, or in another terminal:");
    const task = /\n {2}\$ thoughtgate approve ([0-9a-f]{12})\n/.exec(stderr)?.[1];
    expect(task).toBeDefined();
    expect(stderr).toMatch(new RegExp(`\\n {2}\\$ thoughtgate tasks\\n(.*\\n)* {4}${task} +pending +notes\\.delete_notes +default-destructive `));
    expect(stderr).toContain(`\n    approved ${task}: notes.delete_notes\n`);
    const approved = /notes\.delete_notes ([0-9a-f]{8}): forwarded \(rule default-destructive: approval required: approved \(cli\)\)/.exec(stderr)?.[1];
    expect(approved).toBeDefined();
    expect(approved).not.toBe(denied);
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
