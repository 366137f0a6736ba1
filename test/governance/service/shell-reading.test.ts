/**
 * The governance service reads an agent's shell call itself (docs/governance.md, "Built-in tools"):
 * the gates decide on its bash parser's reading of the line the caller sent as `command`, never on a
 * `commands` list or an `unreadable` of the caller's, and the answer says what it read. A service
 * whose parser cannot load denies each shell call, saying why; other calls are decided as ever.
 */
import { afterEach, describe, expect, test } from "bun:test";
import * as v from "valibot";
import { GovernanceEngine } from "../../../src/governance/engine/engine.ts";
import { EMBEDDED_DEFAULT } from "../../../src/governance/engine/default-policy.ts";
import { startGovernanceService, type GovernanceService } from "../../../src/governance/service/service.ts";
import { serviceShellReader, type ShellReader } from "../../../src/governance/service/shell-reading.ts";
import { evaluateResponse } from "../../../src/governance/wire/api.ts";

const SESSION = "s".repeat(64);
const open: GovernanceService[] = [];
afterEach(async () => {
  for (const service of open.splice(0)) await service.stop();
});

function start(shellReader?: ShellReader): GovernanceService {
  const service = startGovernanceService({
    people: () => null,
    engine: new GovernanceEngine(EMBEDDED_DEFAULT, null, "embedded default"),
    profile: "production",
    sessionSecret: SESSION,
    pageKey: "p".repeat(64),
    cliKey: "c".repeat(64),
    port: 0,
    ...(shellReader ? { shellReader } : {}),
  });
  open.push(service);
  return service;
}

async function evaluateOverHttp(service: GovernanceService, name: string, args: Record<string, unknown>) {
  const response = await fetch(`${service.url}/governance/evaluate`, {
    method: "POST",
    headers: { authorization: `Bearer ${SESSION}`, "content-type": "application/json" },
    body: JSON.stringify({ server_id: "agent", direction: "agent_to_server", method: "tools/call", name, arguments: args, id: `hook-${name}`, message_type: "request", profile: "production" }),
  });
  expect(response.status).toBe(200);
  return v.parse(evaluateResponse, await response.json());
}

