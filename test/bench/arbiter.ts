/**
 * The arbiter's decision latency: how long a codecli waits from printing a `tool.request`
 * to reading its `policy.decision`, through `thoughtgate arbiter` (the 4-gate engine with a rules
 * file, with and without the event stream) and through the echo decider (echo-decider.ts, the
 * floor: line splitting and an immediate allow, no governance). The bench's codecli
 * (arbiter-codecli.ts) takes the times on its own clock. Each block starts a fresh session per
 * configuration, in turn, so a slow spell of the machine lands on every configuration; each
 * session warms up before it counts.
 */
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { BINARY } from "../support/harness.ts";
import { ARBITER_PLAN } from "./plan.ts";
import { progress } from "./report.ts";

export type ArbiterConfigName = "echo decider" | "arbiter" | "arbiter+events";
export type ArbiterFigures = { samples: Map<ArbiterConfigName, number[]>; policy: string };

/** Rules only: the bench's tool is forwarded by the first rule; anything else would be denied. */
const POLICY = `schema: 1
governance:
  defaults: { action: deny }
  rules:
    - { id: reads, match: "fs.read", action: forward }
`;

/** `decider`: the compiled echo decider; `marker` goes on every codecli's command line for the leftover check. */
export async function measureArbiter(dir: string, decider: string, marker: string, env: Record<string, string>): Promise<ArbiterFigures> {
  const policy = join(dir, "arbiter-policy.yaml");
  writeFileSync(policy, POLICY);
  const perBlock = Math.ceil(ARBITER_PLAN.decisions / ARBITER_PLAN.blocks);
  const codecli = [process.execPath, join(import.meta.dir, "arbiter-codecli.ts"), "--warmup", String(ARBITER_PLAN.warmup), "--count", String(perBlock), marker];
  const configs: Array<{ name: ArbiterConfigName; command: string[] }> = [
    { name: "echo decider", command: [decider, "--", ...codecli] },
    { name: "arbiter", command: [BINARY, "arbiter", "--thoughtgate-config", policy, "--events", "none", "--", ...codecli] },
    { name: "arbiter+events", command: [BINARY, "arbiter", "--thoughtgate-config", policy, "--events", join(dir, "arbiter-events.jsonl"), "--", ...codecli] },
  ];
  progress(`arbiter: ${ARBITER_PLAN.blocks} blocks × ${perBlock} decisions per configuration, ${ARBITER_PLAN.warmup} warm-up per session`);
  const samples = new Map<ArbiterConfigName, number[]>(configs.map(({ name }) => [name, []]));
  for (let block = 0; block < ARBITER_PLAN.blocks; block++) {
    for (const { name, command } of configs) samples.get(name)?.push(...(await session(name, command, env)));
  }
  return { samples, policy: POLICY };
}

async function session(name: string, command: string[], env: Record<string, string>): Promise<number[]> {
  const proc = Bun.spawn(command, { env, stdin: "ignore", stdout: "pipe", stderr: "pipe" });
  const [stdout, stderr, code] = await Promise.all([new Response(proc.stdout).text(), new Response(proc.stderr).text(), proc.exited]);
  const line = stdout.split("\n").find((text) => text.startsWith("samples "));
  if (code !== 0 || !line) throw new Error(`${name} exited with code ${code} without its samples:\n${stderr}`);
  // Every ordinary line must have come through: the decider is not allowed to drop output.
  const passed = stdout.split("\n").filter((text) => text.startsWith("working on step ")).length;
  const expected = ARBITER_PLAN.warmup + Math.ceil(ARBITER_PLAN.decisions / ARBITER_PLAN.blocks);
  if (passed !== expected) throw new Error(`${name} passed ${passed} of ${expected} output lines through`);
  return JSON.parse(line.slice("samples ".length)) as number[];
}
