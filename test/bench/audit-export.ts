/**
 * What the audit's OTLP logs export costs the calls when the collector is down (docs/governance.md,
 * "The audit in your log pipeline"): two `thoughtgate wrap` sessions whose user policy names a
 * collector (`telemetry.otlp`: spans and the audit's log records), one reaching a collector that
 * answers (a loopback receiver in the bench process, 200 to every export) and one whose collector
 * port is closed. The bench's client is each session's agent's stdio (wrap-exec-agent.ts starts
 * the rewritten entry with it), so it talks straight to the session's shim, which asks the session's
 * service; tools/call round trips interleaved in blocks. At the end the down session's `/metrics`
 * must count every call's record as not exported.
 */
import { mkdirSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { BINARY } from "../support/harness.ts";
import { BenchClient } from "./bench-client.ts";
import { ECHO_CALL, INITIALIZE, LOG_PLAN } from "./plan.ts";
import { progress } from "./report.ts";

export type CollectorName = "collector up" | "collector down";
export type ExportFigures = { wall: Map<CollectorName, number[]>; calls: number; counted: { exported: number; dropped: number } | null; received: number };

export async function measureCollectorDown(server: string[], dir: string, runId: string, env: Record<string, string>): Promise<ExportFigures> {
  let received = 0;
  const up = Bun.serve({
    hostname: "127.0.0.1",
    port: 0,
    fetch: async (request) => {
      if (new URL(request.url).pathname === "/v1/logs") received += 1;
      await request.arrayBuffer();
      return Response.json({ partialSuccess: {} });
    },
  });
  const closed = Bun.serve({ hostname: "127.0.0.1", port: 0, fetch: () => new Response() });
  const downEndpoint = `http://127.0.0.1:${closed.port}`;
  await closed.stop(true);
  const agent = join(import.meta.dir, "wrap-exec-agent.ts");
  const sessions: Array<{ name: CollectorName; home: string; client: BenchClient }> = [];
  try {
    for (const [name, endpoint] of [["collector up", `http://127.0.0.1:${up.port}`], ["collector down", downEndpoint]] as const) {
      const home = join(dir, `export-${name.replace(" ", "-")}-${runId}`);
      mkdirSync(join(home, ".config", "thoughtgate"), { recursive: true });
      writeFileSync(join(home, ".config", "thoughtgate", "thoughtgate.yaml"), `schema: 1\ntelemetry:\n  otlp: { endpoint: "${endpoint}" }\n`);
      const config = join(home, "mcp.json");
      writeFileSync(config, JSON.stringify({ mcpServers: { bench: { command: server[0], args: server.slice(1) } } }));
      const sessionEnv = { ...env, HOME: home, XDG_CONFIG_HOME: join(home, ".config"), XDG_STATE_HOME: join(home, ".state") };
      const client = BenchClient.spawn([BINARY, "wrap", "--agent-type", "custom", "--config-path", config, "--", process.execPath, agent, config], sessionEnv);
      await client.roundTrip(INITIALIZE);
      sessions.push({ name, home, client });
    }
    const wall = new Map<CollectorName, number[]>(sessions.map(({ name }) => [name, []]));
    progress(`audit export: ${LOG_PLAN.warmup} + ${LOG_PLAN.calls} governed calls per wrap session, collector up and down`);
    for (const { client } of sessions) for (let i = 0; i < LOG_PLAN.warmup; i++) await client.roundTrip(ECHO_CALL);
    const perBlock = Math.ceil(LOG_PLAN.calls / LOG_PLAN.blocks);
    for (let block = 0; block < LOG_PLAN.blocks; block++) {
      for (const { name, client } of sessions) for (let i = 0; i < perBlock; i++) wall.get(name)?.push(await client.roundTrip(ECHO_CALL));
    }
    const calls = LOG_PLAN.warmup + perBlock * LOG_PLAN.blocks;
    const down = sessions.find((s) => s.name === "collector down");
    const counted = down ? await countedDrops(down.home, calls) : null;
    return { wall, calls, counted, received };
  } finally {
    for (const { client } of sessions) await client[Symbol.asyncDispose]();
    await up.stop(true);
  }
}

/** The down session's `/metrics` once it counts every call (or what it counts after 60 s). */
async function countedDrops(home: string, calls: number): Promise<{ exported: number; dropped: number }> {
  const state = join(home, ".state", "thoughtgate");
  const descriptor = readdirSync(join(state, "services")).find((name) => name.endsWith(".json"));
  const session = readdirSync(join(state, "sessions"))[0];
  if (!descriptor || !session) throw new Error("no running wrap session found for /metrics");
  const endpoint = (JSON.parse(readFileSync(join(state, "services", descriptor), "utf8")) as { endpoint: string }).endpoint;
  const secret = readFileSync(join(state, "sessions", session, "secret"), "utf8").trim();
  const deadline = performance.now() + 60_000;
  for (;;) {
    const text = await (await fetch(`${endpoint}/metrics`, { headers: { authorization: `Bearer ${secret}` } })).text();
    const value = (pattern: RegExp) => Number(pattern.exec(text)?.[1] ?? 0);
    const figures = { exported: value(/^thoughtgate_audit_records_exported_total (\d+)/m), dropped: value(/^thoughtgate_audit_records_dropped_total\{reason="export_failed"\} (\d+)/m) + value(/^thoughtgate_audit_records_dropped_total\{reason="queue_full"\} (\d+)/m) };
    if (figures.dropped >= calls || performance.now() > deadline) return figures;
    await Bun.sleep(500);
  }
}
