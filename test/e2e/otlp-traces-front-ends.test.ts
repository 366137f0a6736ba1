/**
 * OTLP traces of the front ends that are not MCP, through the compiled binary (docs/governance.md,
 * "Traces"): an agent's own tool call decided by `thoughtgate hook claude-code` (outside a wrap
 * session: exported by the hook itself before it exits; in a wrap session: handed to the
 * session's service, which exports it in the session's trace) and a codecli call decided by
 * `thoughtgate arbiter` carry the same span as an MCP call through a shim: `tools/call <tool>`,
 * with the tool, the decision, its gate and rule, and a deny's error. Tracing off, nothing is sent.
 * The collector is a loopback fake that decodes what the real exporter sent.
 */
import { afterEach, describe, expect, setDefaultTimeout, test } from "bun:test";
import { chmodSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { argsHash } from "../../src/core/canonical-json.ts";
import { agentSandbox, type AgentSandbox } from "../support/agents.ts";
import { FakeOtlpCollector, type DecodedSpan } from "../support/fake-otlp-collector.ts";
import { FIXTURES, fixture, requireBinary, tempDir } from "../support/harness.ts";

setDefaultTimeout(90_000);
const binary = requireBinary();

const collectors: FakeOtlpCollector[] = [];
afterEach(async () => {
  for (const collector of collectors.splice(0)) await collector.stop();
});

function collector(): FakeOtlpCollector {
  const started = new FakeOtlpCollector();
  collectors.push(started);
  return started;
}

const telemetry = (endpoint: string) => `telemetry:\n  otlp:\n    endpoint: "${endpoint}"\n`;
/** The user's policy: the agent's writes refused by a rule of theirs, the rest let through. */
const USER_POLICY = "schema: 1\ngovernance:\n  defaults: { action: forward }\n  rules:\n    - { id: no-agent-writes, source: agent, match: write, action: deny }\n";
const userPolicy = (sandbox: AgentSandbox, text: string) => {
  mkdirSync(join(sandbox.home, ".config", "thoughtgate"), { recursive: true });
  writeFileSync(join(sandbox.home, ".config", "thoughtgate", "thoughtgate.yaml"), text);
};

const one = (spans: DecodedSpan[], predicate: (span: DecodedSpan) => boolean, what: string): DecodedSpan => {
  const found = spans.filter(predicate);
  if (found.length !== 1) throw new Error(`expected one ${what}, found ${found.length}: ${JSON.stringify(spans.map((span) => span.name))}`);
  return found[0] as DecodedSpan;
};

type Run = { exitCode: number; stdout: string; stderr: string };

/** One hook call, spawned (not spawnSync: the collector answers from this process while the hook waits on it). */
async function hook(sandbox: AgentSandbox, input: Record<string, unknown>, env: Record<string, string> = {}): Promise<Run> {
  const proc = Bun.spawn([binary, "hook", "claude-code"], { cwd: sandbox.project, env: { ...sandbox.env, OTEL_BSP_SCHEDULE_DELAY: "60000", ...env }, stdin: new TextEncoder().encode(JSON.stringify({ hook_event_name: "PreToolUse", cwd: sandbox.project, ...input })), stdout: "pipe", stderr: "pipe" });
  const [stdout, stderr, exitCode] = await Promise.all([new Response(proc.stdout).text(), new Response(proc.stderr).text(), proc.exited]);
  return { exitCode, stdout, stderr };
}

const decisionOf = (run: Run): string => {
  expect(run.exitCode, run.stderr).toBe(0);
  return (JSON.parse(run.stdout) as { hookSpecificOutput: { permissionDecision: string } }).hookSpecificOutput.permissionDecision;
};

describe("thoughtgate hook claude-code with telemetry.otlp in the user's policy", () => {
  test("outside a wrap session: each call's span, with its decision, is exported by the hook before it exits", async () => {
    await using sandbox = agentSandbox();
    const otlp = collector();
    userPolicy(sandbox, USER_POLICY + telemetry(otlp.endpoint));

    // A batch delay of a minute: only the flush at exit can have sent the span by the time the hook is gone.
    expect(decisionOf(await hook(sandbox, { tool_name: "Bash", tool_input: { command: "ls -la" }, tool_use_id: "toolu_ls" }))).toBe("allow");
    expect(otlp.problems).toEqual([]);
    const allowed = one(otlp.spans, (span) => span.name === "tools/call shell", "span of the shell call");
    expect(allowed).toMatchObject({ kind: "server", parentSpanId: null, status: { code: "unset" } });
    expect(allowed.attributes).toEqual({
      "mcp.method.name": "tools/call",
      "gen_ai.tool.name": "shell",
      "gen_ai.operation.name": "execute_tool",
      "jsonrpc.request.id": "hook-agent-toolu_ls",
      "network.transport": "pipe",
      "thoughtgate.server_id": "agent",
      "thoughtgate.profile": "production",
      "thoughtgate.run_id": expect.any(String),
      "thoughtgate.args_hash": argsHash({ command: "ls -la", commands: ["ls -la"], tool: "Bash" }),
      "thoughtgate.decision": "forward",
      "thoughtgate.gate": "rules",
      "thoughtgate.rule_id": "defaults",
      "thoughtgate.reason": "rule defaults: forward",
    });
    // Decided in the hook's own process: the gates are events of the call's span, as in a standalone shim.
    expect(allowed.events.map((event) => event.name)).toEqual(["thoughtgate.gate.visibility", "thoughtgate.gate.rules"]);
    expect(allowed.resource).toMatchObject({ "service.name": "thoughtgate", "thoughtgate.component": "hook", "thoughtgate.server_id": "agent" });

    expect(decisionOf(await hook(sandbox, { tool_name: "Write", tool_input: { file_path: join(sandbox.project, "a.txt"), content: "x" } }))).toBe("deny");
    const denied = one(otlp.spans, (span) => span.name === "tools/call write", "span of the write call");
    expect(denied.status).toEqual({ code: "error", message: "ThoughtGate blocked tools/call write: rule no-agent-writes: deny" });
    expect(denied.attributes).toMatchObject({ "thoughtgate.decision": "deny", "thoughtgate.gate": "rules", "thoughtgate.rule_id": "no-agent-writes", "error.type": "-32014", "rpc.response.status_code": "-32014" });
    expect(otlp.spans).toHaveLength(2);
  });

  test("tracing off: the OTLP variables alone send nothing, and the call is answered as before", async () => {
    await using sandbox = agentSandbox();
    const otlp = collector();
    userPolicy(sandbox, USER_POLICY);
    const run = await hook(sandbox, { tool_name: "Bash", tool_input: { command: "ls" } }, { OTEL_EXPORTER_OTLP_ENDPOINT: otlp.endpoint, OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: `${otlp.endpoint}/v1/traces` });
    expect(decisionOf(run)).toBe("allow");
    expect(run.stderr).toBe("");
    expect(otlp.requests).toEqual([]);
  });

  test("a collector that is down costs the span, never the answer: the hook answers as without tracing and says on stderr what was lost", async () => {
    await using sandbox = agentSandbox();
    // A port that was just free: nothing listens there.
    const closed = Bun.serve({ hostname: "127.0.0.1", port: 0, fetch: () => new Response() });
    const endpoint = `http://127.0.0.1:${closed.port}`;
    await closed.stop(true);
    userPolicy(sandbox, USER_POLICY + telemetry(endpoint));
    const run = await hook(sandbox, { tool_name: "Bash", tool_input: { command: "ls" } });
    expect(decisionOf(run)).toBe("allow");
    expect(run.stderr).toContain(`OTLP export to ${endpoint}/v1/traces`);
    expect(run.stderr).toContain("1 span(s) were not exported");
  });

  test("a collector the spans may not go to (plain http elsewhere) blocks the call with one line, as it stops a shim at start", async () => {
    await using sandbox = agentSandbox();
    userPolicy(sandbox, `${USER_POLICY}telemetry: { otlp: {} }\n`);
    const run = await hook(sandbox, { tool_name: "Bash", tool_input: { command: "ls" } }, { OTEL_EXPORTER_OTLP_ENDPOINT: "http://collector.example:4318" });
    expect([run.exitCode, run.stdout]).toEqual([2, ""]);
    expect(run.stderr.trim().split("\n")).toEqual(["thoughtgate hook: blocked: $OTEL_EXPORTER_OTLP_ENDPOINT: OTLP traces go only to an https:// URL, or http:// to 127.0.0.1, [::1] or localhost, without user:password@ (got http://collector.example:4318/v1/traces); run `thoughtgate doctor`"]);
  });

  test("in a wrap session: the call's span goes to the session's service, which exports it under the session's span with the service's decision beneath", async () => {
    await using sandbox = agentSandbox();
    const otlp = collector();
    userPolicy(sandbox, USER_POLICY + telemetry(otlp.endpoint));
    writeFileSync(join(sandbox.home, ".claude.json"), JSON.stringify({ mcpServers: {} }));
    // The stand-in is started as `claude`, so wrap gives it Claude Code's hook (--settings).
    const bin = join(sandbox.root, "bin");
    mkdirSync(bin);
    writeFileSync(join(bin, "claude"), `#!/bin/sh\nexec '${process.execPath}' '${join(FIXTURES, "claude-hook-runner-fixture.ts")}' "$@"\n`);
    chmodSync(join(bin, "claude"), 0o755);
    const out = join(sandbox.root, "answers.json");
    const calls = [["Bash", { command: "ls" }], ["Write", { file_path: join(sandbox.project, "a.txt"), content: "x" }]];
    const wrap = Bun.spawn([binary, "wrap", "--allow-ungoverned", "--", join(bin, "claude")], {
      cwd: sandbox.project,
      env: { ...sandbox.env, OTEL_BSP_SCHEDULE_DELAY: "50", HOOK_FIXTURE_CALLS: JSON.stringify(calls), HOOK_FIXTURE_OUT: out },
      stdout: "pipe",
      stderr: "pipe",
    });
    const stderr = new Response(wrap.stderr).text();
    expect(await wrap.exited, await stderr).toBe(0);
    const answers = (JSON.parse(readFileSync(out, "utf8")) as Run[]).map(decisionOf);
    expect(answers).toEqual(["allow", "deny"]);

    const spans = await otlp.until((all) => all.some((span) => span.name === "thoughtgate wrap"), "the session's span");
    expect(otlp.problems).toEqual([]);
    const session = one(spans, (span) => span.name === "thoughtgate wrap", "wrap span");
    const shell = one(spans, (span) => span.name === "tools/call shell" && span.kind === "server" && span.parentSpanId === session.spanId, "the hook's span of the shell call");
    expect(shell.traceId).toBe(session.traceId);
    expect(shell.attributes).toMatchObject({ "gen_ai.tool.name": "shell", "thoughtgate.server_id": "agent", "thoughtgate.decision": "forward", "thoughtgate.rule_id": "defaults" });
    // Relayed, not exported by the hook: the service names the process that recorded it (its pid).
    expect(shell.resource).toMatchObject({ "thoughtgate.component": "hook", "thoughtgate.server_id": "agent", "process.pid": expect.any(Number) });
    // The service decided: its span hangs under the hook's.
    const evaluate = one(spans, (span) => span.name === "thoughtgate.evaluate" && span.parentSpanId === shell.spanId, "the service's decision of the shell call");
    expect(evaluate.attributes).toMatchObject({ "thoughtgate.decision": "forward", "thoughtgate.rule_id": "defaults" });
    const write = one(spans, (span) => span.name === "tools/call write" && span.kind === "server" && span.parentSpanId === session.spanId, "the hook's span of the write call");
    expect(write.attributes).toMatchObject({ "thoughtgate.decision": "deny", "thoughtgate.gate": "rules", "thoughtgate.rule_id": "no-agent-writes", "error.type": "-32014" });
    expect(write.status.code).toBe("error");
    expect(await stderr).not.toContain("OTLP export");
  });
});

describe("thoughtgate arbiter with telemetry.otlp", () => {
  test("the session's span and each tool.request's under it, with the decision, its gates, and a deny's error", async () => {
    using dir = tempDir();
    const otlp = collector();
    const policy = join(dir.path, "thoughtgate.yaml");
    writeFileSync(policy, `schema: 1\ngovernance:\n  defaults: { action: forward }\n  rules:\n    - { id: no-shell, match: "shell.*", action: deny }\n${telemetry(otlp.endpoint)}`);
    const steps = join(dir.path, "steps.json");
    writeFileSync(steps, JSON.stringify([
      { request: { id: "r-1", tool: "fs.read", requires_policy: true, args: { path: "README.md" } } },
      { request: { id: "s-1", tool: "shell.exec", requires_policy: true, args: { cmd: "rm -rf /" } } },
    ]));
    const proc = Bun.spawn([binary, "arbiter", "--events", "none", "--thoughtgate-config", policy, "--", ...fixture("codecli-fixture.ts", "--steps", steps)], {
      cwd: dir.path,
      env: { ...cleanEnv(), OTEL_BSP_SCHEDULE_DELAY: "60000" },
      stdin: "ignore",
      stdout: "pipe",
      stderr: "pipe",
      detached: true,
    });
    const [stdout, stderr, code] = await Promise.all([new Response(proc.stdout).text(), new Response(proc.stderr).text(), proc.exited]);
    expect(code, stderr).toBe(0);
    expect(stdout).toContain(`executed fs.read {"path":"README.md"}`);
    expect(stdout).toContain("skipped shell.exec");

    // Flushed at exit: everything is there once the arbiter is gone.
    expect(otlp.problems).toEqual([]);
    const spans = otlp.spans;
    const session = one(spans, (span) => span.name === "thoughtgate arbiter", "the arbiter's session span");
    expect(session.attributes).toMatchObject({ "thoughtgate.server_id": "codecli", "thoughtgate.profile": "production" });
    expect(session.resource).toMatchObject({ "service.name": "thoughtgate", "thoughtgate.component": "arbiter" });
    const read = one(spans, (span) => span.name === "tools/call fs.read", "span of fs.read");
    expect(read).toMatchObject({ kind: "server", traceId: session.traceId, parentSpanId: session.spanId, status: { code: "unset" } });
    expect(read.attributes).toEqual({
      "mcp.method.name": "tools/call",
      "gen_ai.tool.name": "fs.read",
      "gen_ai.operation.name": "execute_tool",
      "jsonrpc.request.id": "r-1",
      "network.transport": "pipe",
      "thoughtgate.server_id": "codecli",
      "thoughtgate.profile": "production",
      "thoughtgate.run_id": session.attributes["thoughtgate.run_id"] as string,
      "thoughtgate.args_hash": argsHash({ path: "README.md" }),
      "thoughtgate.decision": "forward",
      "thoughtgate.gate": "rules",
      "thoughtgate.rule_id": "defaults",
      "thoughtgate.reason": "rule defaults: forward",
    });
    expect(read.events.map((event) => event.name)).toEqual(["thoughtgate.gate.visibility", "thoughtgate.gate.rules"]);
    const shell = one(spans, (span) => span.name === "tools/call shell.exec", "span of shell.exec");
    expect(shell.parentSpanId).toBe(session.spanId);
    expect(shell.status).toEqual({ code: "error", message: "ThoughtGate blocked tools/call shell.exec: rule no-shell: deny" });
    expect(shell.attributes).toMatchObject({ "thoughtgate.decision": "deny", "thoughtgate.gate": "rules", "thoughtgate.rule_id": "no-shell", "error.type": "-32014", "rpc.response.status_code": "-32014" });
    expect(spans).toHaveLength(3);
  });
});

/** The environment without anything of the test runner's own tracing or ThoughtGate's session. */
function cleanEnv(): Record<string, string> {
  const env: Record<string, string> = {};
  for (const [key, value] of Object.entries(process.env)) if (value !== undefined && !key.startsWith("OTEL_") && key !== "TRACEPARENT" && !key.startsWith("THOUGHTGATE_")) env[key] = value;
  return env;
}
