/**
 * `thoughtgate arbiter` through the compiled binary, with a fake codecli (docs/codecli-protocol.md) as the child:
 * decisions by the engine, approvals on a pseudo terminal (util-linux `script`), the no-terminal
 * default, timeouts, the §6 per-id rules, aborts, malformed events, a child that dies or stops
 * reading, and output order under load.
 */
import { afterEach, describe, expect, setDefaultTimeout, test } from "bun:test";
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { fixture, processesWith, readEvents, requireBinary, tempDir, waitFor } from "../support/harness.ts";
import { hasScript, runInTerminal, type Terminal } from "../support/terminal.ts";

setDefaultTimeout(60_000);
const binary = requireBinary();

type Step = Record<string, unknown>;
/** `yaml`: the policy file; absent, one that forwards everything; null, none at all (the embedded default). */
type Setup = { steps: Step[]; yaml?: string | null; args?: string[]; prefix?: string };
type Events = Array<Record<string, unknown>>;

const RFC3339 = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?(Z|[+-]\d{2}:\d{2})$/;
const PROMPT = "[y]es / [N]o / [a]bort";
const ASK_WRITES = "schema: 1\ngovernance:\n  rules:\n    - { id: ask, match: fs.write, action: approve }\n";
const NO_SHELL = "schema: 1\ngovernance:\n  rules:\n    - { id: no-shell, match: \"shell.*\", action: deny }\n";
const FORWARD_ALL = "schema: 1\ngovernance:\n  defaults: { action: forward }\n";

const started: Array<{ kill(signal?: NodeJS.Signals): void; exited: Promise<number> }> = [];
afterEach(async () => {
  for (const proc of started.splice(0)) {
    proc.kill("SIGTERM");
    await proc.exited;
  }
});

const waited = (id: string | number, tool: string, extra: Step = {}): Step => ({ request: { id, tool, requires_policy: true, ...extra } });
const rawRequest = (id: string, tool: string, extra: Step = {}) => JSON.stringify({ v: 1, type: "tool.request", id, tool, requires_policy: true, ...extra });

function prepare(dir: string, setup: Setup): { command: string[]; marker: string; events: string } {
  const marker = `tg-codecli-${crypto.randomUUID()}`;
  const events = join(dir, "events.jsonl");
  writeFileSync(join(dir, "steps.json"), JSON.stringify(setup.steps));
  const args = ["arbiter", "--events", events, ...(setup.args ?? [])];
  if (setup.yaml !== null) {
    writeFileSync(join(dir, "thoughtgate.yaml"), setup.yaml ?? FORWARD_ALL);
    args.push("--thoughtgate-config", join(dir, "thoughtgate.yaml"));
  }
  if (setup.prefix) args.push("--event-prefix", setup.prefix);
  const child = fixture("codecli-fixture.ts", "--steps", join(dir, "steps.json"), "--marker", marker, ...(setup.prefix ? ["--prefix", setup.prefix] : []));
  return { command: [binary, ...args, "--", ...child], marker, events };
}

/** Spawned in a session of its own: no controlling terminal, as in CI. */
function spawnDetached(command: string[], cwd: string) {
  const proc = Bun.spawn(command, { cwd, stdout: "pipe", stderr: "pipe", detached: true });
  started.push(proc);
  let stdout = "";
  let stderr = "";
  const decoder = () => new TextDecoder();
  const out = decoder();
  const err = decoder();
  const reading = Promise.all([
    (async () => {
      for await (const chunk of proc.stdout) stdout += out.decode(chunk, { stream: true });
    })(),
    (async () => {
      for await (const chunk of proc.stderr) stderr += err.decode(chunk, { stream: true });
    })(),
  ]);
  return { proc, stdout: () => stdout, stderr: () => stderr, done: async () => ({ code: await proc.exited, read: await reading }) };
}

async function run(dir: string, setup: Setup) {
  const { command, marker, events } = prepare(dir, setup);
  const session = spawnDetached(command, dir);
  const { code } = await session.done();
  expect(processesWith(marker)).toEqual([]);
  const stdout = session.stdout();
  return { code, stdout, stderr: session.stderr(), lines: lines(stdout), events: readEvents(events) };
}

function lines(text: string): string[] {
  return text.split(/\r?\n/).filter((line) => line.length > 0);
}

const ofType = (events: Events, type: string) => events.filter((event) => event.type === type);
const summaryOf = (events: Events) => ofType(events, "run_end")[0]?.summary as Record<string, number>;

