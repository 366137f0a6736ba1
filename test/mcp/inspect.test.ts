import { describe, expect, test } from "bun:test";
import { canonicalJson, sha256Hex } from "../../src/core/canonical-json.ts";
import { inspectServer, type InspectReport } from "../../src/mcp/inspect.ts";
import { fixture, processesWith } from "../support/harness.ts";

const TEST_TIMEOUT_MS = 30_000;
const QUICK = { stdinCloseMs: 500, sigtermMs: 500 };

function inspectFixture(...flags: string[]): { marker: string; report: Promise<InspectReport> } {
  const marker = `client-mcp-${Bun.randomUUIDv7()}`;
  const report = inspectServer({ command: fixture("client-mcp-server-fixture.ts", ...flags, marker), timeoutMs: 10_000, graces: QUICK });
  return { marker, report };
}

describe("inspectServer", () => {
  test("lists every page of tools and resources, with hints as declared, and stops the server", async () => {
    const { marker, report: pending } = inspectFixture();
    const report = await pending;
    expect(report.server).toEqual({
      name: "client-mcp-server-fixture",
      title: "Fixture Server",
      version: "3.1.4",
      protocolVersion: "2025-06-18",
      instructions: null,
    });
    expect(report.tools.map((tool) => [tool.name, tool.title, tool.annotations])).toEqual([
      ["read_file", null, { readOnlyHint: true, destructiveHint: null, idempotentHint: null, openWorldHint: false }],
      ["delete_file", null, { readOnlyHint: false, destructiveHint: true, idempotentHint: true, openWorldHint: false }],
      ["no_hints", null, { readOnlyHint: null, destructiveHint: null, idempotentHint: null, openWorldHint: null }],
      ["search", "Search the web", { readOnlyHint: null, destructiveHint: null, idempotentHint: null, openWorldHint: true }],
      ["fifth", "Fifth tool", { readOnlyHint: null, destructiveHint: null, idempotentHint: null, openWorldHint: null }],
    ]);
    expect(report.tools[0]?.definition).toEqual({
      name: "read_file",
      description: "Read a file",
      inputSchema: { type: "object", properties: { path: { type: "string" } }, required: ["path"] },
      annotations: { readOnlyHint: true, openWorldHint: false },
    });
    for (const tool of report.tools) expect(tool.definition_hash).toBe(sha256Hex(canonicalJson(tool.definition)));
    // No prompts capability: not asked (the fixture would have answered with an error).
    expect(report.prompts).toEqual([]);
    expect(report.resources).toEqual([
      { uri: "file:///a.txt", name: "a.txt", title: null, mimeType: "text/plain", description: null },
      { uri: "file:///b.md", name: "b.md", title: null, mimeType: "text/markdown", description: null },
      { uri: "memo://c", name: "c", title: null, mimeType: null, description: null },
    ]);
    expect(processesWith(marker)).toEqual([]);
  }, TEST_TIMEOUT_MS);

  test("a kind the server declares no capability for comes back empty", async () => {
    const report = await inspectFixture("--tools-only").report;
    expect(report.tools).toHaveLength(5);
    expect(report.resources).toEqual([]);
    expect(report.prompts).toEqual([]);
  }, TEST_TIMEOUT_MS);

  test("a definition hash is stable across runs and changes only for the tool that changed", async () => {
    const hashes = (report: InspectReport) => Object.fromEntries(report.tools.map((tool) => [tool.name, tool.definition_hash]));
    const [first, again, changed] = await Promise.all([
      inspectFixture().report,
      inspectFixture().report,
      inspectFixture("--changed-description").report,
    ]);
    expect(hashes(again)).toEqual(hashes(first));
    const differing = Object.keys(hashes(first)).filter((name) => hashes(first)[name] !== hashes(changed)[name]);
    expect(differing).toEqual(["delete_file"]);
  }, TEST_TIMEOUT_MS);

  test("a server that repeats a cursor is an error, not an endless loop", async () => {
    const { marker, report } = inspectFixture("--cursor-loop");
    await expect(report).rejects.toMatchObject({ code: "PROTOCOL", message: expect.stringContaining('cursor "again" twice') });
    expect(processesWith(marker)).toEqual([]);
  }, TEST_TIMEOUT_MS);

  test("a server that never answers initialize times out and is stopped", async () => {
    const marker = `client-mcp-${Bun.randomUUIDv7()}`;
    const command = fixture("client-mcp-server-fixture.ts", "--no-initialize", marker);
    const report = inspectServer({ command, timeoutMs: 500, graces: QUICK });
    await expect(report).rejects.toMatchObject({
      code: "TIMEOUT",
      message: `MCP server ${command.join(" ")}: initialize: no response within 500 ms`,
    });
    expect(processesWith(marker)).toEqual([]);
  }, TEST_TIMEOUT_MS);

  test("a command that cannot start is a SPAWN_FAILED error", async () => {
    await expect(inspectServer({ command: ["/nonexistent/thoughtgate-server"], timeoutMs: 1_000 })).rejects.toMatchObject({
      code: "SPAWN_FAILED",
    });
  });
});
