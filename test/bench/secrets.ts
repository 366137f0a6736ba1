/**
 * What secret scanning costs the shim (docs/governance.md, Secret scanning), in one run:
 * tools/call round trips through `thoughtgate shim` with scanning off (`secrets: {scan: off}`) and
 * on (the default), next to the server reached directly, for a small result (the echo call of the
 * other rows), a 10 MiB result with no credential in it (source code and prose), and the same with
 * 480 credentials (a GitHub token, a .env password and a database URL every 64 KiB, blob-text.ts),
 * which the scanning shim redacts. One long-lived session per configuration, the configurations
 * interleaved in blocks like the other latency rows. The figures count only if, checked at the end,
 * the scanning shim redacted every credential and the other configurations forwarded them.
 */
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { BINARY } from "../support/harness.ts";
import { BenchClient, type Call } from "./bench-client.ts";
import { BIG_RESULT_BYTES, ECHO_CALL, INITIALIZE, SECRETS_PLAN, SECRETS_TARGET, TARGET } from "./plan.ts";
import { cpuMs, ms, percentile, progress, signedMs, verdict, type Row } from "./report.ts";

export type SecretsConfigName = "direct" | "shim, scan off" | "shim, scan on";
type Shape = "small" | "clean" | "found";
export type SecretsFigures = {
  /** Round trips, ms. */
  wall: Map<SecretsConfigName, Record<Shape, number[]>>;
  /** The shims' CPU time per call, ms (each process's own, read around every block). */
  cpu: Map<SecretsConfigName, Record<Shape, number>>;
};

/** Room for the response's envelope around the text, so the whole line fits the shim's cap. */
const ENVELOPE_BYTES = 128;
const blob = (secrets: boolean): Call => ({ method: "tools/call", params: { name: "blob", arguments: { bytes: BIG_RESULT_BYTES - ENVELOPE_BYTES, secrets } } });
const CALLS: Record<Shape, Call> = { small: ECHO_CALL, clean: blob(false), found: blob(true) };
/** What the bench server's credentials look like (blob-text.ts): found in the reply means not redacted. */
const GITHUB_PREFIX = ["gh", "p_Zx9Yw8"].join("");
const EXPECTED_FINDINGS = { github_token: 160, secret_field: 160, url_password: 160 };

export async function measureSecrets(server: string[], dir: string, runId: string, env: Record<string, string>): Promise<SecretsFigures> {
  const off = join(dir, `secrets-off-${runId}.yaml`);
  const on = join(dir, `secrets-on-${runId}.yaml`);
  writeFileSync(off, 'schema: 1\nsecrets: { scan: "off" }\n');
  writeFileSync(on, "schema: 1\n");
  const shim = (policy: string) => [BINARY, "shim", "--server-id", "bench", "--events", "none", "--thoughtgate-config", policy, "--", ...server];
  const configs: Array<[SecretsConfigName, string[]]> = [
    ["direct", server],
    ["shim, scan off", shim(off)],
    ["shim, scan on", shim(on)],
  ];
  await using stack = new AsyncDisposableStack();
  const sessions = configs.map(([name, command]) => ({ name, client: stack.use(BenchClient.spawn(command, env)) }));
  for (const { client } of sessions) await client.roundTrip(INITIALIZE);

  const wall: SecretsFigures["wall"] = new Map(configs.map(([name]) => [name, { small: [], clean: [], found: [] }]));
  const cpu: SecretsFigures["cpu"] = new Map(configs.map(([name]) => [name, { small: 0, clean: 0, found: 0 }]));
  const counts: Record<Shape, number> = { small: SECRETS_PLAN.small, clean: SECRETS_PLAN.big, found: SECRETS_PLAN.big };
  const warmup: Record<Shape, number> = { small: SECRETS_PLAN.warmupSmall, clean: SECRETS_PLAN.warmupBig, found: SECRETS_PLAN.warmupBig };
  // Small results first, before any 10 MiB one: the garbage a big result leaves would land in the small figures' p99.
  for (const shape of ["small", "clean", "found"] as const) {
    progress(`secret scanning: ${warmup[shape]} + ${counts[shape]} ${shape === "small" ? "small" : shape === "clean" ? "10 MiB clean" : "10 MiB with credentials"} results per configuration`);
    for (const { client } of sessions) for (let i = 0; i < warmup[shape]; i++) await client.roundTrip(CALLS[shape]);
    const perBlock = Math.ceil(counts[shape] / SECRETS_PLAN.blocks);
    for (let block = 0; block < SECRETS_PLAN.blocks; block++) {
      for (const { name, client } of sessions) {
        const cpuBefore = cpuMs(client.pid);
        for (let i = 0; i < perBlock; i++) wall.get(name)?.[shape].push(await client.roundTrip(CALLS[shape]));
        const used = cpu.get(name);
        if (used) used[shape] += (cpuMs(client.pid) - cpuBefore) / (perBlock * SECRETS_PLAN.blocks);
      }
    }
  }
  await checkRedaction(sessions);
  return { wall, cpu };
}

