import { describe, expect, test } from "bun:test";
import { checkJsonShape, MAX_NESTING, type ShapeProblem } from "../../src/stdio/json-shape.ts";

const obj = (n: number, extra = "") => `{${Array.from({ length: n }, (_, i) => `"k${i}":${i}`).join(",")}${extra}}`;

describe("checkJsonShape", () => {
  test("the same name in sibling and nested objects is fine; twice in one object is not", () => {
    expect(checkJsonShape('{"a":{"a":1},"b":[{"a":1},{"a":2}],"c":{"b":{"a":"a"}}}')).toBeNull();
    expect(checkJsonShape('{"a":1,"b":{"x":1,"y":2,"x":3}}')).toEqual({ code: "DuplicateKey", detail: 'the name "x" appears twice in one object' });
    expect(checkJsonShape('[{"a":1},{"a":1,"a":2}]')?.code).toBe("DuplicateKey");
  });

  test("names are compared after their escapes are decoded; string values that look like names do not count", () => {
    expect(checkJsonShape('{"name":"x","n\\u0061me":"y"}')?.code).toBe("DuplicateKey");
    expect(checkJsonShape('{"a":"\\"b\\":1,\\"a\\"","b":"a"}')).toBeNull();
    expect(checkJsonShape('{"a\\\\":1,"a":2}')).toBeNull();
  });

  test("names compared in place: same length or same prefix is not the same name; every object starts afresh", () => {
    expect(checkJsonShape('{"ab":1,"ba":2,"abc":3,"a":4}')).toBeNull();
    expect(checkJsonShape('{"ab":1,"ba":2,"abc":3,"ba":4}')?.code).toBe("DuplicateKey");
    expect(checkJsonShape('[{"a":1,"b":2},{"a":1,"b":2},{"c":{"a":1},"a":{"c":2}}]')).toBeNull();
    expect(checkJsonShape('{"x":[{"a":1}],"y":{"b":{"a":1}},"x":0}')?.code).toBe("DuplicateKey");
    // A value with escaped quotes before a later name, and a name with an escaped quote in it.
    expect(checkJsonShape('{"t":"{\\"a\\":1}","a":1}')).toBeNull();
    expect(checkJsonShape('{"q\\"":1,"q\\u0022":2}')?.code).toBe("DuplicateKey");
    // The same past the first characters of a long name.
    const long = "n".repeat(40);
    expect(checkJsonShape(`{"${long}b":1,"${long}\\u0062":2}`)?.code).toBe("DuplicateKey");
    expect(checkJsonShape(`{"${long}b":1,"${long}\\u0063":2}`)).toBeNull();
  });

  test("large objects (past the in-place comparison) are checked too", () => {
    expect(checkJsonShape(obj(40))).toBeNull();
    expect(checkJsonShape(obj(40, ',"k25":0'))?.code).toBe("DuplicateKey");
    expect(checkJsonShape(`{"outer":${obj(30)},"k0":1,"k1":2}`)).toBeNull();
  });

  test("where an object turns large, every name is in its lookup table: a name at any position, the 17th included, found again later", () => {
    // The 17th name is the one that switches the check from comparing in place to the table; a
    // table built without it lets that name through twice. Each position, on both paths (the
    // in-place scan, and the decoding one a limit past MAX_NESTING takes), plain and escaped.
    for (let position = 0; position < 24; position++) {
      for (const again of [`"k${position}"`, `"\u006b${position}"`]) {
        const text = obj(24, `,${again}:0`);
        const found: ShapeProblem = { code: "DuplicateKey", detail: `the name "k${position}" appears twice in one object` };
        expect([position, again, checkJsonShape(text)]).toEqual([position, again, found]);
        expect([position, again, checkJsonShape(text, MAX_NESTING + 1)]).toEqual([position, again, found]);
      }
    }
  });

  test(`nesting up to ${MAX_NESTING} levels is accepted, one more is not`, () => {
    expect(checkJsonShape(`${"[".repeat(MAX_NESTING)}${"]".repeat(MAX_NESTING)}`)).toBeNull();
    expect(checkJsonShape(`${"[".repeat(MAX_NESTING + 1)}${"]".repeat(MAX_NESTING + 1)}`)?.code).toBe("NestingTooDeep");
    expect(checkJsonShape(`${'{"a":'.repeat(MAX_NESTING + 1)}1${"}".repeat(MAX_NESTING + 1)}`)?.code).toBe("NestingTooDeep");
  });
});