function inTerminal(dir: string, setup: Setup): Terminal & { marker: string; events: string; stdout(): string[] } {
  const { command, marker, events } = prepare(dir, setup);
  const terminal = runInTerminal(command, { cwd: dir, outDir: dir });
  started.push({ kill: (signal) => terminal.kill(signal), exited: terminal.exited });
  return { ...terminal, marker, events, stdout: () => lines(readFileSync(terminal.stdoutFile, "utf8")) };
}

describe("decisions", () => {
  test("allow: waited requests are decided by the engine, unwaited ones audited; ping first, output through in order", async () => {
    using dir = tempDir();
    const { code, lines: out, stderr, events } = await run(dir.path, {
      steps: [
        { ping: true },
        { say: "planning" },
        waited("t-1", "fs.read", { action: "read", args: { path: "README.md" } }),
        { err: "warming up" },
        { request: { id: "t-2", tool: "fs.list", requires_policy: false } },
        { ...waited(3, "fs.stat"), stream: "stderr" },
        { show: "t-1" },
        { say: "bye" },
      ],
    });
    expect(code).toBe(0);
    const decision = JSON.parse((out.find((line) => line.startsWith("decision ")) ?? "").slice("decision ".length));
    expect(out.filter((line) => !line.startsWith("decision "))).toEqual([
      `ping {"id":"ping-1","capabilities":["policy.decision.v1","policy.ping.v1","policy.abort.v1"],"timeout_ms":300000}`,
      "planning",
      `executed fs.read {"path":"README.md"}`,
      "executed fs.list {} (unwaited)",
      "executed fs.stat {}",
      "bye",
      "done",
    ]);
    const runId = events[0]?.run_id;
    expect(decision).toEqual({ v: 1, type: "policy.decision", ts: expect.stringMatching(RFC3339), run_id: runId, id: "t-1", decision: "allow", reason: "rule defaults: forward", rule_id: "defaults" });
    expect(stderr).toContain("warming up");
    expect(stderr).not.toContain("tool.request");
    // stdout and stderr are read independently: between the two streams there is no order.
    expect(ofType(events, "tool_call_decision").map((e) => [e.tool, e.decision, e.rule_id]).sort()).toEqual([
      ["fs.list", "forward", "defaults"],
      ["fs.read", "forward", "defaults"],
      ["fs.stat", "forward", "defaults"],
    ]);
    expect(ofType(events, "tool_call_start").find((e) => e.request_id === "t-2")).toMatchObject({ tool: "fs.list", requires_policy: false });
    expect(summaryOf(events)).toMatchObject({ requests_total: 3, requests_unwaited: 1, allowed: 2, denied: 0, control_lines: 3 });
    expect(ofType(events, "run_end")[0]).toMatchObject({ status: "child_exited", exit_code: 0 });
  });

  test("deny: a rule in thoughtgate.yaml refuses the call with its reason and rule id", async () => {
    using dir = tempDir();
    const { code, lines: out, events } = await run(dir.path, {
      yaml: NO_SHELL,
      steps: [waited("s-1", "shell.exec", { action: "exec", args: { cmd: "rm -rf /" } }), waited("s-2", "fs.read"), { show: "s-1" }],
    });
    expect(code).toBe(0);
    expect(out.slice(0, 2)).toEqual(["skipped shell.exec (deny: rule no-shell: deny) [rule no-shell]", "executed fs.read {}"]);
    expect(JSON.parse(out[2]?.slice("decision ".length) ?? "")).toMatchObject({ id: "s-1", decision: "deny", reason: "rule no-shell: deny", rule_id: "no-shell" });
    expect(ofType(events, "tool_call_decision")[0]).toMatchObject({ tool: "shell.exec", decision: "deny", gate: "rules", rule_id: "no-shell" });
    expect(ofType(events, "tool_call_end")[0]).toMatchObject({ tool: "shell.exec", status: "denied" });
  });

  test("the rules' source is the request's server, else --server-id", async () => {
    using dir = tempDir();
    const yaml = "schema: 1\ngovernance:\n  rules:\n    - { id: no-github-writes, match: \"*\", source: github, action: deny }\n";
    const { lines: out } = await run(dir.path, {
      yaml,
      args: ["--server-id", "local"],
      steps: [waited("g-1", "create_issue", { server: "github" }), waited("g-2", "create_issue")],
    });
    expect(out.slice(0, 2)).toEqual(["skipped create_issue (deny: rule no-github-writes: deny) [rule no-github-writes]", "executed create_issue {}"]);
    const renamed = await run(dir.path, { yaml, args: ["--server-id", "github"], steps: [waited("g-3", "create_issue")] });
    expect(renamed.lines[0]).toStartWith("skipped create_issue");
  });

  test("development: what production denies is allowed, with WOULD_BLOCK in the log and the events", async () => {
    using dir = tempDir();
    const { lines: out, stderr, events } = await run(dir.path, { yaml: NO_SHELL, args: ["--profile", "development"], steps: [waited("s-1", "shell.exec")] });
    expect(out[0]).toBe("executed shell.exec {}");
    expect(stderr).toContain("WOULD_BLOCK shell.exec: WOULD_BLOCK: rule no-shell: deny");
    expect(ofType(events, "tool_call_decision")[0]).toMatchObject({ decision: "forward", would: "WOULD_BLOCK", rule_id: "no-shell" });
  });
});

