/**
 * The end of a `thoughtgate wrap` session, through the compiled binary: an agent that SIGKILLs its
 * MCP servers (the shims) as Copilot CLI does must not keep wrap waiting, must not leave a shim's
 * run without its `run_end`, and must not leave a server running; and the summary tells a person's
 * approval from a workflow rule's.
 */
import { afterEach, describe, expect, setDefaultTimeout, test } from "bun:test";
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { fixture, processesWith, readEvents, requireBinary, waitFor } from "../support/harness.ts";
import { wrapSandbox } from "../support/wrap-sandbox.ts";
import { decideAtTerminal, tasksAtTerminal } from "../support/terminal.ts";

setDefaultTimeout(60_000);
requireBinary();

/** How long wrap waited for shims that were already gone, before it stopped looking at whether they were alive. */
const OLD_DRAIN_WAIT_MS = 10_000;

const markers: string[] = [];
afterEach(() => {
  // A failed test must not leave its servers behind either.
  for (const marker of markers.splice(0)) for (const pid of processesWith(marker)) process.kill(pid, "SIGKILL");
});

const sessionRecord = (stderr: string) => /session record (\S+)/.exec(stderr)?.[1] ?? "";

describe("an agent that SIGKILLs its MCP servers", () => {
  test("wrap ends at once, writes each shim's run_end for it, and ends the servers and their children left running", async () => {
    await using box = wrapSandbox();
    const marker = `tg-sigkilled-${crypto.randomUUID()}`;
    markers.push(marker);
    // Servers that outlive their stdin (and a child each, in their process group): only wrap can end them now.
    const server = (name: string) => ({ command: process.execPath, args: [join(import.meta.dir, "../fixtures/scripted-server-fixture.ts"), "--ignore-eof", "--marker", `${marker}-${name}`, "--grandchild", `${marker}-${name}-child`] });
    const config = join(box.project, "mcp.json");
    const original = `${JSON.stringify({ mcpServers: { notes: server("notes"), mail: server("mail") } }, null, 2)}\n`;
    writeFileSync(config, original);
    const report = join(box.project, "agent-report.json");
    const wrap = box.start(["wrap", "--agent-type", "custom", "--config-path", config, "--", ...fixture("sigkill-servers-agent-fixture.ts", config, report)]);
    const code = await wrap.proc.exited;
    const endedAt = Date.now();
    expect(code).toBe(0);
    const { pids, killedAt } = JSON.parse(readFileSync(report, "utf8")) as { pids: number[]; killedAt: number };
    expect(pids).toHaveLength(2);
    // Well under the 10 s wrap used to wait for shims that were already dead.
    expect(endedAt - killedAt).toBeLessThan(OLD_DRAIN_WAIT_MS / 2);

    const events = readEvents(sessionRecord(wrap.stderr()));
    const starts = events.filter((e) => e.type === "run_start");
    const ends = events.filter((e) => e.type === "run_end");
    expect(starts.map((e) => e.pid).sort()).toEqual([...pids].sort());
    expect(ends.map((e) => [e.server_id, e.pid, e.written_by, e.status]).sort()).toEqual(
      starts.map((e) => [e.server_id, e.pid, "thoughtgate wrap", "killed"]).sort(),
    );
    // Servers and their children: nothing of the session is left running.
    // (A process SIGKILLed a moment ago may take a moment to leave /proc.)
    await waitFor(() => processesWith(marker).length === 0, `no process of the session left: ${processesWith(marker).join(" ")}`, 2_000);
    expect(wrap.stderr()).toContain("thoughtgate: ended 2 MCP server process group(s) left running after their shim");
    expect(wrap.stderr()).toContain("(2 shim(s) were killed by the agent before they could finish; their run_end was written by wrap)");
    expect(readFileSync(config, "utf8")).toBe(original);
  });
});

describe("the session summary", () => {
  test("a person's approval is counted apart from a call a workflow let through on its timeout", async () => {
    await using box = wrapSandbox();
    const config = join(box.project, "mcp.json");
    writeFileSync(config, `${JSON.stringify({ mcpServers: { scripted: { command: process.execPath, args: [join(import.meta.dir, "../fixtures/scripted-server-fixture.ts")] } } })}\n`);
    const policy = join(box.project, "policy.yaml");
    writeFileSync(
      policy,
      `schema: 1
governance:
  rules:
    - { id: lapses, match: echo, action: approve, approval: lapse }
    - { id: asks, match: env, action: approve, approval: person }
approval:
  lapse: { destination: { type: web }, timeout: 500ms, on_timeout: approve }
  person: { destination: { type: cli }, timeout: 1m, on_timeout: deny }
`,
    );
    const report = join(box.project, "agent-report.json");
    const wrap = box.start(["wrap", "--agent-type", "custom", "--config-path", config, "--thoughtgate-config", policy, "--",
      ...fixture("wrap-agent-fixture.ts", config, report, "--call", "echo:{}", "--call", "env:{}")]);
    // echo lapses into an approval by itself; env waits for a person: approve it from "another terminal".
    const task = await waitFor(async () => {
      const listed = await tasksAtTerminal(["--json"], { env: box.env, cwd: box.project });
      const tasks = listed.exitCode === 0 ? (JSON.parse(listed.stdout) as Array<{ task_id: string; name: string; status: string }>) : [];
      return tasks.find((t) => t.name === "env" && t.status === "pending");
    }, "the env call to wait for approval");
    expect((await decideAtTerminal(["approve", task.task_id], { env: box.env })).exitCode).toBe(0);
    expect(await wrap.proc.exited).toBe(0);
    expect(existsSync(report)).toBe(true);
    const results = (JSON.parse(readFileSync(report, "utf8")) as { results: Record<string, unknown> }).results;
    expect(Object.keys(results).sort()).toEqual(["echo", "env"]);
    expect(Object.values(results).every((r) => typeof r === "object" && r !== null && "ok" in r)).toBe(true);
    const decided = readEvents(sessionRecord(wrap.stderr())).filter((e) => e.type === "tool_call_decision" && e.decision === "forward");
    expect(decided.map((e) => [e.tool, e.approved_by]).sort()).toEqual([["echo", "timeout"], ["env", "cli"]]);
    expect(wrap.stderr()).toMatch(/forwarded\s+2 \(1 approved by a person\) \(1 let through by a workflow rule, no person: on_timeout approve\)/);
  });
});
