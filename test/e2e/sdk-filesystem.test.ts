/**
 * The reference filesystem server behind the compiled shim, confined by MCP roots: the client
 * offers one temp directory as its root, and the server must work inside it and refuse
 * everything outside it, with the shim carrying the roots exchange both ways.
 */
import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from "bun:test";
import { ElicitRequestSchema, ListRootsRequestSchema, type CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import { existsSync, mkdirSync, readFileSync, realpathSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { FILESYSTEM_SERVER_JS, tempDir, waitFor } from "../support/harness.ts";
import {
  auditProblems,
  callTool,
  closeAndListSurvivors,
  connect,
  finalEvents,
  killLeftovers,
  serverPidBehindShim,
  type Connection,
} from "../support/mcp-sdk.ts";
import { personReads } from "../support/approval-answers.ts";

// Real servers on a shared 2-core box; bun 1.4.5 does not apply bunfig's [test] timeout, so set it here.
setDefaultTimeout(60_000);

function textOf(result: Awaited<ReturnType<typeof callTool>>): string {
  return (result as CallToolResult).content.map((block) => (block.type === "text" ? block.text : `[${block.type}]`)).join("\n");
}

describe("server-filesystem through the shim stays inside the client's root", () => {
  const dir = tempDir("thoughtgate-sdk-filesystem-");
  // realpath: the server resolves symlinks (/tmp may be one) before comparing paths.
  const root = join(realpathSync(dir.path), "workspace");
  const outside = join(realpathSync(dir.path), "outside");
  const secret = join(outside, "secret.txt");
  let shim: Connection;
  let rootsRequests = 0;
  /** What the shim asked the user (MCP elicitation): the embedded default policy wants approval for destructive tools. */
  const approvalPrompts: string[] = [];
  let serverPid: number | null = null;

  beforeAll(async () => {
    mkdirSync(root);
    mkdirSync(outside);
    writeFileSync(secret, "not for the agent\n");
    shim = await connect({
      route: "shim",
      // No directory arguments: the server learns what it may touch only from the client's roots.
      server: ["node", FILESYSTEM_SERVER_JS],
      serverId: "filesystem",
      dir: dir.path,
      capabilities: { roots: { listChanged: true }, elicitation: {} },
      setup: (client) => {
        client.setRequestHandler(ListRootsRequestSchema, () => {
          rootsRequests += 1;
          return { roots: [{ uri: pathToFileURL(root).href, name: "workspace" }] };
        });
        client.setRequestHandler(ElicitRequestSchema, async (request) => {
          approvalPrompts.push(String(request.params.message));
          await personReads();
          return { action: "accept", content: { decision: "once" } };
        });
      },
    });
    // The server asks for roots after `initialized` and says on stderr when it has applied them.
    await waitFor(
      () => shim.stderr().includes("Updated allowed directories from MCP roots: 1 valid directories"),
      "the filesystem server to adopt the client's root",
    );
    serverPid = await serverPidBehindShim(shim);
  });

  afterAll(async () => {
    // Also when a test failed or was filtered out: close, then end whatever the close left behind.
    if (shim) killLeftovers(await closeAndListSurvivors(shim, serverPid));
    dir[Symbol.dispose]();
  });

  test("the server asked for roots through the shim and allows exactly the client's root", async () => {
    expect(rootsRequests).toBe(1);
    const allowed = await callTool(shim, { name: "list_allowed_directories", arguments: {} });
    expect(allowed.isError).toBeFalsy();
    expect(textOf(allowed)).toBe(`Allowed directories:\n${root}`);
  });

  test("writes and reads a file inside the root", async () => {
    const path = join(root, "notes", "hello.txt");
    mkdirSync(join(root, "notes"));
    const content = "written through ThoughtGate\nline two: é€😀\n";
    const written = await callTool(shim, { name: "write_file", arguments: { path, content } });
    expect(written.isError).toBeFalsy();
    expect(readFileSync(path, "utf8")).toBe(content);
    // write_file is annotated destructiveHint: true, so the embedded default policy asked the user
    // first (the client never called tools/list: the shim read the annotations itself).
    expect(approvalPrompts).toHaveLength(1);
    expect(approvalPrompts[0]).toStartWith("ThoughtGate: allow write_file on server filesystem?");

    const read = await callTool(shim, { name: "read_text_file", arguments: { path } });
    expect(read.isError).toBeFalsy();
    expect(read.structuredContent).toEqual({ content });

    const head = await callTool(shim, { name: "read_text_file", arguments: { path, head: 1 } });
    expect(textOf(head)).toBe("written through ThoughtGate");
  });

  test("refuses paths outside the root, including ../ escapes, and touches nothing there", async () => {
    const readSecret = await callTool(shim, { name: "read_text_file", arguments: { path: secret } });
    expect(readSecret.isError).toBe(true);
    expect(textOf(readSecret)).toContain("Access denied - path outside allowed directories");
    expect(textOf(readSecret)).not.toContain("not for the agent");

    const escape = await callTool(shim, { name: "read_text_file", arguments: { path: join(root, "..", "outside", "secret.txt") } });
    expect(escape.isError).toBe(true);
    expect(textOf(escape)).toContain("Access denied");

    const planted = join(outside, "planted.txt");
    const write = await callTool(shim, { name: "write_file", arguments: { path: planted, content: "should not exist" } });
    expect(write.isError).toBe(true);
    expect(textOf(write)).toContain("Access denied");
    expect(existsSync(planted)).toBe(false);
    expect(readFileSync(secret, "utf8")).toBe("not for the agent\n");
    // Reads are annotated readOnlyHint: true and need no approval; only the two writes asked.
    expect(approvalPrompts).toHaveLength(2);
  });

  test("closing the client ends the server, and the audit log accounts for every call", async () => {
    expect(await closeAndListSurvivors(shim, serverPid)).toEqual([]);

    const events = await finalEvents(shim);
    expect(auditProblems(events, shim.toolCalls)).toEqual([]);
    const ends = events.filter((event) => event.type === "tool_call_end").map((event) => [event.tool, event.status]);
    // A refusal is the server's answer (isError), not a transport failure.
    expect(ends).toEqual([
      ["list_allowed_directories", "ok"],
      ["write_file", "ok"],
      ["read_text_file", "ok"],
      ["read_text_file", "ok"],
      ["read_text_file", "error"],
      ["read_text_file", "error"],
      ["write_file", "error"],
    ]);
  });
});
