import { expect, test } from "bun:test";
import { approvalPrompt, PROMPT_ARGUMENTS_CHARS } from "../../../src/governance/decision/approval-prompt.ts";

const call = (args: unknown, name = "run") => ({ serverId: "gh", method: "tools/call", name, arguments: args });
const SEE = "the approvals page, or `thoughtgate tasks --json`";

test("a short call is asked whole, credentials redacted", () => {
  expect(approvalPrompt(call({ repo: "acme/site", token: "ghp_123" }), "rule deletes: approval required", { seeAllAt: SEE })).toBe(
    'Allow gh.run with {"repo":"acme/site","token":"[REDACTED:secret_field]"}? (rule deletes: approval required)',
  );
});

test("padding cannot push the dangerous end out of view: the middle goes, and the prompt says how much, where, and where to see all", () => {
  const command = `echo ${"a".repeat(20_000)}; rm -rf ~`;
  const prompt = approvalPrompt(call({ command, cwd: "/home/me" }), undefined, { seeAllAt: SEE });
  const [question, note] = prompt.split("\n");
  expect(question).toContain("; rm -rf ~");
  expect(question).toContain('"cwd":"/home/me"');
  expect(question?.length).toBeLessThan(PROMPT_ARGUMENTS_CHARS + 100);
  const hidden = Number(/…\[(\d+) characters not shown\]…/.exec(question ?? "")?.[1]);
  expect(hidden).toBeGreaterThan(18_000);
  expect(note).toBe(`Shortened to fit: ${hidden} characters not shown, from the middle of $.command. The whole call: ${SEE}.`);
});

test("many small values: the middle of the whole text goes, both ends stay", () => {
  const list = Array.from({ length: 2_000 }, (_, i) => i);
  const prompt = approvalPrompt(call({ list }), undefined, { seeAllAt: SEE });
  expect(prompt).toContain("[0,1,2,3");
  expect(prompt).toContain("1998,1999]}?");
  expect(prompt).toContain("from the middle of the arguments as a whole");
});

test("with nowhere to see the whole call (a standalone shim, the arbiter) nothing is shortened", () => {
  const command = "x".repeat(10_000);
  expect(approvalPrompt(call({ command }))).toBe(`Allow gh.run with {"command":"${command}"}?`);
});

test("bidi, zero-width and tag characters are shown as escapes in names and arguments", () => {
  const prompt = approvalPrompt(call({ path: "/tmp/\u202Egpj.exe" }, "delete\u200B_file\u{E0041}"), "rule \u2066x\u2069");
  expect(prompt).toBe('Allow gh.delete\\u200b_file\\u{e0041} with {"path":"/tmp/\\u202egpj.exe"}? (rule \\u2066x\\u2069)');
});

test("a credential in a resource URI is redacted too", () => {
  expect(approvalPrompt({ serverId: "web", method: "resources/read", name: "https://u:pw@api.example/x?access_token=abc", arguments: {} })).toBe(
    "Allow web resources/read https://u:[REDACTED:url_password]@api.example/x?access_token=[REDACTED:secret_field] with {}?",
  );
});
