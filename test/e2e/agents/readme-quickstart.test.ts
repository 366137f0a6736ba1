/**
 * The README's quick start held to the binary: every command it shows exists with the flags it
 * shows, and its walk-through (wrap an agent, the banner it promises, the summary's log command,
 * `thoughtgate log` answering it) is run with the real Claude Code (`claude -p`, against the
 * loopback fake Anthropic API) so the README cannot drift from what a person sees.
 */
import { describe, expect, setDefaultTimeout, test } from "bun:test";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { agentSandbox, claudeCode, claudeToolName, describeRun, everythingServer } from "../../support/agents.ts";
import { startFakeAnthropic } from "../../support/fake-models/anthropic.ts";
import { requireBinary, ROOT } from "../../support/harness.ts";
import { runWrapped, throughWrap, writeUserPolicy } from "../../support/wrapped-agents.ts";

setDefaultTimeout(90_000);

const README = readFileSync(join(ROOT, "README.md"), "utf8");
const QUICK_START = README.slice(README.indexOf("\n## Quick start\n"), README.indexOf("\n## ", README.indexOf("\n## Quick start\n") + 5));

/** The `thoughtgate …` commands of the quick start's shell blocks, comments cut. */
function quickStartCommands(): string[][] {
  const blocks = [...QUICK_START.matchAll(/```sh\n([\s\S]*?)```/g)].map((m) => m[1] ?? "");
  return blocks
    .flatMap((block) => block.split("\n"))
    .map((line) => line.replace(/\s+#.*$/, "").trim())
    .filter((line) => line.startsWith("thoughtgate "))
    .map((line) => line.split(/\s+/));
}

/** A text block's lines that carry no placeholder (… or a port), as the README shows them. */
function promisedLines(): string[] {
  const block = /```text\n(thoughtgate: [\s\S]*?)```/.exec(QUICK_START)?.[1] ?? "";
  return block.split("\n").filter((line) => line.startsWith("thoughtgate:") && !line.includes("…"));
}

function thoughtgate(args: string[], env: Record<string, string>) {
  const run = Bun.spawnSync([requireBinary(), ...args], { env, stdout: "pipe", stderr: "pipe" });
  return { code: run.exitCode, stdout: run.stdout.toString(), stderr: run.stderr.toString() };
}

describe("the README reads as a guide", () => {
  test("the two commands first, then what it does, the quick start, a policy, troubleshooting, install, and the reference; design reasoning in docs/", () => {
    const blocks = [...README.matchAll(/```sh\n([\s\S]*?)```/g)].map((m) => (m[1] ?? "").trim());
    expect(blocks.slice(0, 2)).toEqual([
      "npm install -g bun@1.4.5 && bun install --frozen-lockfile && bun run build && ./dist/thoughtgate demo",
      "npm install -g bun@1.4.5 && bun install --frozen-lockfile && bun run test",
    ]);
    expect(README.indexOf("```sh")).toBeLessThan(README.indexOf("\n## "));
    const headings = [...README.matchAll(/^## (.+)$/gm)].map((m) => m[1]);
    expect(headings.slice(0, 6)).toEqual(["What it does", "Quick start", "A policy in five minutes", "Troubleshooting", "Install", "Security"]);
    expect(headings.slice(6).every((heading) => heading?.startsWith("`thoughtgate ") || ["Governance commands", "Exit codes", "Development"].includes(heading ?? ""))).toBe(true);
    // The npm launcher's rationale and the status of each part are design records: docs/, linked.
    expect(README).not.toContain("optionalDependencies");
    expect(headings).not.toContain("Status");
    expect(README).toContain("(docs/packaging.md)");
    expect(README).toContain("(docs/status.md)");
  });
});

describe("the README's quick start", () => {
  test("every command it shows exists, with the flags it shows", () => {
    const commands = quickStartCommands();
    expect(commands.map((c) => c[1])).toEqual(["wrap", "approvals", "tasks", "approve", "log"]);
    for (const command of commands) {
      const help = thoughtgate([command[1] ?? "", "--help"], { ...process.env } as Record<string, string>);
      expect([command.join(" "), help.code]).toEqual([command.join(" "), 0]);
      for (const flag of command.join(" ").match(/--[a-z-]+/g) ?? []) expect([command[1], help.stdout.includes(flag)]).toEqual([command[1], true]);
    }
  });

  test("wrap -- claude shows what it promises, and the summary's log command lists the session's calls", async () => {
    await using sandbox = agentSandbox();
    writeUserPolicy(sandbox, "schema: 1\ngovernance:\n  rules:\n    - { id: no-sums, match: get-sum, action: deny }\n");
    const ECHO = claudeToolName("fs", "echo");
    const SUM = claudeToolName("fs", "get-sum");
    await using model = startFakeAnthropic({ calls: [{ tool: ECHO, arguments: { message: "hi" } }, { tool: SUM, arguments: { a: 1, b: 2 } }], finalText: "Done." });
    const launch = throughWrap(claudeCode(sandbox, { model, servers: { fs: everythingServer(sandbox) }, scope: "project", prompt: "Echo, then add.", allowedTools: [ECHO, SUM] }));
    const run = await runWrapped(launch, sandbox);
    expect(run.exitCode, describeRun(launch, run, model)).toBe(0);

    // The banner as the README shows it: its literal lines, the coverage table's header and row.
    for (const line of promisedLines().filter((l) => !l.startsWith("thoughtgate: policy"))) expect(run.stderr).toContain(line);
    expect(run.stderr).toMatch(/^SERVER +SCOPE +FILE +GOVERNED$/m);
    expect(run.stderr).toMatch(/^fs +project +\.\/\.mcp\.json +yes$/m);
    expect(run.stderr).toMatch(/^thoughtgate: approvals page \(keep it private\) http:\/\/127\.0\.0\.1:\d+\/approvals#key=[0-9a-f]{64}$/m);

    // The summary ends with the command that shows every call; it does.
    const session = /thoughtgate log --session (\S+)/.exec(run.stderr)?.[1] ?? "";
    expect(session).not.toBe("");
    const env = { ...process.env, ...sandbox.env } as Record<string, string>;
    const log = thoughtgate(["log", "--session", session, "--json"], env);
    expect(log.code, log.stderr).toBe(0);
    const calls = log.stdout.trim().split("\n").map((line) => JSON.parse(line) as { tool: string; outcome: string });
    expect(calls.map((c) => [c.tool, c.outcome]).toSorted()).toEqual([["echo", "forwarded"], ["get-sum", "denied"]]);
    const denied = thoughtgate(["log", "--since", "1d", "--server", "fs", "--decision", "denied", "--json"], env);
    expect(denied.stdout.trim().split("\n").map((line) => (JSON.parse(line) as { tool: string }).tool)).toEqual(["get-sum"]);
  });
});
