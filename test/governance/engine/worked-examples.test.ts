/**
 * The worked examples of docs/governance.md ("Rules that see arguments and the project"), read out
 * of the page as written: each example's policy (and Cedar files), and every row of its table held
 * to what the engine decides. The tools' annotations are the real servers' (benign.json), with
 * ThoughtGate's catalog hints where a server declares none, as a shim sees them.
 */
import { describe, expect, test } from "bun:test";
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { parseConfig } from "../../../src/core/config/load.ts";
import type { ToolAnnotations } from "../../../src/core/mcp-schema.ts";
import { catalogHint } from "../../../src/governance/definitions/annotation-catalog.ts";
import { GovernanceEngine, type EngineDecision } from "../../../src/governance/engine/engine.ts";
import { tempDir } from "../../support/harness.ts";

const ROOT = join(import.meta.dir, "../../..");
const PAGE = readFileSync(join(ROOT, "docs/governance.md"), "utf8");
const BENIGN = JSON.parse(readFileSync(join(ROOT, "test/fixtures/definitions/benign.json"), "utf8")) as {
  servers: Record<string, { tools: Array<{ name: string; annotations?: ToolAnnotations }> }>;
};

type Row = { session: string; server: string; tool: string; args: unknown; gets: string; by: string };
type Example = { title: string; blocks: Map<string, string>; rows: Row[] };

function examples(): Example[] {
  const sections = PAGE.split(/^### /m).filter((section) => section.startsWith("Worked example:"));
  return sections.map((section) => {
    const body = section.split(/^## /m)[0] as string;
    const blocks = new Map<string, string>();
    for (const match of body.matchAll(/^```(\w+)\n([\s\S]*?)^```$/gm)) blocks.set(match[1] as string, match[2] as string);
    const rows = body
      .split("\n")
      .filter((line) => line.startsWith("| /"))
      .map((line) => {
        const cells = line.split("|").slice(1, -1).map((cell) => cell.trim());
        const [session, server, tool, args, gets, by] = cells as [string, string, string, string, string, string];
        return { session, server, tool, args: JSON.parse(args.replace(/^`|`$/g, "")), gets, by };
      });
    return { title: (section.split("\n")[0] as string).trim(), blocks, rows };
  });
}

/** The tool's annotations as the shim passes them to the engine: the server's, else the catalog's hint. */
function annotationsOf(server: string, tool: string): { annotations?: ToolAnnotations; annotationSource?: string } {
  const definition = BENIGN.servers[server]?.tools.find((t) => t.name === tool);
  if (!definition) throw new Error(`the page names ${server}/${tool}, which the real server does not serve`);
  if (definition.annotations) return { annotations: definition.annotations };
  const hint = catalogHint(definition);
  return hint ? { annotations: hint.annotations, annotationSource: hint.source } : {};
}

const GETS: Record<EngineDecision["kind"], string> = { forward: "forwarded", approve: "asked", deny: "denied" };

function decidedBy(decision: EngineDecision): string {
  if (decision.kind === "deny") return (decision.block.gate === "cedar" ? decision.block.policyId : decision.block.ruleId) ?? "";
  return (decision.kind === "forward" && decision.gate === "cedar" ? decision.policyId : decision.ruleId) ?? "";
}

describe("docs/governance.md's worked examples, as written", () => {
  const found = examples();

  test("the page has its three examples, each with a policy and a table", () => {
    expect(found.map((e) => [e.title, e.blocks.has("yaml"), e.rows.length > 0])).toEqual([
      ["Worked example: a user policy for everyday work", true, true],
      ["Worked example: one project's writes, kept to that project", true, true],
      ["Worked example: the same line in Cedar", true, true],
    ]);
  });

  for (const example of found) {
    test(example.title, async () => {
      using dir = tempDir();
      const parsed = parseConfig(example.blocks.get("yaml") as string, {});
      if (!parsed.ok) throw new Error(parsed.problems.map((p) => `${p.path}: ${p.message}`).join("\n"));
      const config = parsed.config;
      if (config.cedar) {
        const policies = config.cedar.policies.map((file, i) => {
          writeFileSync(join(dir.path, file), i === 0 ? (example.blocks.get("cedar") as string) : "");
          return join(dir.path, file);
        });
        const schema = config.cedar.schema ? join(dir.path, config.cedar.schema) : undefined;
        if (schema) writeFileSync(schema, example.blocks.get("cedarschema") as string);
        config.cedar = { policies, ...(schema ? { schema } : {}) };
      }
      const engine = await GovernanceEngine.fromConfig(config, "docs/governance.md");
      const decided = example.rows.map((row) => {
        const decision = engine.evaluate({
          serverId: row.server,
          method: "tools/call",
          name: row.tool,
          arguments: row.args,
          place: { project: row.session, cwd: row.session, home: "/home/ada" },
          ...annotationsOf(row.server, row.tool),
        });
        return { ...row, gets: GETS[decision.kind], by: decidedBy(decision) };
      });
      expect(decided).toEqual(example.rows);
    });
  }
});