/** The scanning shim redacts all 480 credentials; the other shim and the server alone pass them on. */
async function checkRedaction(sessions: Array<{ name: SecretsConfigName; client: BenchClient }>): Promise<void> {
  for (const { name, client } of sessions) {
    const reply = new TextDecoder().decode((await client.exchange(CALLS.found)).reply);
    const leaked = reply.split(GITHUB_PREFIX).length - 1;
    if (name !== "shim, scan on") {
      if (leaked !== EXPECTED_FINDINGS.github_token) throw new Error(`${name}: expected the ${EXPECTED_FINDINGS.github_token} fake tokens forwarded, found ${leaked}`);
      continue;
    }
    for (const [kind, expected] of Object.entries(EXPECTED_FINDINGS)) {
      const redacted = reply.split(`[REDACTED:${kind}]`).length - 1;
      if (redacted !== expected) throw new Error(`${name}: expected ${expected} × [REDACTED:${kind}], found ${redacted}`);
    }
    if (leaked !== 0) throw new Error(`${name}: ${leaked} fake tokens were not redacted`);
  }
}

const SHAPES: Array<[Shape, string]> = [
  ["small", "tools/call round trip, small result"],
  ["clean", "tools/call round trip, 10 MiB result, no credentials"],
  ["found", "tools/call round trip, 10 MiB result, 480 credentials"],
];

/**
 * Each configuration against direct; for the scanning shim also what scanning adds over the same
 * shim with scanning off. Judged: the small result against the shim's own target (added to
 * direct), the 10 MiB results against SECRETS_TARGET, by the shim's own CPU time per call, which a
 * busy machine does not inflate the way it does round trips (those are shown, not judged).
 */
export function secretsRows(figures: SecretsFigures): Row[] {
  const rows: Row[] = [];
  const get = (name: SecretsConfigName, shape: Shape) => figures.wall.get(name)?.[shape] ?? [];
  for (const [shape, figure] of SHAPES) {
    const small = shape === "small";
    for (const [q, label] of [[0.5, "p50"], [0.99, "p99"]] as const) {
      const direct = percentile(get("direct", shape), q);
      const off = percentile(get("shim, scan off", shape), q);
      const on = percentile(get("shim, scan on", shape), q);
      const title = `${figure} ${label}`;
      const shimTarget = label === "p50" ? TARGET.addedP50Ms : TARGET.addedP99Ms;
      rows.push({ figure: title, config: "direct", value: ms(direct), baseline: "(baseline)", delta: "", target: "", result: "" });
      rows.push({ figure: title, config: "shim, scan off", value: ms(off), baseline: ms(direct), delta: signedMs(off - direct), target: "", result: "" });
      rows.push({
        figure: title,
        config: "shim, scan on",
        value: ms(on),
        baseline: ms(direct),
        delta: signedMs(on - direct),
        target: small ? `≤ +${shimTarget} ms` : "",
        result: small ? verdict(on - direct <= shimTarget) : "",
      });
      rows.push({ figure: title, config: "added by scanning", value: ms(on), baseline: `${ms(off)} (scan off)`, delta: signedMs(on - off), target: "", result: "" });
    }
    const cpuOff = figures.cpu.get("shim, scan off")?.[shape] ?? 0;
    const cpuOn = figures.cpu.get("shim, scan on")?.[shape] ?? 0;
    rows.push({
      figure: `${figure}, shim CPU time per call`,
      config: "added by scanning",
      value: ms(cpuOn),
      baseline: `${ms(cpuOff)} (scan off)`,
      delta: signedMs(cpuOn - cpuOff),
      target: small ? "" : `≤ +${SECRETS_TARGET.bigAddedCpuMs} ms`,
      result: small ? "" : verdict(cpuOn - cpuOff <= SECRETS_TARGET.bigAddedCpuMs),
    });
  }
  return rows;
}
