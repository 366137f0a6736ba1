import { describe, expect, test } from "bun:test";
import { join } from "node:path";
import { canonicalJson, sha256Hex } from "../../src/core/canonical-json.ts";
import type { InspectReport } from "../../src/mcp/inspect.ts";
import { EVERYTHING_SERVER, fixture, isAlive, processesWith, requireBinary, waitFor } from "../support/harness.ts";

// Starting node and the everything server through the compiled binary is slow on 2 busy cores.
const TEST_TIMEOUT_MS = 45_000;

type Run = { exitCode: number; stdout: string; stderr: string };

/**
 * A state directory with no pins: inspect checks a server's tools against every other server's
 * pinned tools (shadowing), and other tests of the run pin theirs.
 */
const NO_PINS = { ...process.env, XDG_STATE_HOME: join(process.env.HOME ?? "/nonexistent", "inspect-no-pins") };

async function thoughtgate(...args: string[]): Promise<Run> {
  await using proc = Bun.spawn([requireBinary(), ...args], { stdin: "ignore", stdout: "pipe", stderr: "pipe", env: NO_PINS });
  const [stdout, stderr, exitCode] = await Promise.all([new Response(proc.stdout).text(), new Response(proc.stderr).text(), proc.exited]);
  return { exitCode, stdout, stderr };
}

/** Our own lines on stderr (the everything server logs a startup line there too). */
function ownLines(stderr: string): string[] {
  return stderr.split("\n").filter((line) => /^\[(error|warn|info)\]/.test(line));
}