/**
 * The scan against a plain recursive parse of the same text, on generated messages: the first
 * problem in the text (a name twice in one object, after decoding; or a container opened deeper
 * than the limit) must be the same, on the fast path (names compared in place) and on the decoding
 * path (a limit past MAX_NESTING takes it for every text).
 */
function reference(text: string, maxNesting: number): ReturnType<typeof checkJsonShape> {
  let i = 0;
  const skipSpace = () => {
    while (i < text.length && " \t\n\r".includes(text[i] as string)) i += 1;
  };
  const string = (): string => {
    const start = i;
    i += 1;
    while (text[i] !== '"') i += text[i] === "\\" ? 2 : 1;
    i += 1;
    return JSON.parse(text.slice(start, i)) as string;
  };
  const value = (depth: number): ReturnType<typeof checkJsonShape> => {
    skipSpace();
    const c = text[i];
    if (c === '"') {
      string();
      return null;
    }
    if (c !== "{" && c !== "[") {
      while (i < text.length && !",]} \t\n\r".includes(text[i] as string)) i += 1;
      return null;
    }
    if (depth >= maxNesting) return { code: "NestingTooDeep", detail: `nested more than ${maxNesting} levels deep` };
    i += 1;
    const seen = new Set<string>();
    for (;;) {
      skipSpace();
      if (text[i] === "}" || text[i] === "]") {
        i += 1;
        return null;
      }
      if (text[i] === ",") i += 1;
      skipSpace();
      if (c === "{") {
        const name = string();
        if (seen.has(name)) return { code: "DuplicateKey", detail: `the name ${JSON.stringify(name)} appears twice in one object` };
        seen.add(name);
        skipSpace();
        i += 1; // the colon
      }
      const problem = value(depth + 1);
      if (problem) return problem;
    }
  };
  return value(0);
}

/** A small seeded generator (mulberry32): the same messages on every run. */
function random(seed: number): (n: number) => number {
  let state = seed;
  return (n) => {
    state = (state + 0x6d2b79f5) | 0;
    let t = Math.imul(state ^ (state >>> 15), 1 | state);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return Math.floor((((t ^ (t >>> 14)) >>> 0) / 4294967296) * n);
  };
}

/** A name as it may be written: plain, with an escape that decodes to a plain one, long (past the stepped-through prefix). */
function writtenName(pick: (n: number) => number, name: string): string {
  switch (pick(8)) {
    case 0:
      return name.replace(/a/g, "\\u0061");
    case 1:
      return `${"x".repeat(40)}${name}`;
    case 2:
      return `${"x".repeat(40)}${name.replace(/b/g, "\\u0062")}`;
    case 3:
      return `${name}\\"\\\\`;
    default:
      return name;
  }
}

const VALUES = ['1', "true", "null", '"v"', '"a\\"b"', '"\\\\"', '"{\\"a\\":1}"', '"[\\"x\\",{}]"', `"${"s".repeat(50)}\\\\"`, `"${"q".repeat(45)}\\"x"`];

