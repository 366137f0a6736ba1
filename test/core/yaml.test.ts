import { describe, expect, test } from "bun:test";
import { symlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { MAX_POLICY_FILE_BYTES, readPolicyFile } from "../../src/core/config/read-file.ts";
import { MAX_VALUES, parseYaml } from "../../src/core/config/yaml.ts";
import { tempDir } from "../support/harness.ts";

/** Nested aliases: each level a list of `fan` aliases to the level below ("billion laughs"). */
function aliasBomb(levels: number, fan: number): string {
  let text = `a0: &a0 [${Array(fan).fill('"lol"').join(", ")}]\n`;
  for (let i = 1; i <= levels; i += 1) text += `a${i}: &a${i} [${Array(fan).fill(`*a${i - 1}`).join(", ")}]\n`;
  return text;
}

describe("YAML parsing", () => {
  test("scalars resolve as YAML 1.2 core, as Bun.YAML.parse resolved them", () => {
    const text = "a: yes\nb: on\nc: True\nd: ~\ne: 0o17\nf: 0x1f\ng: 1e3\nh: 10m\ni: '5'\nj: 1_000\nk: 2026-01-01\nl: |\n  two\n  lines\n";
    expect(parseYaml(text)).toEqual({ ok: true, value: Bun.YAML.parse(text) });
    // A %YAML 1.1 directive does not bring back 1.1's booleans and octals.
    expect(parseYaml("%YAML 1.1\n---\na: yes\nb: 0777\n")).toEqual({ ok: true, value: { a: "yes", b: 777 } });
  });

  test("anchors, aliases and << merge keys work within the limits", () => {
    const text = "base: &base { mode: allowlist, tools: [a, b] }\ngh: *base\ngl:\n  <<: *base\n  tools: [c]\n";
    expect(parseYaml(text)).toEqual({ ok: true, value: Bun.YAML.parse(text) });
  });

  test("an alias bomb is refused before it is expanded, in milliseconds", () => {
    const started = performance.now();
    expect(parseYaml(aliasBomb(9, 10))).toMatchObject({ ok: false, message: "aliases (*name) are followed more than 100 times; write the values out instead" });
    expect(performance.now() - started).toBeLessThan(1_000);
  });

  test("a wide alias under the alias count still cannot expand past the value cap", () => {
    const big = `big: &big [${Array(5_000).fill("x").join(", ")}]\n`;
    const uses = `copies: [${Array(60).fill("*big").join(", ")}]\n`;
    expect(parseYaml(big + uses)).toMatchObject({ ok: false, message: `more than ${MAX_VALUES} values once aliases are followed` });
  });

  test("an alias inside the value it names is refused, not followed forever", () => {
    expect(parseYaml("a: &a [1, *a]\n")).toMatchObject({ ok: false, message: "an alias refers to a value that contains it" });
  });

  test("duplicate keys (Bun.YAML kept the last), unknown tags, typed values and several documents are errors with their line", () => {
    expect(parseYaml("schema: 1\nschema: 2\n")).toMatchObject({ ok: false, message: expect.stringMatching(/^line 2, column 1: Map keys must be unique/) });
    expect(parseYaml("a: !custom x\n")).toMatchObject({ ok: false, message: expect.stringContaining("Unresolved tag") });
    expect(parseYaml("a: !!set { x }\n")).toMatchObject({ ok: false, message: expect.stringContaining("a !!set") });
    expect(parseYaml("a: 1\n---\nb: 2\n")).toMatchObject({ ok: false, message: expect.stringMatching(/^line 2, column 1: /) });
  });
});

describe("reading a policy file", () => {
  test("at most 1 MiB, regular files only, UTF-8 only", () => {
    using dir = tempDir();
    const big = join(dir.path, "big.yaml");
    writeFileSync(big, `# ${"x".repeat(MAX_POLICY_FILE_BYTES)}\n`);
    expect(() => readPolicyFile(big)).toThrow(`${big}: the policy file is larger than 1 MiB, the most ThoughtGate reads`);
    const zero = join(dir.path, "zero.yaml");
    symlinkSync("/dev/zero", zero);
    expect(() => readPolicyFile(zero)).toThrow(`${zero}: the policy file is not a regular file`);
    expect(() => readPolicyFile(dir.path)).toThrow("is not a regular file");
    const latin1 = join(dir.path, "latin1.yaml");
    writeFileSync(latin1, Buffer.from([0x61, 0x3a, 0x20, 0xe9, 0x0a]));
    expect(() => readPolicyFile(latin1)).toThrow("is not valid UTF-8");
    const ok = join(dir.path, "ok.yaml");
    writeFileSync(ok, "schema: 1\n");
    expect(readPolicyFile(ok)).toBe("schema: 1\n");
  });
});
