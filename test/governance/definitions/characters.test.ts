/**
 * Name skeletons from Unicode's confusables (UTS #39 data, scripts/confusables.ts): names that look
 * alike share one, names that only share letters do not, and a character that passes for an ASCII
 * one is found wherever it comes from.
 */
import { describe, expect, test } from "bun:test";
import { lookalikeNameCharacter, nameSkeleton } from "../../../src/governance/definitions/characters.ts";
import { CONFUSABLES_VERSION } from "../../../src/governance/definitions/confusables-data.ts";

describe("look-alike names share a skeleton", () => {
  test.each([
    ["create_issue", "create_\u0131ssue", "a dotless ı (Latin, U+0131)"],
    ["read_file", "re\u0430d_file", "a Cyrillic а"],
    ["send_email", "s\u0435nd_\u0435mail", "Cyrillic е twice"],
    ["delete_branch", "de1ete_branch", "the digit 1 for l"],
    ["modify", "rnodify", "rn for m"],
    ["read_file", "\uff52\uff45\uff41\uff44_file", "fullwidth letters"],
    ["read_file", "\u{1d42b}\u{1d41e}\u{1d41a}\u{1d41d}_file", "mathematical bold letters"],
    ["kubectl_apply", "kubect\u04cf_apply", "a Cyrillic palochka for l"],
    ["read_file", "Read-File", "case and separators"],
  ])("%s and %s (%s)", (name, lookalike) => {
    expect(nameSkeleton(lookalike)).toBe(nameSkeleton(name));
  });

  test.each([
    ["list_files", "lint_files"],
    ["cafe", "caf\u00e9"],
    ["read_file", "read_files"],
  ])("%s and %s are told apart", (a, b) => {
    expect(nameSkeleton(a)).not.toBe(nameSkeleton(b));
  });

  test("the table is Unicode's, at a version that has the dotless ı", () => {
    expect(Number.parseInt(CONFUSABLES_VERSION, 10)).toBeGreaterThanOrEqual(15);
  });
});

describe("a character that passes for ASCII in a name", () => {
  test.each([
    ["create_\u0131ssue", 7, "\u0131"],
    ["re\u0430d_file", 2, "\u0430"],
    ["\uff52ead", 0, "\uff52"],
    ["\u{1d42b}ead", 0, "\u{1d42b}"],
  ])("%s: found at %d", (name, index, char) => {
    expect(lookalikeNameCharacter(name)).toEqual({ index, char });
  });

  test.each(["create_issue", "café_menu", "\u0436_tool", "日本語"])("%s: none (ASCII, or letters that pass for nothing ASCII)", (name) => {
    expect(lookalikeNameCharacter(name)).toBeNull();
  });
});