describe("approvals", () => {
  test("with no policy file, a codecli tool (no annotations: possibly destructive) needs approval; no terminal denies it", async () => {
    using dir = tempDir();
    const { lines } = await run(dir.path, { yaml: null, steps: [waited("r-1", "fs.read", { args: { path: "a" } })] });
    expect(lines[0]).toBe(
      "skipped fs.read (deny: rule default-destructive: approval required; the tool declares no annotations, so MCP's defaults apply: not read-only, destructive: no terminal to ask on; --default-action deny) [rule default-destructive]",
    );
  });

  test("no terminal: --default-action applies (deny unless told allow)", async () => {
    using dir = tempDir();
    const steps = [waited("w-1", "fs.write", { args: { path: "a" } })];
    const denied = await run(dir.path, { yaml: ASK_WRITES, steps });
    expect(denied.lines[0]).toBe("skipped fs.write (deny: rule ask: approval required: no terminal to ask on; --default-action deny) [rule ask]");
    const allowed = await run(dir.path, { yaml: ASK_WRITES, steps, args: ["--default-action", "allow"] });
    expect(allowed.lines[0]).toBe('executed fs.write {"path":"a"}');
    expect(ofType(allowed.events, "tool_call_decision").at(-1)).toMatchObject({ decision: "forward", approved_by: "default_action" });
  });

  test.skipIf(!hasScript())("asked on the terminal with redacted args: y allows, n denies; a repeated request while pending is ignored", async () => {
    using dir = tempDir();
    const args = { path: "notes.txt", api_key: "sk-live-123", headers: { Authorization: "Bearer abc" } };
    const terminal = inTerminal(dir.path, {
      yaml: ASK_WRITES,
      steps: [{ raw: rawRequest("w-1", "fs.write", { action: "write", args }) }, { raw: rawRequest("w-1", "fs.write", { action: "write", args }) }, waited("w-1", "fs.write", { action: "write", args }), waited("w-2", "fs.write", { args: { path: "b" } }), { count: "w-1" }],
    });
    await terminal.waitForText(PROMPT);
    expect(terminal.screen()).toContain("codecli wants to run fs.write (action: write)");
    expect(terminal.screen()).toContain('api_key: "[REDACTED:secret_field]"');
    expect(terminal.screen()).toContain('headers: {"Authorization":"[REDACTED:secret_field]"}');
    expect(terminal.screen()).not.toContain("sk-live-123");
    terminal.type("y\n");
    await terminal.waitForText(PROMPT, 2);
    terminal.type("n\n");
    expect(await terminal.exited).toBe(0);
    expect(terminal.stdout()).toEqual([
      `executed fs.write ${JSON.stringify(args)}`,
      "skipped fs.write (deny: rule ask: approval required: denied on the terminal) [rule ask]",
      "decisions for w-1: 1",
      "done",
    ]);
    const events = readEvents(terminal.events);
    expect(ofType(events, "protocol_warning").map((e) => [e.warning, e.request_id])).toEqual([["duplicate_request", "w-1"], ["duplicate_request", "w-1"]]);
    expect(ofType(events, "tool_call_decision").map((e) => [e.decision, e.approved_by ?? null])).toEqual([["pending", null], ["forward", "terminal"], ["pending", null], ["deny", null]]);
    expect(summaryOf(events)).toMatchObject({ approved: 1, denied: 1, duplicate_requests: 2 });
  });

  test.skipIf(!hasScript())("--decision-timeout denies a question nobody answers", async () => {
    using dir = tempDir();
    const terminal = inTerminal(dir.path, { yaml: ASK_WRITES, args: ["--decision-timeout", "300ms"], steps: [waited("w-1", "fs.write")] });
    expect(await terminal.exited).toBe(0);
    expect(terminal.stdout()[0]).toBe("skipped fs.write (deny: policy timeout: no decision in 300 ms) [rule ask]");
    expect(terminal.screen()).toContain("(no longer needed)");
    expect(summaryOf(readEvents(terminal.events))).toMatchObject({ timed_out: 1, denied: 1 });
  });

  test.skipIf(!hasScript())("a workflow's own timeout applies its on_timeout", async () => {
    using dir = tempDir();
    const yaml = `schema: 1
approval:
  quick: { timeout: 200ms, on_timeout: approve }
governance:
  rules: [{ id: ask, match: fs.write, action: approve, approval: quick }]
`;
    const terminal = inTerminal(dir.path, { yaml, steps: [waited("w-1", "fs.write")] });
    expect(await terminal.exited).toBe(0);
    expect(terminal.stdout()[0]).toBe("executed fs.write {}");
    expect(ofType(readEvents(terminal.events), "tool_call_decision").at(-1)).toMatchObject({ decision: "forward", approved_by: "timeout" });
  });
});

