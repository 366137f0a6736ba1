/**
 * The audit in the team's log pipeline, through the compiled binary: a `wrap` session whose user
 * policy names a collector sends every governed call of the session as an OTLP log record (the
 * real `@opentelemetry/exporter-logs-otlp-http`, decoded by a loopback collector), with the
 * resource attributes a collector routes on and the arguments redacted; with the collector down,
 * the calls are answered as usual, `/metrics` counts what could not be sent, and the local record
 * keeps every call.
 */
import { afterAll, describe, expect, setDefaultTimeout, test } from "bun:test";
import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { hostname } from "node:os";
import { join } from "node:path";
import { fixture, FILESYSTEM_SERVER_JS, requireBinary, tempDir, waitFor } from "../support/harness.ts";
import { FakeOtlpCollector } from "../support/fake-otlp-collector.ts";

setDefaultTimeout(90_000);
requireBinary();

const TOKEN = `ghp_${"L".repeat(36)}`;
const dir = tempDir("thoughtgate-otlp-logs-");
afterAll(() => dir[Symbol.dispose]());

function sandbox(name: string, endpoint: string) {
  const home = join(dir.path, name);
  const project = join(home, "work", "site");
  const files = join(home, "files");
  for (const path of [project, files, join(home, ".config", "thoughtgate"), join(project, ".git")]) mkdirSync(path, { recursive: true });
  writeFileSync(join(files, "a.txt"), "alpha\n");
  writeFileSync(
    join(home, ".config", "thoughtgate", "thoughtgate.yaml"),
    // list_directory: by a rule "always allow" wrote, a person's earlier yes for good (decided_by.scope always).
    `schema: 1\ngovernance:\n  rules: [{ id: no-writes, match: write_file, action: deny }, { id: always-allow-fs-list_directory, match: list_directory, source: fs, action: forward }]\ntelemetry:\n  otlp: { endpoint: "${endpoint}" }\n`,
  );
  const config = join(project, "mcp.json");
  writeFileSync(config, JSON.stringify({ mcpServers: { fs: { command: "node", args: [FILESYSTEM_SERVER_JS, files] } } }));
  const env: Record<string, string> = {};
  for (const [key, value] of Object.entries(process.env)) if (value !== undefined && !key.startsWith("THOUGHTGATE_") && !key.startsWith("OTEL_")) env[key] = value;
  Object.assign(env, { HOME: home, XDG_CONFIG_HOME: join(home, ".config"), XDG_STATE_HOME: join(home, ".state") });
  const calls = [
    ["list_directory", { path: files }],
    ["write_file", { path: join(files, "b.txt"), content: `token=${TOKEN}` }],
    ["read_text_file", { path: join(files, "missing.txt") }],
  ] as const;
  const agent = (report: string, ...extra: string[]) => fixture("wrap-agent-fixture.ts", config, report, ...calls.flatMap(([tool, args]) => ["--call", `${tool}:${JSON.stringify(args)}`]), ...extra);
  return { home, project, config, env, agent, state: join(home, ".state", "thoughtgate") };
}

function wrap(box: ReturnType<typeof sandbox>, agent: string[]) {
  const proc = Bun.spawn([requireBinary(), "wrap", "--agent-type", "custom", "--config-path", box.config, "--", ...agent], { cwd: box.project, env: box.env, stdin: "ignore", stdout: "ignore", stderr: "pipe" });
  let stderr = "";
  const reading = (async () => {
    for await (const chunk of proc.stderr) stderr += new TextDecoder().decode(chunk);
  })();
  return { proc, stderr: () => stderr, done: async () => ((await proc.exited), await reading, stderr) };
}

async function logJson(box: ReturnType<typeof sandbox>, session: string): Promise<Array<Record<string, unknown>>> {
  const run = Bun.spawnSync([requireBinary(), "log", "--json", "--session", session], { env: box.env, cwd: box.project });
  return run.stdout.toString().split("\n").filter(Boolean).map((line) => JSON.parse(line) as Record<string, unknown>);
}

/** The name of this test's uid in the passwd database, as `id` reads it. */
const PASSWD_NAME = Bun.spawnSync(["id", "-un"]).stdout.toString().trim();

