import { canonicalJson, sha256Hex } from "../../core/canonical-json.ts";

/**
 * What a server defines and a person trusts: its tools, prompts and resource templates, each as the
 * whole object the server sends on the wire (name, title, description, input and output schemas,
 * annotations, `_meta`, icons, and anything else). Pinning only the fields a client shows catches
 * few rug pulls (a changed `_meta`, an added enum value, a default); the whole object catches them all.
 */
export type DefinitionKind = "tool" | "prompt" | "resource_template";

/** The list methods that carry definitions, the key of their items, and what a governed request names. */
export const DEFINITION_LISTS: Readonly<Record<string, { kind: DefinitionKind; items: string }>> = {
  "tools/list": { kind: "tool", items: "tools" },
  "prompts/list": { kind: "prompt", items: "prompts" },
  "resources/templates/list": { kind: "resource_template", items: "resourceTemplates" },
};

export const KIND_WORDS: Readonly<Record<DefinitionKind, string>> = { tool: "tool", prompt: "prompt", resource_template: "resource template" };

/** An item of a list: its name (a template without one: its URI template), or null when it has neither. */
export function definitionName(kind: DefinitionKind, item: unknown): string | null {
  if (item === null || typeof item !== "object" || Array.isArray(item)) return null;
  const { name, uriTemplate } = item as { name?: unknown; uriTemplate?: unknown };
  if (typeof name === "string") return name;
  return kind === "resource_template" && typeof uriTemplate === "string" ? uriTemplate : null;
}

/** SHA-256 of the canonical JSON of the whole definition: any change to any field changes it. */
export function definitionDigest(definition: unknown): string {
  return sha256Hex(canonicalJson(definition));
}

/** The key of a definition in a pin file: `tool:read_file`. */
export function definitionKey(kind: DefinitionKind, name: string): string {
  return `${kind}:${name}`;
}

/**
 * The top-level fields that differ between two definitions (`description`, `inputSchema`,
 * `annotations`, …), in order: what a refusal and a prompt name as "what changed".
 */
export function changedFields(before: unknown, after: unknown): string[] {
  const a = asObject(before);
  const b = asObject(after);
  const keys = [...new Set([...Object.keys(a), ...Object.keys(b)])].sort();
  return keys.filter((key) => canonicalJson(a[key]) !== canonicalJson(b[key]));
}

/**
 * A unified diff of the pinned and the served definition, each pretty-printed with sorted keys, so
 * the lines that changed are the fields that changed. Invisible characters are left as JSON writes
 * them (the caller's renderer escapes what a person must see).
 */
export function definitionDiff(label: string, before: unknown, after: unknown): string {
  // Loaded on the first changed definition, not with every shim: most shims never show a diff.
  const { createTwoFilesPatch } = require("diff") as typeof import("diff");
  const patch = createTwoFilesPatch(`${label} (pinned)`, `${label} (served now)`, pretty(before), pretty(after), "", "", { context: 3 });
  // Drop the "Index:" and "===" lines createTwoFilesPatch starts with: the labels say it all.
  return patch
    .split("\n")
    .filter((line) => !line.startsWith("Index:") && !/^=+$/.test(line))
    .join("\n")
    .trimEnd();
}

/** Pretty JSON with keys sorted at every level (the canonical order), one field per line. */
export function pretty(value: unknown): string {
  return `${JSON.stringify(JSON.parse(canonicalJson(value ?? null)), null, 2)}\n`;
}

function asObject(value: unknown): Record<string, unknown> {
  return value !== null && typeof value === "object" && !Array.isArray(value) ? (value as Record<string, unknown>) : { "(value)": value };
}
