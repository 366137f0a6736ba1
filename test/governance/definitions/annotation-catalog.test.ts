/**
 * ThoughtGate's annotation catalog (src/governance/definitions/annotation-catalog.ts): its hints
 * are bound to the definitions the real servers in devDependencies serve, and to nothing else.
 */
import { describe, expect, test } from "bun:test";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { DEFAULT_GRACES, McpClient } from "../../../src/mcp/client.ts";
import { catalogHint } from "../../../src/governance/definitions/annotation-catalog.ts";
import shipped from "../../../src/governance/definitions/annotation-catalog.json" with { type: "json" };
import { BENIGN_SERVERS, PLACEHOLDER_ENV } from "../../fixtures/definitions/record-benign.ts";
import { buildCatalog } from "../../fixtures/definitions/record-catalog.ts";

const BENIGN = JSON.parse(readFileSync(join(import.meta.dir, "../../fixtures/definitions/benign.json"), "utf8"));

async function served(server: string): Promise<Array<Record<string, unknown>>> {
  const client = McpClient.start({ command: BENIGN_SERVERS[server] as string[], env: { ...process.env, ...PLACEHOLDER_ENV } });
  try {
    await client.initialize({ timeoutMs: 30_000 });
    return ((await client.request("tools/list", {}, 30_000)) as { tools: Array<Record<string, unknown>> }).tools;
  } finally {
    await client.close(DEFAULT_GRACES);
  }
}

describe("the annotation catalog", () => {
  test("is what record-catalog.ts writes from the recorded definitions", () => {
    expect(shipped as unknown).toEqual(buildCatalog(BENIGN));
  });

  test("gives every tool the real server-github serves its hint: 14 reads, 12 writes", async () => {
    const tools = await served("github");
    const hints = tools.map((tool) => [tool.name, catalogHint(tool)] as const);
    expect(hints.filter(([, hint]) => hint === null).map(([name]) => name)).toEqual([]);
    const reads = hints.filter(([, hint]) => hint?.annotations.readOnlyHint === true).map(([name]) => name);
    expect(reads.length).toBe(14);
    expect(reads).toContain("search_repositories");
    expect(reads).toContain("get_issue");
    const writes = hints.filter(([, hint]) => hint?.annotations.readOnlyHint === false);
    expect(writes.map(([name]) => name).sort()).toEqual(
      ["add_issue_comment", "create_branch", "create_issue", "create_or_update_file", "create_pull_request", "create_pull_request_review", "create_repository", "fork_repository", "merge_pull_request", "push_files", "update_issue", "update_pull_request_branch"].sort(),
    );
    // Every write reaches GitHub: the embedded default asks for each (docs/governance.md).
    expect(writes.every(([, hint]) => hint?.annotations.openWorldHint === true)).toBe(true);
    expect(hints[0]?.[1]?.source).toBe("ThoughtGate's annotation catalog (@modelcontextprotocol/server-github 2025.4.8)");
  }, 60_000);

  test("the other catalogued servers' tools, as they serve them now, each have a hint", async () => {
    for (const server of ["slack", "brave-search", "google-maps"]) {
      const tools = await served(server);
      expect({ server, unknown: tools.filter((tool) => catalogHint(tool) === null).map((tool) => tool.name) }).toEqual({ server, unknown: [] });
    }
  }, 90_000);

  test("a definition changed in any way, one that declares annotations, or another server's tool under a known name gets no hint", () => {
    const search = (BENIGN.servers.github.tools as Array<Record<string, unknown>>).find((tool) => tool.name === "search_repositories") as Record<string, unknown>;
    expect(catalogHint(search)?.annotations).toEqual({ readOnlyHint: true, openWorldHint: true });
    expect(catalogHint({ ...search, description: `${String(search.description)} Also deletes the repository.` })).toBeNull();
    expect(catalogHint({ ...search, inputSchema: { type: "object", properties: {} } })).toBeNull();
    expect(catalogHint({ ...search, annotations: { readOnlyHint: false } })).toBeNull();
    expect(catalogHint({ name: "search_repositories", inputSchema: { type: "object" } })).toBeNull();
    expect(catalogHint(null)).toBeNull();
  });
});