function generate(pick: (n: number) => number, depth: number): string {
  const space = () => [" ", "", "", "\n "][pick(4)] as string;
  if (depth > 5 || pick(4) === 0) return VALUES[pick(VALUES.length)] as string;
  if (pick(3) === 0) return `[${space()}${Array.from({ length: pick(3) }, () => generate(pick, depth + 1)).join(`,${space()}`)}]`;
  // Mostly distinct names, sometimes one again; some objects well past the in-place comparison.
  const count = pick(4) === 0 ? 15 + pick(10) : pick(6);
  const pool = ["a", "b", "ab", "ba", "abc", "n"];
  const names: string[] = [];
  for (let k = 0; k < count; k++) names.push(pick(40) === 0 && k > 0 ? (names[pick(k)] as string) : pick(3) === 0 ? (pool[pick(pool.length)] as string) + k : `k${k}`);
  // Only a few members nest further, so a message stays small.
  const members = names.map((name) => `${space()}"${writtenName(pick, name)}"${space()}:${space()}${pick(count) < 2 ? generate(pick, depth + 1) : (VALUES[pick(VALUES.length)] as string)}`);
  return `{${members.join(",")}${space()}}`;
}

describe("checkJsonShape against a plain parse, on generated messages", () => {
  test("the same verdict on both paths, for 3,000 messages and several nesting limits", () => {
    const pick = random(24);
    const seen = { DuplicateKey: 0, NestingTooDeep: 0, none: 0 };
    for (let n = 0; n < 3_000; n++) {
      const text = generate(pick, 0);
      JSON.parse(text); // what the scan is given: text JSON.parse accepted
      const limit = 1 + pick(7);
      const expected = reference(text, limit);
      seen[expected?.code ?? "none"] += 1;
      expect([text, limit, checkJsonShape(text, limit)]).toEqual([text, limit, expected]);
      expect([text, checkJsonShape(text)]).toEqual([text, reference(text, MAX_NESTING)]);
      expect([text, checkJsonShape(text, MAX_NESTING + 1)]).toEqual([text, reference(text, MAX_NESTING + 1)]);
    }
    // The generator exercises every verdict, not just the easy one.
    expect(Math.min(seen.DuplicateKey, seen.NestingTooDeep, seen.none)).toBeGreaterThan(200);
  });

  test("many open objects, each with names, past the scratch space: names of outer objects are still compared after the inner ones close", () => {
    const open = Array.from({ length: 40 }, (_, d) => `{${Array.from({ length: 12 }, (_, k) => `"d${d}k${k}":${k}`).join(",")},"in":`).join("");
    const close = (extra: string) => Array.from({ length: 40 }, (_, d) => `${d === 0 ? extra : ""}}`).join("");
    const unique = `${open}1${close("")}`;
    expect(checkJsonShape(unique)).toBeNull();
    // The innermost object's own name again, and then the outermost's once every other has closed.
    expect(checkJsonShape(`${open}{"a":1,"a":2}${close("")}`)?.detail).toBe('the name "a" appears twice in one object');
    expect(checkJsonShape(`${open}1${close(',"d39k3":0')}`)?.detail).toBe('the name "d39k3" appears twice in one object');
    expect(checkJsonShape(`${open}1${close(',"d38k3":0')}`)).toBeNull();
    // The same with a limit past MAX_NESTING (the decoding path).
    expect(checkJsonShape(`${open}1${close(',"d39k3":0')}`, MAX_NESTING + 1)?.code).toBe("DuplicateKey");
  });

  test(`with a limit past ${MAX_NESTING} the decoding path counts nesting the same way`, () => {
    const limit = MAX_NESTING + 20;
    expect(checkJsonShape(`${"[".repeat(limit)}${"]".repeat(limit)}`, limit)).toBeNull();
    expect(checkJsonShape(`${"[".repeat(limit + 1)}${"]".repeat(limit + 1)}`, limit)).toEqual({ code: "NestingTooDeep", detail: `nested more than ${limit} levels deep` });
    expect(checkJsonShape(`${'{"a":'.repeat(limit)}1${"}".repeat(limit)}`, limit)).toBeNull();
    expect(checkJsonShape(`${'{"a":'.repeat(limit + 1)}1${"}".repeat(limit + 1)}`, limit)?.code).toBe("NestingTooDeep");
  });
});