describe("an agent's shell call, read by the service", () => {
  test("the gates judge the service's reading of `command`, whatever command list the caller sent", async () => {
    const service = start();
    const listed = await evaluateOverHttp(service, "shell", { command: "ls -la && git status", tool: "Bash" });
    expect([listed.decision, listed.rule_id, listed.shell]).toEqual(["forward", "agent-read-only-shell", { commands: ["ls -la", "git status"] }]);

    // A caller that says the line runs only `ls`: the service reads `rm -rf /` and asks.
    const lied = await evaluateOverHttp(service, "shell", { command: "rm -rf /", commands: ["ls"], tool: "Bash" });
    expect([lied.decision, lied.rule_id, lied.shell]).toEqual(["pending_approval", "agent-ask", { commands: ["rm -rf /"] }]);
    expect(lied.prompt).toContain("rm -rf /");

    // A line the parser cannot read is asked, with why, even with a read-only list beside it.
    const unreadable = await evaluateOverHttp(service, "shell", { command: "ls; $(echo rm) -rf /", commands: ["ls"], tool: "Bash" });
    expect([unreadable.decision, unreadable.rule_id]).toEqual(["pending_approval", "agent-ask"]);
    expect(unreadable.shell).toEqual({ unreadable: expect.stringContaining("only known when it runs") });

    // A readable line with an `unreadable` of the caller's: judged on what the service read.
    const cleared = await evaluateOverHttp(service, "shell", { command: "ls", unreadable: "x", tool: "Bash" });
    expect([cleared.decision, cleared.shell]).toEqual(["forward", { commands: ["ls"] }]);

    // A command that is not a string reads as nothing run: asked.
    const odd = await evaluateOverHttp(service, "shell", { command: ["ls"], commands: ["ls"], tool: "Bash" });
    expect([odd.decision, odd.shell]).toEqual(["pending_approval", { unreadable: "the command runs nothing the parser could find" }]);
  });

  test("a service whose bash parser cannot load denies each shell call with one line saying why, and decides the rest", async () => {
    const service = start(serviceShellReader(async () => Promise.reject(new Error("wasm compile failed"))));
    const shell = await evaluateOverHttp(service, "shell", { command: "ls", tool: "Bash" });
    expect([shell.decision, shell.gate]).toEqual(["deny", "governance"]);
    expect(shell.reason).toBe("the governance service's bash parser did not load (wasm compile failed)");
    expect(shell.error?.message).toContain("the governance service's bash parser did not load");
    const read = await evaluateOverHttp(service, "read", { path: "/etc/hostname", tool: "Read" });
    expect(read.decision).not.toBe("deny");
    expect(read.shell).toBeUndefined();
  });

  test("the parser is loaded once, on the first shell call, and kept", async () => {
    let loads = 0;
    const embedded = serviceShellReader();
    const service = start(
      serviceShellReader(async () => {
        loads += 1;
        await embedded.whenReady();
        return (line) => {
          const reading = embedded.read(line);
          if ("failed" in reading) throw new Error(reading.failed);
          return reading;
        };
      }),
    );
    await evaluateOverHttp(service, "read", { path: "/etc/hostname", tool: "Read" });
    expect(loads).toBe(0);
    await Promise.all([evaluateOverHttp(service, "shell", { command: "ls", tool: "Bash" }), evaluateOverHttp(service, "shell", { command: "pwd", tool: "Bash" })]);
    await evaluateOverHttp(service, "shell", { command: "git status", tool: "Bash" });
    expect(loads).toBe(1);
  });

  test("on a shim's channel, a frame with a shell call waits for the parser, and its answers come back in one frame", async () => {
    const parser = Promise.withResolvers<void>();
    const embedded = serviceShellReader();
    const service = start(
      serviceShellReader(async () => {
        await parser.promise;
        await embedded.whenReady();
        return (line) => {
          const reading = embedded.read(line);
          if ("failed" in reading) throw new Error(reading.failed);
          return reading;
        };
      }),
    );
    const socket = new WebSocket(`${service.url.replace("http", "ws")}/governance/channel`, { headers: { authorization: `Bearer ${SESSION}` } } as unknown as string[]);
    const frames: string[] = [];
    const arrived = Promise.withResolvers<void>();
    socket.onmessage = (event) => {
      frames.push(String(event.data));
      arrived.resolve();
    };
    await new Promise((resolve) => (socket.onopen = resolve));
    const evaluate = { server_id: "agent", direction: "agent_to_server", method: "tools/call", name: "shell", arguments: { command: "cd x && rm -rf y", commands: ["ls"], tool: "Bash" }, id: "hook-1", message_type: "request", profile: "production" };
    socket.send([JSON.stringify({ id: 1, method: "POST", path: "/governance/heartbeat", body: { server_id: "agent", pid: process.pid } }), JSON.stringify({ id: 2, method: "POST", path: "/governance/evaluate", body: evaluate })].join("\n"));
    // Nothing answers while the parser loads; a call that is not a shell call meanwhile is answered at once.
    const other = await evaluateOverHttp(service, "read", { path: "/etc/hostname", tool: "Read" });
    expect(other.decision).toBe("pending_approval");
    expect(frames).toEqual([]);
    parser.resolve();
    await arrived.promise;
    socket.close();
    expect(frames).toHaveLength(1);
    const answers = (frames[0] as string).split("\n").map((line) => JSON.parse(line) as { id: number; status: number; body: { decision?: string; shell?: unknown } });
    expect(answers.map((answer) => [answer.id, answer.status])).toEqual([[1, 200], [2, 200]]);
    expect([answers[1]?.body.decision, answers[1]?.body.shell]).toEqual(["pending_approval", { commands: ["cd x", "rm -rf y"] }]);
  });
});
