import { expect, test } from "bun:test";
import { showInvisible, showInvisibleInJson } from "../../src/core/visible-text.ts";

const TRICKS = "a\u202Eb\u2066c\u2069d\u200Be\u200Ff\u2060g\uFEFFh\u{E0041}i\u001B[2Jj";

test("bidi controls, zero-width, tag and control characters become visible escapes", () => {
  expect(showInvisible(TRICKS)).toBe("a\\u202eb\\u2066c\\u2069d\\u200be\\u200ff\\u2060g\\ufeffh\\u{e0041}i\\u001b[2Jj");
  expect(showInvisible("plain text, ünïcödé and 日本語")).toBe("plain text, ünïcödé and 日本語");
});

test("in JSON text the escapes are JSON's: the value is unchanged, the layout's newlines stay", () => {
  const json = JSON.stringify({ name: TRICKS }, null, 2);
  const shown = showInvisibleInJson(json);
  expect(JSON.parse(shown)).toEqual({ name: TRICKS });
  expect(shown).toContain("\\u202e");
  expect(shown).toContain("\\udb40\\udc41");
  expect(shown).toStartWith("{\n  ");
  expect(shown).not.toMatch(/[\u202e\u200b\ufeff]|\u{e0041}/u);
});