describe("thoughtgate inspect", () => {
  test("--json lists the everything server's tools with annotations and definition hashes", async () => {
    const run = await thoughtgate("inspect", "--json", "--", ...EVERYTHING_SERVER);
    expect(ownLines(run.stderr)).toEqual([]);
    expect(run.exitCode).toBe(0);
    const report = JSON.parse(run.stdout) as InspectReport;

    expect(report.server).toMatchObject({ name: "mcp-servers/everything", protocolVersion: "2025-06-18" });
    const names = report.tools.map((tool) => tool.name);
    expect(names).toEqual(expect.arrayContaining(["echo", "get-sum", "get-env", "toggle-simulated-logging"]));

    const echo = report.tools.find((tool) => tool.name === "echo");
    expect(echo).toMatchObject({
      title: "Echo Tool",
      description: "Echoes back the input string",
      annotations: { readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: false },
      definition: { name: "echo", inputSchema: { type: "object", required: ["message"] } },
    });
    const toggle = report.tools.find((tool) => tool.name === "toggle-simulated-logging");
    expect(toggle?.annotations).toEqual({ readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: false });

    for (const tool of report.tools) {
      expect(tool.definition_hash).toMatch(/^[0-9a-f]{64}$/);
      expect(tool.definition_hash).toBe(sha256Hex(canonicalJson(tool.definition)));
    }
    expect(new Set(report.tools.map((tool) => tool.definition_hash)).size).toBe(report.tools.length);

    expect(report.prompts.map((prompt) => prompt.name)).toEqual(expect.arrayContaining(["simple-prompt", "args-prompt"]));
    const argsPrompt = report.prompts.find((prompt) => prompt.name === "args-prompt");
    expect(argsPrompt?.arguments.map((arg) => [arg.name, arg.required])).toEqual([
      ["city", true],
      ["state", false],
    ]);
    expect(report.resources.length).toBeGreaterThan(0);
    for (const resource of report.resources) expect(resource.uri).toMatch(/^[a-z]+:\/\//);
  }, TEST_TIMEOUT_MS);

  test("the default output is a plain table with the same tools and hashes", async () => {
    const [table, json] = await Promise.all([
      thoughtgate("inspect", "--", ...EVERYTHING_SERVER),
      thoughtgate("inspect", "--json", "--", ...EVERYTHING_SERVER),
    ]);
    expect(table.exitCode).toBe(0);
    const report = JSON.parse(json.stdout) as InspectReport;
    const lines = table.stdout.split("\n");

    expect(lines[0]).toMatch(/^Server +Everything Reference Server \S+ \(mcp-servers\/everything\)$/);
    expect(lines).toContain(`Tools (${report.tools.length})`);
    expect(lines).toContain(`Prompts (${report.prompts.length})`);
    expect(lines).toContain(`Resources (${report.resources.length})`);
    expect(lines).toContainEqual(expect.stringMatching(/^ +NAME +READ-ONLY +DESTRUCTIVE +IDEMPOTENT +OPEN-WORLD +FINDINGS +DEFINITION HASH$/));
    for (const tool of report.tools) {
      const row = lines.find((line) => line.trim().startsWith(`${tool.name} `));
      expect(row?.trim().split(/ +/)).toEqual([
        tool.name,
        ...Object.values(tool.annotations).map((value) => (value === null ? "-" : value ? "yes" : "no")),
        "-",
        tool.definition_hash,
      ]);
    }
    // The reference server is benign: the poisoning checks find nothing in it.
    expect(lines).toContain("Poisoning checks: nothing found");
    // Not a terminal: no escape sequences.
    expect(table.stdout).not.toContain("\u001b[");
  }, TEST_TIMEOUT_MS);

  test("a command that cannot start: one-line error, exit 1", async () => {
    const run = await thoughtgate("inspect", "--", "/nonexistent/mcp-server", "--stdio");
    expect(run.exitCode).toBe(1);
    expect(run.stdout).toBe("");
    const lines = run.stderr.trim().split("\n");
    expect(lines).toHaveLength(1);
    expect(lines[0]).toContain("/nonexistent/mcp-server");
  }, TEST_TIMEOUT_MS);

  test("a server that never answers initialize: one-line error after --timeout, exit 1, server stopped", async () => {
    const marker = `client-silent-${Bun.randomUUIDv7()}`;
    const run = await thoughtgate("inspect", "--timeout", "1s", "--", ...fixture("client-silent-fixture.ts", marker));
    expect(run.exitCode).toBe(1);
    expect(run.stdout).toBe("");
    expect(run.stderr.trim().split("\n")).toEqual([expect.stringMatching(/initialize: no response within 1000 ms$/)]);
    expect(processesWith(marker)).toEqual([]);
  }, TEST_TIMEOUT_MS);

  test("Ctrl+C while waiting stops the server too (it is in its own process group), exit 1", async () => {
    const marker = `client-silent-${Bun.randomUUIDv7()}`;
    await using proc = Bun.spawn([requireBinary(), "inspect", "--", ...fixture("client-silent-fixture.ts", marker)], {
      stdin: "ignore",
      stdout: "pipe",
      stderr: "pipe",
    });
    // thoughtgate's own command line carries the marker too: the server is the other process.
    const serverPid = await waitFor(() => processesWith(marker).find((pid) => pid !== proc.pid), "the server to start");
    proc.kill("SIGINT");
    const [stderr, exitCode] = await Promise.all([new Response(proc.stderr).text(), proc.exited]);
    expect(exitCode).toBe(1);
    expect(stderr.trim().split("\n")).toEqual([expect.stringContaining("interrupted by SIGINT")]);
    expect(isAlive(serverPid)).toBe(false);
  }, TEST_TIMEOUT_MS);

  test("a server that exits instead of answering: the exit status in one line, exit 1", async () => {
    const run = await thoughtgate("inspect", "--", "sh", "-c", "exit 7");
    expect(run.exitCode).toBe(1);
    expect(run.stderr.trim().split("\n")).toEqual([expect.stringContaining("the server exited with status 7 before answering initialize")]);
  }, TEST_TIMEOUT_MS);

  test("usage errors exit 2: no command after --, an unknown flag, a bad duration", async () => {
    const missing = await thoughtgate("inspect", "--json");
    expect(missing.exitCode).toBe(2);
    expect(missing.stderr).toContain("inspect needs a command after --");

    const unknown = await thoughtgate("inspect", "--colour", "--", ...EVERYTHING_SERVER);
    expect(unknown.exitCode).toBe(2);
    expect(unknown.stderr).toContain("unknown flag --colour");

    const badTimeout = await thoughtgate("inspect", "--timeout", "soon", "--", ...EVERYTHING_SERVER);
    expect(badTimeout.exitCode).toBe(2);
    expect(badTimeout.stderr).toContain("--timeout");
  }, TEST_TIMEOUT_MS);
});
