import { describe, expect, test } from "bun:test";
import * as v from "valibot";
import { configSchema } from "../../src/core/config/schema.ts";
import { closest, editDistance } from "../../src/core/suggest.ts";

describe("closest: the word a person most likely meant", () => {
  test.each([
    // [typed, candidates, suggested]
    ["approv", ["wrap", "demo", "approve", "deny", "tasks"], "approve"],
    ["mach", ["id", "match", "method", "source", "action"], "match"],
    ["defualts", ["defaults", "rules"], "defaults"],
    ["readOnly", ["readOnlyHint", "destructiveHint", "idempotentHint", "openWorldHint"], "readOnlyHint"],
    ["ReadOnlyHint", ["readOnlyHint", "destructiveHint"], "readOnlyHint"],
    ["--jsn", ["--json", "--all"], "--json"],
    ["--dryrun", ["--dry-run", "--no-restore"], "--dry-run"],
    ["policy-id", ["policy_id", "approval"], "policy_id"],
    ["claude", ["claude-desktop", "claude-code", "cursor"], "claude-code"],
    ["prod", ["production", "development"], "production"],
    ["allow", ["all", "allowlist", "blocklist"], "allowlist"],
    ["matches", ["id", "match", "method"], "match"],
  ] as const)("%p among %p → %p", (typed, candidates, suggested) => {
    expect(closest(typed, candidates)).toBe(suggested);
  });

  test.each([
    ["xyzzy", ["wrap", "demo", "approve"]],
    ["-p", ["--profile", "--events"]],
    ["match", ["id", "match"]],
    ["", ["id"]],
  ] as const)("%p among %p → nothing", (typed, candidates) => {
    expect(closest(typed, candidates)).toBeNull();
  });

  test("synonyms map words spelled nothing alike, only to a candidate that exists", () => {
    const synonyms = { allow: "forward", block: "deny" };
    expect(closest("allow", ["forward", "deny"], synonyms)).toBe("forward");
    expect(closest("Block", ["forward", "deny"], synonyms)).toBe("deny");
    expect(closest("allow", ["deny"], synonyms)).toBeNull();
  });

  test("edit distance counts a swap of neighbours as one edit", () => {
    expect([editDistance("defualts", "defaults"), editDistance("mach", "match"), editDistance("abc", "abc"), editDistance("", "abc")]).toEqual([1, 1, 0, 3]);
  });
});

/** Every mapping of the policy schema, with the path a person would write it at. */
function mappings(schema: v.GenericSchema, path: string, out: Array<{ path: string; schema: v.GenericSchema; keys: string[] }>): typeof out {
  const node = schema as v.GenericSchema & { entries?: Record<string, v.GenericSchema>; wrapped?: v.GenericSchema; item?: v.GenericSchema; value?: v.GenericSchema; options?: v.GenericSchema[] };
  if (node.type === "strict_object" && node.entries) {
    out.push({ path, schema, keys: Object.keys(node.entries) });
    for (const [key, entry] of Object.entries(node.entries)) mappings(entry, path ? `${path}.${key}` : key, out);
  }
  if (node.wrapped) mappings(node.wrapped, path, out);
  if (node.item) mappings(node.item, `${path}[0]`, out);
  if (node.value && node.type === "record") mappings(node.value, `${path}.<name>`, out);
  for (const option of node.options ?? []) mappings(option, path, out);
  return out;
}

test("every key of every mapping in the policy schema is suggested for a typo of it: the suggestions come from the schema", () => {
  const all = mappings(configSchema, "", []);
  expect(all.length).toBeGreaterThan(15);
  const missed: string[] = [];
  let checked = 0;
  for (const { path, schema, keys } of all) {
    for (const key of keys.filter((k) => k.length >= 4)) {
      // The last letter dropped: what a hurried typist sends.
      const typo = key.slice(0, -1);
      if (keys.includes(typo)) continue;
      const result = v.safeParse(schema, { [typo]: true });
      const issue = result.issues?.find((i) => i.message.startsWith(`unknown key "${typo}"`));
      checked += 1;
      if (!issue?.message.includes(`(did you mean "${key}"?)`)) missed.push(`${path || "(root)"}: ${typo} → ${issue?.message ?? "no unknown-key issue"}`);
    }
  }
  expect(checked).toBeGreaterThan(40);
  expect(missed).toEqual([]);
});
