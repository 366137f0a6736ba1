/**
 * What the attack tests share: a shim between a raw agent (the attacker's bytes, exactly) and the
 * scripted server, which records every line it receives, so a test can show what reached the server.
 */
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fixture, readEvents, requireBinary } from "../../support/harness.ts";
import { RawAgent } from "../../support/raw-agent.ts";

export type Shim = { agent: RawAgent; received: () => Array<Record<string, any>>; events: () => Array<Record<string, unknown>> };

export function shimWithScriptedServer(dir: string, options: { policy?: string; shimArgs?: string[]; serverArgs?: string[] } = {}): Shim {
  const record = join(dir, "server-received.jsonl");
  const events = join(dir, "events.jsonl");
  const policy = options.policy === undefined ? [] : ["--thoughtgate-config", join(dir, "thoughtgate.yaml")];
  if (options.policy !== undefined) writeFileSync(join(dir, "thoughtgate.yaml"), options.policy);
  const agent = new RawAgent([
    "--server-id", "scripted", "--events", events, ...policy, ...(options.shimArgs ?? []),
    "--", ...fixture("scripted-server-fixture.ts", "--record", record, ...(options.serverArgs ?? [])),
  ]);
  const received = () =>
    existsSync(record)
      ? readFileSync(record, "utf8")
          .split("\n")
          .filter((line) => line !== "" && line !== "<EOF>")
          .map((line) => JSON.parse(line) as Record<string, any>)
      : [];
  return { agent, received, events: () => readEvents(events) };
}

/** The tool calls the server was asked to run, by name. */
export function callsReceived(shim: Shim): string[] {
  return shim.received().filter((m) => m.method === "tools/call").map((m) => String(m.params?.name));
}

/** A policy under which `tool` needs a person and nobody answers: after `timeout` the call is refused (-32008). */
export function unansweredApprovalPolicy(tool: string, timeout: string): string {
  return `schema: 1
governance:
  rules: [{ id: ask-${tool}, match: ${tool}, action: approve, approval: quick }]
approval:
  quick: { timeout: ${timeout}, on_timeout: deny }
`;
}

/**
 * `thoughtgate wrap --agent-type custom --config-path CONFIG --thoughtgate-config POLICY -- AGENT…`
 * run to its end (`onStart` gets a way to stop it, for the test's cleanup): its exit code, what it
 * printed on stderr, and the session record it named. The wrap gets a state directory of its own,
 * so what an attacker finds there (the service descriptor, the session) is this wrap's alone, not
 * another test's running beside it.
 */
export async function wrapCustomAgent(config: string, policy: string, agent: string[], onStart: (stop: () => Promise<unknown>) => void): Promise<{ exitCode: number; stderr: string; events: string }> {
  const state = mkdtempSync(join(tmpdir(), "thoughtgate-attack-state-"));
  const wrap = Bun.spawn([requireBinary(), "wrap", "--agent-type", "custom", "--config-path", config, "--thoughtgate-config", policy, "--", ...agent], {
    stdin: "ignore",
    stdout: "pipe",
    stderr: "pipe",
    env: { ...process.env, XDG_STATE_HOME: state },
  });
  onStart(async () => {
    if (wrap.exitCode === null) wrap.kill("SIGTERM");
    await wrap.exited;
    rmSync(state, { recursive: true, force: true });
  });
  const [exitCode, stderr] = await Promise.all([wrap.exited, new Response(wrap.stderr).text()]);
  return { exitCode, stderr, events: /session record (\S+)/.exec(stderr)?.[1] ?? "" };
}