describe("the audit as OTLP logs", () => {
  test("every governed call of the session reaches the collector with its resource attributes and redacted arguments", async () => {
    const collector = new FakeOtlpCollector();
    try {
      const box = sandbox("up", collector.endpoint);
      // As under cron, systemd or an MDM launcher: no $USER, no $LOGNAME; the name is the uid's passwd entry.
      delete box.env.USER;
      delete box.env.LOGNAME;
      const run = wrap(box, box.agent(join(box.home, "report.json")));
      const stderr = await run.done();
      expect(run.proc.exitCode, stderr).toBe(0);
      expect(stderr).toContain(`(sent on as OTLP logs to ${collector.endpoint}/v1/logs)`);
      const session = /thoughtgate log --session (\S+)/.exec(stderr)?.[1] ?? "";
      const recorded = await logJson(box, session);
      expect(recorded.length).toBe(3);
      const logs = await collector.untilLogs((logs) => logs.length >= 3, "three log records");
      expect(logs.map((log) => String(log.attributes["thoughtgate.call_id"])).toSorted()).toEqual(recorded.map((call) => String(call.call_id)).toSorted());
      for (const log of logs) {
        expect(log.resource).toMatchObject({
          "service.name": "thoughtgate",
          "user.name": PASSWD_NAME,
          "host.name": hostname(),
          "thoughtgate.server_id": "fs",
          "thoughtgate.project": box.project,
          "thoughtgate.session": session,
        });
        expect(String(log.resource["thoughtgate.agent"])).toStartWith("bun");
        expect(log.scope.name).toBe("thoughtgate.audit");
      }
      const byTool = new Map(logs.map((log) => [log.attributes["gen_ai.tool.name"], log]));
      expect(byTool.get("write_file")).toMatchObject({
        severityText: "WARN",
        eventName: "thoughtgate.call",
        body: "fs.write_file denied",
        attributes: { "thoughtgate.outcome": "denied", "thoughtgate.gate": "rules", "thoughtgate.rule_id": "no-writes", "mcp.method.name": "tools/call" },
      });
      expect(JSON.parse(String(byTool.get("write_file")?.attributes["thoughtgate.arguments"]))).toEqual({ path: expect.stringContaining("b.txt"), content: "token=[REDACTED:secret_field]" });
      expect(byTool.get("list_directory")?.attributes).toMatchObject({ "thoughtgate.outcome": "forwarded", "thoughtgate.decided_by.channel": "always_rule", "thoughtgate.decided_by.scope": "always" });
      expect(byTool.get("list_directory")?.body).toBe("fs.list_directory forwarded by always_rule (always)");
      expect(byTool.get("read_text_file")).toMatchObject({ severityText: "ERROR", attributes: { "thoughtgate.outcome": "errored" } });
      expect(JSON.stringify(logs, (_, value: unknown) => (typeof value === "bigint" ? String(value) : value))).not.toContain(TOKEN);
      // Beside the traces, which go on as before.
      expect(collector.spans.length).toBeGreaterThan(0);
    } finally {
      await collector.stop();
    }
  });

  test("with the collector down the calls go through, /metrics counts what was not sent, the local record keeps every call", async () => {
    const gone = new FakeOtlpCollector();
    const endpoint = gone.endpoint;
    await gone.stop();
    const box = sandbox("down", endpoint);
    const report = join(box.home, "report.json");
    const run = wrap(box, box.agent(report, "--wait"));
    try {
      const answered = await waitFor(() => (existsSync(report) ? (JSON.parse(readFileSync(report, "utf8")) as { state: string; results: Record<string, unknown> }) : null), "the agent's calls");
      expect(answered.state).toBe("ready");
      expect(answered.results.list_directory).toHaveProperty("ok");
      expect(answered.results.write_file).toMatchObject({ code: -32014 });
      const service = /governance service (http:\/\/127\.0\.0\.1:\d+)/.exec(run.stderr())?.[1];
      const session = /session record (\S+)\/events\.jsonl/.exec(run.stderr())?.[1] ?? "";
      const secret = readFileSync(join(session, "secret"), "utf8").trim();
      const metrics = await waitFor(async () => {
        const text = await (await fetch(`${service}/metrics`, { headers: { authorization: `Bearer ${secret}` } })).text();
        return text.includes('thoughtgate_audit_records_dropped_total{reason="export_failed"} 3') ? text : null;
      }, "/metrics to count the records the collector did not take", 40_000);
      expect(metrics).toContain("thoughtgate_audit_records_exported_total 0");
      expect(metrics).toContain('thoughtgate_audit_records_dropped_total{reason="queue_full"} 0');
      // Said once, with why, as the traces' exporter does.
      const said = run.stderr().split("\n").filter((line) => line.includes(`OTLP logs export to ${endpoint}/v1/logs failed`));
      expect(said).toHaveLength(1);
      expect(said[0]).toContain("the audit's records are dropped and counted until it works again");
    } finally {
      run.proc.kill("SIGTERM");
      await run.done();
    }
    const session = /thoughtgate log --session (\S+)/.exec(run.stderr())?.[1] ?? "";
    expect((await logJson(box, session)).map((call) => call.tool).toSorted()).toEqual(["list_directory", "read_text_file", "write_file"]);
  });

  test("a collector that never answers: each export ends at OTEL_EXPORTER_OTLP_LOGS_TIMEOUT, and the session says it failed", async () => {
    const hanging = Bun.serve({ hostname: "127.0.0.1", port: 0, fetch: () => new Promise<Response>(() => {}) });
    const endpoint = `http://127.0.0.1:${hanging.port}`;
    const box = sandbox("hanging", endpoint);
    box.env.OTEL_EXPORTER_OTLP_LOGS_TIMEOUT = "300";
    box.env.OTEL_EXPORTER_OTLP_TIMEOUT = "60000";
    const report = join(box.home, "report.json");
    const run = wrap(box, box.agent(report, "--wait"));
    try {
      await waitFor(() => existsSync(report) || null, "the agent's calls");
      // The default (10 s) would not be up yet: the 300 ms of the logs' own variable is what ended it.
      const line = await waitFor(() => run.stderr().split("\n").find((l) => l.includes(`OTLP logs export to ${endpoint}/v1/logs failed`)), "the failed export to be said", 8_000);
      expect(line).toContain("the audit's records are dropped and counted until it works again");
    } finally {
      run.proc.kill("SIGTERM");
      await run.done();
      hanging.stop(true);
    }
  });

  test("an export timeout that is not a number of milliseconds is refused in one line", async () => {
    const box = sandbox("bad-timeout", "http://127.0.0.1:9/");
    box.env.OTEL_EXPORTER_OTLP_TIMEOUT = "10s";
    const run = wrap(box, box.agent(join(box.home, "report.json")));
    const stderr = await run.done();
    expect(run.proc.exitCode).not.toBe(0);
    expect(stderr).toContain("$OTEL_EXPORTER_OTLP_TIMEOUT=10s: expected the export timeout in milliseconds (a whole number above 0, e.g. 10000)");
  });
});
