/**
 * What `thoughtgate hook claude-code` adds to each of an agent's own tool calls: the agent starts
 * one hook process per call, so the process's start-up is on every call. Timed from spawning the
 * hook with a PreToolUse JSON on its stdin to its exit with the answer read, in the bench process
 * (one clock), for four calls: a Read of a project file and a Bash `ls -la && git status` that the
 * embedded default allows outright, and a Read of `~/.ssh/id_ed25519` and a Bash `cat
 * ~/.ssh/id_ed25519` it denies. Each outside any session (the user's policy loaded and decided in
 * the hook's process, the shell calls' line read by the bash parser loaded there) and inside a
 * `thoughtgate wrap` session (the hook finds the session by `THOUGHTGATE_SESSION` and its governance
 * service reads the line with the parser it keeps, and decides).
 *
 * The baselines, in the same interleaved rounds: `/bin/cat` as the hook (any process the agent
 * starts: fork, exec, a pipe each way), a compiled Bun program that reads the input and allows
 * (noop-hook.ts: what a hook written for Bun pays), and `thoughtgate --version` (our binary's own
 * start-up, no input read: the floor of any call through it). With `--against OTHER_BINARY`, the same calls through that binary
 * (its own wrap session) beside ours: a build before a change against the build after it.
 *
 * Every answer is checked (the decision each call must get); HOME and the XDG directories point
 * into the bench's temp dir, so only the embedded default policy applies and nothing lands in the
 * user's home. The wrap session's agent is `sh -c` waiting on its stdin, which the bench closes at
 * the end; it carries the run's marker, for the bench's leftover check.
 */
import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { BINARY } from "../support/harness.ts";
import { AGAINST, HOOK_PLAN } from "./plan.ts";
import { percentile, progress, type Row } from "./report.ts";

type HookCall = { name: string; tool: string; input: Record<string, unknown>; expect: "allow" | "deny" };
type Place = "outside a session" | "in a wrap session";
type Probe = { figure: string; config: string; command: string[]; env: Record<string, string>; stdin: string; expect: "allow" | "deny" | null };
/** Per configuration: wall times (spawn → exit with the answer read) and the hook process's CPU time (user + system), in ms. */
export type HookFigures = { probes: Probe[]; samples: Map<Probe, number[]>; cpu: Map<Probe, number[]>; binaries: Array<{ label: string; path: string }> };

/** `noopHook`: the compiled noop-hook.ts; `marker` goes on the wrap sessions' agents' command lines. */
export async function measureHook(dir: string, noopHook: string, marker: string, env: Record<string, string>): Promise<HookFigures> {
  const home = join(dir, "hook-home");
  const project = join(home, "src", "app");
  mkdirSync(join(project, ".git"), { recursive: true });
  writeFileSync(join(project, "README.md"), "# app\n");
  mkdirSync(join(home, ".ssh"), { recursive: true });
  writeFileSync(join(home, ".ssh", "id_ed25519"), "not a key\n");
  const baseEnv: Record<string, string> = {
    ...env,
    HOME: home,
    XDG_CONFIG_HOME: join(home, ".config"),
    XDG_DATA_HOME: join(home, ".local", "share"),
    XDG_STATE_HOME: join(home, ".local", "state"),
    XDG_CACHE_HOME: join(home, ".cache"),
  };
  const calls: HookCall[] = [
    { name: "Read of a project file (allowed)", tool: "Read", input: { file_path: join(project, "README.md") }, expect: "allow" },
    { name: "Bash `ls -la && git status` (allowed)", tool: "Bash", input: { command: "ls -la && git status" }, expect: "allow" },
    { name: "Read of ~/.ssh/id_ed25519 (denied)", tool: "Read", input: { file_path: join(home, ".ssh", "id_ed25519") }, expect: "deny" },
    { name: "Bash `cat ~/.ssh/id_ed25519` (denied)", tool: "Bash", input: { command: "cat ~/.ssh/id_ed25519" }, expect: "deny" },
  ];
  const stdinOf = (call: HookCall) => JSON.stringify({ hook_event_name: "PreToolUse", session_id: "bench", cwd: project, tool_name: call.tool, tool_input: call.input });

  const binaries = [{ label: "", path: BINARY }, ...(AGAINST ? [{ label: ", --against", path: AGAINST }] : [])];
  await using stack = new AsyncDisposableStack();
  const probes: Probe[] = [
    { figure: "no-op hook", config: "/bin/cat", command: ["/bin/cat"], env: baseEnv, stdin: stdinOf(calls[0] as HookCall), expect: null },
    { figure: "no-op hook", config: "compiled Bun, reads and allows", command: [noopHook], env: baseEnv, stdin: stdinOf(calls[0] as HookCall), expect: "allow" },
  ];
  for (const binary of binaries) {
    probes.push({ figure: "process start alone", config: `thoughtgate --version${binary.label}`, command: [binary.path, "--version"], env: baseEnv, stdin: "", expect: null });
  }
  for (const [index, binary] of binaries.entries()) {
    const sessionId = await startSession(stack, binary.path, join(home, `mcp-${index}.json`), project, marker, baseEnv);
    for (const [place, placeEnv] of [["outside a session", baseEnv], ["in a wrap session", { ...baseEnv, THOUGHTGATE_SESSION: sessionId }]] as Array<[Place, Record<string, string>]>) {
      for (const call of calls) {
        probes.push({ figure: call.name, config: `${place}${binary.label}`, command: [binary.path, "hook", "claude-code"], env: placeEnv, stdin: stdinOf(call), expect: call.expect });
      }
    }
  }

  const samples = new Map<Probe, number[]>(probes.map((probe) => [probe, []]));
  const cpu = new Map<Probe, number[]>(probes.map((probe) => [probe, []]));
  progress(`hook: ${HOOK_PLAN.calls} spawns per configuration (${probes.length}) after ${HOOK_PLAN.warmup} uncounted rounds, interleaved`);
  // Interleaved rounds: a slow spell of the machine lands on every configuration, not on one.
  for (let round = 0; round < HOOK_PLAN.warmup + HOOK_PLAN.calls; round++) {
    for (const probe of probes) {
      const run = spawnOnce(probe, project);
      if (round >= HOOK_PLAN.warmup) {
        samples.get(probe)?.push(run.wallMs);
        cpu.get(probe)?.push(run.cpuMs);
      }
    }
  }
  return { probes, samples, cpu, binaries };
}

