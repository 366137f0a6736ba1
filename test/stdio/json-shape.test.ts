import { describe, expect, test } from "bun:test";
import { checkJsonShape, MAX_NESTING } from "../../src/stdio/json-shape.ts";

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

  test("large objects (past the in-place comparison) are checked too", () => {
    expect(checkJsonShape(obj(40))).toBeNull();
    expect(checkJsonShape(obj(40, ',"k25":0'))?.code).toBe("DuplicateKey");
    expect(checkJsonShape(`{"outer":${obj(30)},"k0":1,"k1":2}`)).toBeNull();
  });

  test(`nesting up to ${MAX_NESTING} levels is accepted, one more is not`, () => {
    expect(checkJsonShape(`${"[".repeat(MAX_NESTING)}${"]".repeat(MAX_NESTING)}`)).toBeNull();
    expect(checkJsonShape(`${"[".repeat(MAX_NESTING + 1)}${"]".repeat(MAX_NESTING + 1)}`)?.code).toBe("NestingTooDeep");
    expect(checkJsonShape(`${'{"a":'.repeat(MAX_NESTING + 1)}1${"}".repeat(MAX_NESTING + 1)}`)?.code).toBe("NestingTooDeep");
  });
});