describe("abort", () => {
  for (const [how, keys] of [
    ["answering a", "a\n"],
    ["Ctrl+C", "\x03"],
  ] as const) {
    test.skipIf(!hasScript())(`${how} at the prompt: the call is denied, policy.abort user_cancel is sent, the child's exit code is ours`, async () => {
      using dir = tempDir();
      // The child waits until it is told to stop: only policy.abort ends it.
      const terminal = inTerminal(dir.path, { yaml: ASK_WRITES, steps: [waited("w-1", "fs.write"), { hang: true }] });
      await terminal.waitForText(PROMPT);
      terminal.type(keys);
      expect(await terminal.exited).toBe(3);
      expect(terminal.stdout()).toContain("aborted: user_cancel: the user aborted the session at the approval of fs.write");
      expect(processesWith(terminal.marker)).toEqual([]);
      const events = readEvents(terminal.events);
      expect(ofType(events, "policy_abort")).toMatchObject([{ code: "user_cancel", delivered: true }]);
      expect(ofType(events, "tool_call_decision").at(-1)).toMatchObject({ decision: "deny", reason: "rule ask: approval required: the user aborted the session" });
      expect(ofType(events, "run_end")[0]).toMatchObject({ status: "aborted", exit_code: 3 });
    });
  }

  test("a tool run without waiting that the policy denies: policy.abort policy_violation", async () => {
    using dir = tempDir();
    const { code, lines: out, events } = await run(dir.path, { yaml: NO_SHELL, steps: [{ request: { id: "u-1", tool: "shell.exec", requires_policy: false } }, { hang: true }] });
    expect(code).toBe(3);
    expect(out).toEqual([
      "executed shell.exec {} (unwaited)",
      "aborted: policy_violation: shell.exec ran without waiting for a decision, but the policy does not allow it unasked (rule no-shell: deny)",
    ]);
    expect(ofType(events, "policy_abort")).toMatchObject([{ code: "policy_violation", delivered: true }]);
  });

  test("SIGTERM to the arbiter: policy.abort, then the staged shutdown; the child's code is ours", async () => {
    using dir = tempDir();
    const { command, marker, events } = prepare(dir.path, { steps: [{ say: "ready" }, { hang: true }] });
    const session = spawnDetached(command, dir.path);
    await waitFor(() => session.stdout().includes("ready"), "the child to start");
    session.proc.kill("SIGTERM");
    const { code } = await session.done();
    // The child exits 3 on policy.abort, or dies of the SIGTERM that follows it at once.
    expect([3, 143]).toContain(code);
    expect(processesWith(marker)).toEqual([]);
    const all = readEvents(events);
    expect(ofType(all, "policy_abort")).toMatchObject([{ code: "user_cancel", reason: "thoughtgate arbiter received SIGTERM" }]);
    expect(ofType(all, "run_end")[0]).toMatchObject({ status: "aborted", exit_code: code });
  });
});

