/**
 * Where the organisation's settings come from (src/governance/engine/organisation.ts): the machine's
 * file first, which no variable overrides or turns off, then the environment, then the user's
 * policy file; a machine file that is not trustworthy or does not parse is refused in one line.
 */
import { describe, expect, test } from "bun:test";
import { chmodSync, mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { organisationSettings } from "../../../src/governance/engine/organisation.ts";
import { tempDir } from "../../support/harness.ts";

const KEY = `ed25519:${"A".repeat(43)}=`;

function machine(text: string): { dir: { path: string; [Symbol.dispose](): void }; file: string } {
  const dir = tempDir();
  mkdirSync(join(dir.path, "etc"), { mode: 0o755 });
  const file = join(dir.path, "etc", "organisation.yaml");
  writeFileSync(file, text, { mode: 0o644 });
  return { dir, file };
}

describe("organisationSettings", () => {
  test("the machine's file wins over the environment, which cannot turn it off", () => {
    const { dir, file } = machine(`url: https://policy.example.com/b.json\npublic_key: "${KEY}"\nmax_stale: 1h\n`);
    using _ = dir;
    expect(organisationSettings({ THOUGHTGATE_ORG_POLICY_URL: "https://elsewhere.example/b.json" }, null, null, file)).toEqual({
      url: "https://policy.example.com/b.json",
      publicKey: KEY,
      maxStaleMs: 3_600_000,
      refreshMs: 300_000,
      from: file,
    });
  });

  test("no machine file, no variable, no policy file: no organisation policy", () => {
    using dir = tempDir();
    const absent = join(dir.path, "organisation.yaml");
    expect(organisationSettings({}, null, null, absent)).toBeNull();
  });

  test("a machine file others can write, or one that does not hold the settings: refused in one line, calls fail closed", () => {
    const { dir, file } = machine(`url: https://policy.example.com/b.json\npublic_key: "${KEY}"\n`);
    using _ = dir;
    chmodSync(file, 0o666);
    expect(() => organisationSettings({}, null, null, file)).toThrow(`the organisation policy settings ${file} is not trusted: ${file} can be written by others than its owner (mode 666); until it is fixed every call is refused`);
    chmodSync(file, 0o644);
    writeFileSync(file, "url: http://policy.example.com/b.json\n");
    expect(() => organisationSettings({}, null, null, file)).toThrow(`the organisation policy settings ${file} is invalid: url: expected an https:// URL without user:password@`);
  });
});
