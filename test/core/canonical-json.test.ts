/** The hashes a call's record and a person's approval are bound to (src/core/canonical-json.ts). */
import { expect, test } from "bun:test";
import { createHash } from "node:crypto";
import { argsHash, callDigest, canonicalJson } from "../../src/core/canonical-json.ts";

test("the same arguments in any key order hash the same, as SHA-256 of their canonical JSON; other arguments do not", () => {
  const canonical = canonicalJson({ b: [1, { d: null, c: "x" }], a: "é", skipped: undefined });
  expect(canonical).toBe('{"a":"é","b":[1,{"c":"x","d":null}]}');
  expect(argsHash({ a: "é", b: [1, { c: "x", d: null }] })).toBe(createHash("sha256").update(canonical).digest("hex"));
  expect(argsHash({ b: [1, { d: null, c: "x" }], a: "é" })).toBe(argsHash({ a: "é", b: [1, { c: "x", d: null }] }));
  expect(argsHash({ a: "e" })).not.toBe(argsHash({ a: "é" }));
  expect(argsHash(undefined)).toBe(createHash("sha256").update("{}").digest("hex"));
  expect(callDigest("srv", "tools/call", "echo", { a: 1 })).toBe(createHash("sha256").update('["srv","tools/call","echo",{"a":1}]').digest("hex"));
});
