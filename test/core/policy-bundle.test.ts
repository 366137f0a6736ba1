/**
 * The organisation's policy bundle (src/core/policy-bundle.ts): what is signed is exactly what is
 * verified, and nothing else verifies.
 */
import { describe, expect, test } from "bun:test";
import { generateKeyPair, importPublicKey, parseBundle, signBundle, verifyBundle } from "../../src/core/policy-bundle.ts";

const FILES = { "thoughtgate.yaml": "schema: 1\n", "policies/main.cedar": "permit(principal, action, resource);\n" };

describe("policy bundles", () => {
  test("a signed bundle verifies with its key, and with no other", async () => {
    const mine = await generateKeyPair();
    const other = await generateKeyPair();
    const bundle = await signBundle(FILES, 7, mine.privatePem, new Date("2026-11-28T00:00:00Z"));
    expect(bundle).toMatchObject({ format: "thoughtgate-policy-bundle", version: 7, issued_at: "2026-11-28T00:00:00.000Z", files: FILES });
    expect(await verifyBundle(bundle, await importPublicKey(mine.publicKey))).toBe(true);
    expect(await verifyBundle(bundle, await importPublicKey(other.publicKey))).toBe(false);
  });

  test("any change to what was signed fails verification: a file, the version, the date", async () => {
    const { privatePem, publicKey } = await generateKeyPair();
    const key = await importPublicKey(publicKey);
    const bundle = await signBundle(FILES, 7, privatePem);
    expect(await verifyBundle({ ...bundle, files: { ...FILES, "thoughtgate.yaml": "schema: 1\n# changed\n" } }, key)).toBe(false);
    expect(await verifyBundle({ ...bundle, files: { ...FILES, "extra.cedar": "" } }, key)).toBe(false);
    expect(await verifyBundle({ ...bundle, version: 8 }, key)).toBe(false);
    expect(await verifyBundle({ ...bundle, issued_at: "2030-01-01T00:00:00.000Z" }, key)).toBe(false);
  });

  test("what is not a bundle is one line saying why; file names stay inside the bundle", () => {
    expect(() => parseBundle("{")).toThrow("the policy bundle is not JSON");
    const base = { format: "thoughtgate-policy-bundle", version: 1, issued_at: "2026-11-28T00:00:00.000Z", signature: "AAAA" };
    expect(() => parseBundle(JSON.stringify({ ...base, files: { "x.yaml": "" } }))).toThrow("a bundle holds thoughtgate.yaml");
    expect(() => parseBundle(JSON.stringify({ ...base, files: { "thoughtgate.yaml": "", "../../.ssh/x": "" } }))).toThrow("a file name in a bundle is a relative path");
    expect(() => parseBundle(JSON.stringify({ ...base, files: { "thoughtgate.yaml": "", "/etc/x": "" } }))).toThrow("a file name in a bundle is a relative path");
    expect(() => parseBundle(JSON.stringify({ ...base, version: 0, files: { "thoughtgate.yaml": "" } }))).toThrow("version");
  });

  test("a public key that is not an Ed25519 one is refused in words", async () => {
    await expect(importPublicKey("ssh-ed25519 AAAA")).rejects.toThrow("expected an Ed25519 public key as `ed25519:` and 44 base64 characters");
  });
});