describe("the child", () => {
  test("one that closes its stdin can no longer be controlled: the arbiter stops it and exits 1", async () => {
    using dir = tempDir();
    const { code, stderr, events } = await run(dir.path, { steps: [{ close_stdin: true }, { raw: rawRequest("z-1", "fs.read") }, { hang: true }] });
    expect(code).toBe(1);
    expect(stderr).toContain("the child can no longer be controlled");
    expect(ofType(events, "policy_abort")).toMatchObject([{ code: "fatal_error", delivered: false }]);
    expect(ofType(events, "run_end")[0]).toMatchObject({ status: "transport_failed", exit_code: 1 });
  });

  test("one that exits while its request waits: its exit code is ours", async () => {
    using dir = tempDir();
    const { code, stderr } = await run(dir.path, { yaml: ASK_WRITES, steps: [{ raw: rawRequest("x-1", "fs.write") }, { exit: 7 }] });
    expect(code).toBe(7);
    expect(stderr).not.toContain("can no longer be controlled");
  });

  test.skipIf(!hasScript())("one killed while its approval is on the terminal: the question is withdrawn, nothing is left behind", async () => {
    using dir = tempDir();
    const terminal = inTerminal(dir.path, { yaml: ASK_WRITES, steps: [{ pid: true }, waited("w-1", "fs.write")] });
    await terminal.waitForText(PROMPT);
    const pid = Number((terminal.stdout()[0] ?? "").replace("pid ", ""));
    expect(pid).toBeGreaterThan(0);
    process.kill(pid, "SIGKILL");
    expect(await terminal.exited).toBe(137);
    expect(terminal.screen()).toContain("(no longer needed)");
    expect(processesWith(terminal.marker)).toEqual([]);
    const events = readEvents(terminal.events);
    expect(ofType(events, "tool_call_end")).toMatchObject([{ tool: "fs.write", status: "cancelled" }]);
    expect(ofType(events, "run_end")[0]).toMatchObject({ status: "child_exited", exit_code: 137 });
  });

  test("a command that cannot start is an error, not a hang", async () => {
    using dir = tempDir();
    const proc = Bun.spawn([binary, "arbiter", "--", join(dir.path, "no-such-codecli")], { stdout: "pipe", stderr: "pipe", detached: true });
    started.push(proc);
    expect(await proc.exited).toBe(1);
    expect(await new Response(proc.stderr).text()).toContain("cannot start");
  });
});

describe("the protocol", () => {
  test("malformed event lines are counted and passed through, never fatal", async () => {
    using dir = tempDir();
    const malformed = [
      "@@tg {not json",
      "@@tg [1,2]",
      `@@tg {"v":1,"type":"tool.request","id":"m-1"}`,
      `@@tg {"v":2,"type":"tool.request","id":"m-2","tool":"x"}`,
    ];
    const { code, lines: out, events } = await run(dir.path, {
      prefix: "@@tg ",
      steps: [...malformed.map((raw) => ({ raw })), { raw: rawRequest("m-3", "x") }, { say: "@@t almost the prefix" }, waited("ok-1", "fs.read")],
    });
    expect(code).toBe(0);
    expect(out).toEqual([...malformed, rawRequest("m-3", "x"), "@@t almost the prefix", "executed fs.read {}", "done"]);
    expect(ofType(events, "malformed_event").map((e) => [e.stream, e.error])).toEqual([
      ["stdout", "InvalidJson"],
      ["stdout", "NotAnObject"],
      ["stdout", "InvalidEvent"],
      ["stdout", "UnsupportedVersion"],
    ]);
    expect(ofType(events, "malformed_event")[2]?.detail).toBe("tool: missing");
    expect(summaryOf(events)).toMatchObject({ malformed_events: 4, requests_total: 1, allowed: 1 });
  });

  test("a repeated id after its decision gets no second decision; a result for an unknown id is warned about", async () => {
    using dir = tempDir();
    const { lines: out, stderr, events } = await run(dir.path, {
      steps: [waited("d-1", "fs.read"), { raw: rawRequest("d-1", "fs.read") }, waited("d-2", "fs.read"), { count: "d-1" }, { result: { id: "ghost", ok: true } }],
    });
    expect(out).toContain("decisions for d-1: 1");
    expect(stderr).toContain(`id "d-1": tool.request for an id already seen (completed); ignored`);
    expect(stderr).toContain(`id "ghost": tool.result for an id no tool.request announced`);
    expect(ofType(events, "protocol_warning").map((e) => e.warning)).toEqual(["duplicate_request", "unknown_id"]);
    expect(summaryOf(events)).toMatchObject({ requests_total: 3, allowed: 2, duplicate_requests: 1, unknown_ids: 1 });
  });

  test("10,000 interleaved lines keep their order on stdout and stderr", async () => {
    using dir = tempDir();
    const { code, stdout, stderr } = await run(dir.path, { steps: [{ flood: 10_000, every: 10 }] });
    expect(code).toBe(0);
    const expectedOut: string[] = [];
    const expectedErr: string[] = [];
    let wait = false;
    for (let i = 1; i <= 10_000; i += 1) {
      if (i % 10 === 0) {
        wait = !wait;
        expectedOut.push(`executed fs.read {"n":${i}}${wait ? "" : " (unwaited)"}`);
      } else if (i % 7 === 0) expectedErr.push(`err ${i}`);
      else expectedOut.push(`line ${i}`);
    }
    expect(lines(stdout)).toEqual([...expectedOut, "done"]);
    expect(lines(stderr).filter((line) => line.startsWith("err "))).toEqual(expectedErr);
  });
});