/** A `thoughtgate wrap` whose agent waits on its stdin; the session's id once the agent runs. */
async function startSession(stack: AsyncDisposableStack, binary: string, config: string, project: string, marker: string, env: Record<string, string>): Promise<string> {
  writeFileSync(config, `${JSON.stringify({ mcpServers: { bench: { command: "bench-missing-server", args: [] } } })}\n`);
  const idFile = `${config}.session`;
  const agent = ["/bin/sh", "-c", `printf %s "$THOUGHTGATE_SESSION" > '${idFile}.tmp' && mv '${idFile}.tmp' '${idFile}' && { read _ || true; }`, "bench-hook-agent", marker];
  const wrap = Bun.spawn([binary, "wrap", "--agent-type", "custom", "--config-path", config, "--", ...agent], { cwd: project, env, stdin: "pipe", stdout: "ignore", stderr: "pipe" });
  stack.defer(async () => {
    wrap.stdin.end();
    const code = await wrap.exited;
    if (code !== 0) throw new Error(`${binary} wrap exited with code ${code}: ${await new Response(wrap.stderr).text()}`);
  });
  const deadline = performance.now() + 30_000;
  while (!existsSync(idFile)) {
    if (wrap.exitCode !== null) throw new Error(`${binary} wrap exited with code ${wrap.exitCode} before its agent ran: ${await new Response(wrap.stderr).text()}`);
    if (performance.now() > deadline) throw new Error(`${binary} wrap: its agent did not run within 30 s`);
    await Bun.sleep(10);
  }
  const id = readFileSync(idFile, "utf8");
  if (id === "") throw new Error(`${binary} wrap did not give its agent THOUGHTGATE_SESSION`);
  return id;
}

/**
 * Spawn → exit with the answer read, and the process's CPU time, in ms; the answer checked against
 * the decision the call must get. CPU time hardly moves when other processes hold the cores, wall
 * time does.
 */
function spawnOnce(probe: Probe, cwd: string): { wallMs: number; cpuMs: number } {
  const started = performance.now();
  const run = Bun.spawnSync(probe.command, { cwd, env: probe.env, stdin: new TextEncoder().encode(probe.stdin), stdout: "pipe", stderr: "pipe" });
  const elapsed = performance.now() - started;
  if (run.exitCode !== 0) throw new Error(`${probe.config}, ${probe.figure}: exit ${run.exitCode}: ${run.stderr.toString().trim()}`);
  if (probe.expect !== null) {
    const said = (JSON.parse(run.stdout.toString()) as { hookSpecificOutput?: { permissionDecision?: string } }).hookSpecificOutput?.permissionDecision;
    if (said !== probe.expect) throw new Error(`${probe.config}, ${probe.figure}: answered ${String(said)}, expected ${probe.expect}: ${run.stdout.toString().trim()}`);
  }
  return { wallMs: elapsed, cpuMs: Number(run.resourceUsage.cpuTime.total) / 1000 };
}

/**
 * p50 and p99 of each configuration against `/bin/cat` as the hook (what any hook process costs the
 * agent), and what each call adds over our binary's own start (`thoughtgate --version`); with
 * `--against`, each figure of ours also as a ratio to the other binary's.
 */
export function hookRows(figures: HookFigures): Row[] {
  const cat = figures.probes.find((probe) => probe.config === "/bin/cat");
  const start = figures.probes.find((probe) => probe.config === "thoughtgate --version");
  if (!cat || !start) throw new Error("no baseline figures");
  const rows: Row[] = [];
  const f = (value: number) => `${value.toFixed(1)} ms`;
  const signed = (value: number) => `${value >= 0 ? "+" : "−"}${f(Math.abs(value))}`;
  for (const [q, name, kind] of [[0.5, "p50", figures.samples], [0.99, "p99", figures.samples], [0.5, "CPU (user + system) p50", figures.cpu]] as const) {
    const at = (probe: Probe) => percentile(kind.get(probe) ?? [], q);
    const base = at(cat);
    for (const probe of figures.probes) {
      const value = at(probe);
      const figure = `${probe.figure} ${name}`;
      if (probe === cat) {
        rows.push({ figure, config: probe.config, value: f(value), baseline: "(baseline)", delta: "", target: "", result: "" });
        continue;
      }
      const parts = [`${signed(value - base)}, ${(value / base).toFixed(1)}× /bin/cat`];
      // A hook call against the start of the same binary.
      const own = figures.probes.find((other) => other.figure === start.figure && other.command[0] === probe.command[0]);
      if (own && own !== probe) parts.push(`${signed(value - at(own))} over its --version`);
      const before = AGAINST ? figures.probes.find((other) => other.figure === probe.figure && other.config === `${probe.config}, --against`) : undefined;
      if (before) parts.push(`${(value / at(before)).toFixed(2)}× --against`);
      rows.push({ figure, config: probe.config, value: f(value), baseline: f(base), delta: parts.join("; "), target: "", result: "" });
    }
  }
  return rows;
}
