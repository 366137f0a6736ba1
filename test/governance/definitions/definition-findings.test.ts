/**
 * The poisoning checks against two corpora: published tool-poisoning examples rewritten in our own
 * words (test/fixtures/definitions/poisoned.json), each with the findings it must raise; and every
 * definition the real MCP servers in devDependencies serve (benign.json), which must raise none,
 * each server also checked against all the others' tools (shadowing).
 */
import { describe, expect, test } from "bun:test";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { definitionDigest, definitionName, type DefinitionKind } from "../../../src/governance/definitions/definition.ts";
import { FindingContext, findingsOf, reaches, worstSeverity, type OtherDefinition } from "../../../src/governance/definitions/findings.ts";

const DIR = join(import.meta.dir, "../../fixtures/definitions");
type Poisoned = { id: string; kind: DefinitionKind; definition: Record<string, unknown>; others?: OtherDefinition[]; peers?: number[]; expect: string[] };
const poisoned = (JSON.parse(readFileSync(join(DIR, "poisoned.json"), "utf8")) as { definitions: Poisoned[] }).definitions;
type Lists = { tools: unknown[]; prompts: unknown[]; resourceTemplates: unknown[] };
const benign = (JSON.parse(readFileSync(join(DIR, "benign.json"), "utf8")) as { servers: Record<string, Lists> }).servers;

describe("published poisoning techniques: each raises its findings, and is hidden at the default severity", () => {
  test.each(poisoned.map((p) => [p.id, p] as const))("%s", (_id, item) => {
    const name = definitionName(item.kind, item.definition) as string;
    const context = new FindingContext(new Set([name]), item.peers ?? [], item.others ?? []);
    const findings = findingsOf(item.kind, name, item.definition, definitionDigest(item.definition), context);
    const rules = findings.map((f) => f.rule);
    for (const rule of item.expect) expect(rules).toContain(rule);
    expect(reaches(worstSeverity(findings), item.expect.every((r) => ["shadowed-name", "long-description", "zero-width", "control-characters"].includes(r)) ? "medium" : "high")).toBe(true);
    // Every finding says where: a path and a span inside the string there.
    for (const finding of findings) {
      expect(finding.path.length).toBeGreaterThan(0);
      expect(finding.end).toBeGreaterThanOrEqual(finding.start);
    }
  });

  test("the offending span is exact: tag characters are located and shown as escapes", () => {
    const item = poisoned.find((p) => p.id === "tag-smuggling") as Poisoned;
    const description = item.definition.description as string;
    const [finding] = findingsOf("tool", "get_time", item.definition, "d", new FindingContext(new Set(), [])).filter((f) => f.rule === "tag-characters");
    expect(finding?.path).toBe("description");
    expect(finding?.start).toBe("Returns the current time.".length);
    expect(finding?.end).toBe(description.length);
    expect(finding?.excerpt).toContain("\\u{e0041}");
  });
});

describe("real definitions from the servers in devDependencies raise no finding", () => {
  const servers = Object.entries(benign);
  const allTools: OtherDefinition[] = servers.flatMap(([serverId, lists]) =>
    lists.tools.map((tool) => ({ serverId, name: definitionName("tool", tool) as string, digest: definitionDigest(tool) })),
  );
  test.each(servers)("%s", (serverId, lists) => {
    expect(lists.tools.length).toBeGreaterThan(0);
    const kinds: Array<[DefinitionKind, unknown[]]> = [["tool", lists.tools], ["prompt", lists.prompts], ["resource_template", lists.resourceTemplates]];
    const found: string[] = [];
    for (const [kind, items] of kinds) {
      const names = new Set(items.map((item) => definitionName(kind, item) as string));
      const lengths = items.map((item) => String((item as { description?: string }).description ?? "").length);
      const context = new FindingContext(names, lengths, kind === "tool" ? allTools.filter((t) => t.serverId !== serverId) : []);
      for (const item of items) {
        const name = definitionName(kind, item) as string;
        for (const f of findingsOf(kind, name, item, definitionDigest(item), context)) found.push(`${kind} ${name}: ${f.rule} at ${f.path}: ${f.excerpt}`);
      }
    }
    expect(found).toEqual([]);
  });
});
