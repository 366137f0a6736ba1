import type { ToolAnnotations } from "../../core/mcp-schema.ts";
import catalog from "./annotation-catalog.json" with { type: "json" };
import { definitionDigest } from "./definition.ts";

/**
 * ThoughtGate's annotation catalog (docs/governance.md, "Tools that declare nothing"): what the
 * tools of widely used MCP servers that declare no annotations do (server-github's 14 reads and 12
 * writes, server-slack, server-brave-search, server-google-maps), shipped in the binary.
 *
 * A hint applies only to a tool that declares no `annotations` at all, and only when the whole
 * definition it serves has the digest the catalog recorded (definition.ts: name, description,
 * input schema, everything): another server posing under a known name, or a new version of the
 * server whose tool changed in any way, gets no hint and is decided as any tool that declares
 * nothing (asked), and its changed definition is pinned as always. The catalog is written by
 * test/fixtures/definitions/record-catalog.ts from the real servers' definitions.
 */
export type CatalogHint = { annotations: ToolAnnotations; source: string };

/** The JSON's shape. Not parsed with valibot: it is ours, checked by its test, and a shim without a policy file loads no valibot. */
type Catalog = { servers: Array<{ package: string; version: string; tools: Record<string, { digest: string; annotations: ToolAnnotations }> }> };

let byDigest: Map<string, CatalogHint> | null = null;

function hints(): Map<string, CatalogHint> {
  if (byDigest) return byDigest;
  byDigest = new Map();
  for (const server of (catalog as unknown as Catalog).servers) {
    const source = `ThoughtGate's annotation catalog (${server.package} ${server.version})`;
    for (const entry of Object.values(server.tools)) byDigest.set(entry.digest, { annotations: Object.freeze({ ...entry.annotations }), source });
  }
  return byDigest;
}

/** The catalog's hint for a served tool definition, or null (it declares annotations, or the catalog does not know it as it is). */
export function catalogHint(definition: unknown): CatalogHint | null {
  if (definition === null || typeof definition !== "object" || Array.isArray(definition)) return null;
  if (Object.hasOwn(definition, "annotations")) return null;
  return hints().get(definitionDigest(definition)) ?? null;
}
