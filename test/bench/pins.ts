/**
 * What pinning costs (docs/governance.md, "Pinned definitions"): `tools/list` and `tools/call`
 * round trips through a shim whose policy pins strictly (every list compared with the pins and
 * checked for poisoning; a call looks up one map while nothing is blocked) and one whose policy
 * says `pins: { mode: off }`, next to the server reached directly. The server lists
 * `PINS_TOOL_COUNT` tools. The shims keep their pins in the bench's own state directory.
 */
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { BINARY } from "../support/harness.ts";
import { BenchClient } from "./bench-client.ts";
import { ECHO_CALL, INITIALIZE, PINS_TOOL_COUNT, PLAN, TOOLS_LIST, type Config, type ConfigName } from "./plan.ts";
import { progress } from "./report.ts";

export type PinsFigures = { list: Map<ConfigName, number[]>; call: Map<ConfigName, number[]> };

export async function measurePins(server: string[], dir: string, runId: string, env: Record<string, string>): Promise<PinsFigures> {
  const listing = [...server, "--tools", String(PINS_TOOL_COUNT)];
  const policy = (mode: string) => {
    const path = join(dir, `pins-${mode}-${runId}.yaml`);
    writeFileSync(path, `schema: 1\npins: { mode: ${mode} }\n`);
    return path;
  };
  const shim = (mode: string) => [BINARY, "shim", "--server-id", "bench", "--events", "none", "--thoughtgate-config", policy(mode), "--", ...listing];
  const state = { XDG_STATE_HOME: join(dir, "pins-state") };
  const configs: Config[] = [
    { name: "direct", command: () => listing },
    { name: "shim, pin: off", command: () => shim("off"), env: state },
    { name: "shim, pin: strict", command: () => shim("strict"), env: state },
  ];
  await using stack = new AsyncDisposableStack();
  const sessions = configs.map((config) => ({ name: config.name, client: stack.use(BenchClient.spawn(config.command("pins"), { ...env, ...config.env })), list: [] as number[], call: [] as number[] }));
  for (const { client } of sessions) await client.roundTrip(INITIALIZE);
  progress(`pinning: warm-up, then ${PLAN.iterations} tools/list (${PINS_TOOL_COUNT} tools) and ${PLAN.iterations} tools/call per configuration`);
  for (const { client } of sessions) {
    for (let i = 0; i < PLAN.warmup; i++) {
      await client.roundTrip(TOOLS_LIST);
      await client.roundTrip(ECHO_CALL);
    }
  }
  const perBlock = Math.ceil(PLAN.iterations / PLAN.blocks);
  for (let block = 0; block < PLAN.blocks; block++) {
    for (const session of sessions) {
      for (let i = 0; i < perBlock; i++) session.list.push(await session.client.roundTrip(TOOLS_LIST));
      for (let i = 0; i < perBlock; i++) session.call.push(await session.client.roundTrip(ECHO_CALL));
    }
  }
  return { list: new Map(sessions.map((s) => [s.name, s.list])), call: new Map(sessions.map((s) => [s.name, s.call])) };
}
