/**
 * A synthetic record for the `log` bench: `sessions` wrap sessions of `callsPerSession` governed
 * calls each, in the shapes the shim writes (run_start, then per call tool_call_start with
 * arguments, tool_call_decision and tool_call_end; a tenth of them denied, some asked and
 * approved), spread evenly over the last `days` days across ten servers. Written straight to
 * `<state>/thoughtgate/sessions/<id>/events.jsonl`, as many shims would have.
 */
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";

export const LOG_SERVERS = 10;

export function writeRecord(stateHome: string, plan: { sessions: number; callsPerSession: number; days: number }): { calls: number; bytes: number } {
  const now = Date.now();
  const span = plan.days * 86_400_000;
  const total = plan.sessions * plan.callsPerSession;
  let bytes = 0;
  let n = 0;
  for (let s = 0; s < plan.sessions; s++) {
    const runId = Bun.randomUUIDv7();
    const dir = join(stateHome, "thoughtgate", "sessions", runId);
    mkdirSync(dir, { recursive: true });
    const lines: string[] = [];
    const servers = new Set<string>();
    for (let c = 0; c < plan.callsPerSession; c++, n++) {
      // Oldest first within a file, as a shim appends; sessions follow each other in time.
      const ts = new Date(now - span + Math.floor((n / total) * span)).toISOString();
      const server = `srv${(s + c) % LOG_SERVERS}`;
      const head = `"v":1,"ts":"${ts}","run_id":"${runId}","server_id":"${server}","profile":"production"`;
      if (!servers.has(server)) {
        servers.add(server);
        lines.push(`{${head},"type":"run_start","seq":1,"started_at":"${ts}","pid":${1000 + s},"server_command":["node","server.js"],"policy":"user policy","version":"0.1.0","agent_command":["claude","--model","opus"],"project":"/home/user/projects/p${s % 7}"}`);
      }
      const callId = Bun.randomUUIDv7();
      const hash = "5ef36d052aa8283e5369cf0a47bfd50026ae6fa509cdd3dd0cba522a90e7cacc";
      const denied = c % 10 === 3;
      const asked = c % 25 === 7;
      lines.push(`{${head},"type":"tool_call_start","seq":${c * 3 + 2},"call_id":"${callId}","request_id":${c},"tool":"${denied ? "write_file" : "read_text_file"}","args_hash":"${hash}","arguments":{"path":"/home/user/projects/p${s % 7}/src/file${c}.ts"}}`);
      if (asked) lines.push(`{${head},"type":"tool_call_decision","seq":${c * 3 + 2},"call_id":"${callId}","tool":"read_text_file","decision":"pending","gate":null,"rule_id":null,"policy_id":null,"reason":"rule reads: approval required (task ${c})"}`);
      lines.push(
        denied
          ? `{${head},"type":"tool_call_decision","seq":${c * 3 + 3},"call_id":"${callId}","tool":"write_file","decision":"deny","gate":"rules","rule_id":"no-writes","policy_id":null,"reason":"rule no-writes: deny"}`
          : `{${head},"type":"tool_call_decision","seq":${c * 3 + 3},"call_id":"${callId}","tool":"read_text_file","decision":"forward","gate":"${asked ? "approval" : "rules"}","rule_id":"reads","policy_id":null,"reason":"rule reads"${asked ? ',"approved_by":"web"' : ""}}`,
      );
      lines.push(`{${head},"type":"tool_call_end","seq":${c * 3 + 4},"call_id":"${callId}","tool":"${denied ? "write_file" : "read_text_file"}","args_hash":"${hash}","status":"${denied ? "denied" : "ok"}","latency_ms":0.412,"bytes_out":${denied ? 277 : 1834}}`);
    }
    const text = `${lines.join("\n")}\n`;
    writeFileSync(join(dir, "events.jsonl"), text);
    bytes += Buffer.byteLength(text);
  }
  return { calls: total, bytes };
}
