import { describe, expect, test } from "bun:test";
import { argumentRank, briefArguments } from "../../src/core/brief-arguments.ts";

const LONG = "Lorem ipsum dolor sit amet, consectetur adipiscing elit, sed do eiusmod tempor incididunt ut labore".repeat(5);

describe("briefArguments: a call's arguments in a short line, what it acts on kept", () => {
  test("short arguments are shown whole, in the order the agent sent them", () => {
    expect(briefArguments({ b: 1, a: "x" }, 60)).toEqual({ text: '{"b":1,"a":"x"}', complete: true });
  });

  test("write_file: the path stays whole and comes first; the content is what is cut", () => {
    const args = { content: LONG, path: "/home/me/project/src/server/routes.ts" };
    expect(briefArguments(args, 60)).toEqual({ text: '{"path":"/home/me/project/src/server/routes.ts",…+1}', complete: false });
    const wider = briefArguments(args, 90);
    expect(wider.text).toMatch(/^\{"path":"\/home\/me\/project\/src\/server\/routes\.ts","content":"Lorem ip[^"]*…[^"]*labore"\}$/);
    expect(wider.text.length).toBeLessThanOrEqual(90);
  });

  test.each([
    [{ body: LONG, url: "https://api.example.com/v1/upload" }, '{"url":"https://api.example.com/v1/upload",'],
    [{ limit: 10, text: LONG, query: "SELECT * FROM users" }, '{"query":"SELECT * FROM users","limit":10,'],
    [{ timeout: 30, command: "rm -rf ~/projects" }, '{"command":"rm -rf ~/projects","timeout":30}'],
    [{ note: LONG, target: "~/notes/today.md" }, '{"target":"~/notes/today.md",'],
    [{ x: LONG, y: "./relative/file.txt" }, '{"y":"./relative/file.txt",'],
  ])("%o keeps the place it acts on first", (args, start) => {
    expect(briefArguments(args, 60).text).toStartWith(start);
  });

  test("a place longer than the room keeps both of its ends", () => {
    const path = `/tmp/${"a".repeat(100)}/../../etc/passwd`;
    const brief = briefArguments({ path, content: "x" }, 60);
    expect(brief.text).toMatch(/^\{"path":"\/tmp\/a+…a*\/\.\.\/\.\.\/etc\/passwd",…\+1\}$/);
    expect(brief.text.length).toBeLessThanOrEqual(60);
  });

  test("keys that do not fit are counted, and it never exceeds its room", () => {
    const args = Object.fromEntries(Array.from({ length: 30 }, (_, i) => [`k${i}`, "v".repeat(i)]));
    for (const room of [20, 40, 60, 120]) {
      const brief = briefArguments(args, room);
      expect(brief.text.length).toBeLessThanOrEqual(room);
      expect(brief.complete).toBe(false);
      expect(brief.text).toMatch(/…\+\d+\}$/);
    }
  });

  test("invisible characters are escaped, and measured as escaped", () => {
    const brief = briefArguments({ path: "/tmp/invoice\u202efdp.exe", content: LONG }, 60);
    expect(brief.text).toContain("/tmp/invoice\\u202efdp.exe");
    expect(brief.text).not.toContain("\u202e");
    expect(brief.text.length).toBeLessThanOrEqual(60);
  });

  test("a cut never splits a character made of two code units", () => {
    const brief = briefArguments({ content: "😀".repeat(100) }, 30);
    expect(brief.text).not.toMatch(/[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/);
  });

  test("not an object: shown whole when short, else its middle cut", () => {
    expect(briefArguments(null, 60)).toEqual({ text: "null", complete: true });
    expect(briefArguments(["a", "b"], 60)).toEqual({ text: '["a","b"]', complete: true });
    expect(briefArguments("x".repeat(100), 20)).toMatchObject({ complete: false, text: expect.stringMatching(/^"x+…x+"$/) });
  });

  test("ranks: where, then names, then the rest, then bulk", () => {
    expect([argumentRank("file_path", 1), argumentRank("targetUrl", 1), argumentRank("name", 1), argumentRank("limit", 1), argumentRank("new_string", 1), argumentRank("x", "https://a.example")]).toEqual([0, 0, 1, 2, 3, 0]);
  });
});
