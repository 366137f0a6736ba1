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

async function evaluate(service: GovernanceService, name: string, args: Record<string, unknown>) {
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
    const listed = await evaluate(service, "shell", { command: "ls -la && git status", tool: "Bash" });
    expect([listed.decision, listed.rule_id, listed.shell]).toEqual(["forward", "agent-read-only-shell", { commands: ["ls -la", "git status"] }]);

    // A caller that says the line runs only `ls`: the service reads `rm -rf /` and asks.
    const lied = await evaluate(service, "shell", { command: "rm -rf /", commands: ["ls"], tool: "Bash" });
    expect([lied.decision, lied.rule_id, lied.shell]).toEqual(["pending_approval", "agent-ask", { commands: ["rm -rf /"] }]);
    expect(lied.prompt).toContain("rm -rf /");

    // A line the parser cannot read is asked, with why, even with a read-only list beside it.
    const unreadable = await evaluate(service, "shell", { command: "ls; $(echo rm) -rf /", commands: ["ls"], tool: "Bash" });
    expect([unreadable.decision, unreadable.rule_id]).toEqual(["pending_approval", "agent-ask"]);
    expect(unreadable.shell).toEqual({ unreadable: expect.stringContaining("only known when it runs") });

    // A readable line with an `unreadable` of the caller's: judged on what the service read.
    const cleared = await evaluate(service, "shell", { command: "ls", unreadable: "x", tool: "Bash" });
    expect([cleared.decision, cleared.shell]).toEqual(["forward", { commands: ["ls"] }]);

    // A command that is not a string reads as nothing run: asked.
    const odd = await evaluate(service, "shell", { command: ["ls"], commands: ["ls"], tool: "Bash" });
    expect([odd.decision, odd.shell]).toEqual(["pending_approval", { unreadable: "the command runs nothing the parser could find" }]);
  });

  test("a service whose bash parser cannot load denies each shell call with one line saying why, and decides the rest", async () => {
    const service = start(serviceShellReader(async () => Promise.reject(new Error("wasm compile failed"))));
    const shell = await evaluate(service, "shell", { command: "ls", tool: "Bash" });
    expect([shell.decision, shell.gate]).toEqual(["deny", "governance"]);
    expect(shell.reason).toBe("the governance service's bash parser did not load (wasm compile failed)");
    expect(shell.error?.message).toContain("the governance service's bash parser did not load");
    const read = await evaluate(service, "read", { path: "/etc/hostname", tool: "Read" });
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
    await evaluate(service, "read", { path: "/etc/hostname", tool: "Read" });
    expect(loads).toBe(0);
    await Promise.all([evaluate(service, "shell", { command: "ls", tool: "Bash" }), evaluate(service, "shell", { command: "pwd", tool: "Bash" })]);
    await evaluate(service, "shell", { command: "git status", tool: "Bash" });
    expect(loads).toBe(1);
  });
});
