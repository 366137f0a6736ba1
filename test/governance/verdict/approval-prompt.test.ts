import { expect, test } from "bun:test";
import { approvalPrompt, IN_THE_DIFF, PROMPT_ARGUMENTS_CHARS, PROMPT_DIFF_CHARS } from "../../../src/governance/verdict/approval-prompt.ts";

const call = (args: unknown, name = "run") => ({ serverId: "gh", method: "tools/call", name, arguments: args });
const SEE = "the approvals page, or `thoughtgate tasks --json`";

test("a short call is asked whole, read at a glance: who asks, tool, server and rule on the first line, one argument a line, credentials redacted", () => {
  expect(approvalPrompt(call({ repo: "acme/site", token: "ghp_123" }), "rule deletes: approval required", { seeAllAt: SEE })).toBe(
    ["ThoughtGate: allow run on server gh? (rule deletes: approval required)", 'repo: "acme/site"', 'token: "[REDACTED:secret_field]"'].join("\n"),
  );
  expect(approvalPrompt(call({}))).toBe("ThoughtGate: allow run on server gh?\n(no arguments)");
});

test("the rule is named even when the reason does not name it", () => {
  expect(approvalPrompt({ ...call({}), ruleId: "guarded" }, "permitted by Cedar policy p1; approval required").split("\n")[0]).toBe(
    "ThoughtGate: allow run on server gh? (rule guarded: permitted by Cedar policy p1; approval required)",
  );
});

test("an argument named __proto__ is shown like any other (it reaches the server); odd names are quoted", () => {
  expect(approvalPrompt(call(JSON.parse('{"__proto__": {"path": "/etc/passwd"}, "a b": 1}')))).toBe('ThoughtGate: allow run on server gh?\n__proto__: {"path":"/etc/passwd"}\n"a b": 1');
});

test("padding cannot push the dangerous end out of view: the middle goes, and the prompt says how much, where, and where to see all", () => {
  const command = `echo ${"a".repeat(20_000)}; rm -rf ~`;
  const prompt = approvalPrompt(call({ command, cwd: "/home/me" }), undefined, { seeAllAt: SEE });
  const lines = prompt.split("\n");
  const note = lines.at(-1);
  const args = lines.slice(1, -1).join("\n");
  expect(args).toContain("; rm -rf ~");
  expect(args).toContain('cwd: "/home/me"');
  expect(args.length).toBeLessThan(PROMPT_ARGUMENTS_CHARS + 100);
  const hidden = Number(/…\[(\d+) characters not shown\]…/.exec(args)?.[1]);
  expect(hidden).toBeGreaterThan(18_000);
  expect(note).toBe(`Shortened to fit: ${hidden} characters not shown, from the middle of $.command. The whole call: ${SEE}.`);
});

test("many small values: the middle of the whole text goes, both ends stay", () => {
  const list = Array.from({ length: 2_000 }, (_, i) => i);
  const prompt = approvalPrompt(call({ list }), undefined, { seeAllAt: SEE });
  expect(prompt).toContain("list: [0,1,2,3");
  expect(prompt).toContain("1998,1999]");
  expect(prompt).toContain("from the middle of the arguments as a whole");
});

test("with nowhere to see the whole call (a standalone shim, the arbiter) nothing is shortened", () => {
  const command = "x".repeat(10_000);
  expect(approvalPrompt(call({ command }))).toBe(`ThoughtGate: allow run on server gh?\ncommand: "${command}"`);
});

test("bidi, zero-width and tag characters are shown as escapes in names and arguments", () => {
  const prompt = approvalPrompt(call({ path: "/tmp/\u202Egpj.exe" }, "delete\u200B_file\u{E0041}"), "rule \u2066x\u2069");
  expect(prompt).toBe('ThoughtGate: allow delete\\u200b_file\\u{e0041} on server gh? (rule \\u2066x\\u2069)\npath: "/tmp/\\u202egpj.exe"');
});

test("a credential in a resource URI is redacted too", () => {
  expect(approvalPrompt({ serverId: "web", method: "resources/read", name: "https://u:pw@api.example/x?access_token=abc", arguments: {} }).split("\n")[0]).toBe(
    "ThoughtGate: allow resources/read https://u:[REDACTED:url_password]@api.example/x?access_token=[REDACTED:secret_field] on server web?",
  );
});

test("an edit is shown as a unified diff of its old and new text, led by the file and its first changed lines; the arguments point at it instead of repeating it", () => {
  const args = { path: "/p/notes.md", edits: [{ oldText: "one\ntwo\nthree", newText: "one\n2\nthree" }, { oldText: "x", newText: "y" }], dryRun: false };
  expect(approvalPrompt(call(args, "edit_file"), "rule default-destructive: approval required")).toBe(
    [
      "ThoughtGate: allow edit_file on server gh to change /p/notes.md? (rule default-destructive: approval required)",
      "-two",
      "+2",
      "2 lines removed, 2 added; 2 more changed lines in the diff below",
      "dryRun: false",
      `edits: [{"newText":"${IN_THE_DIFF}","oldText":"${IN_THE_DIFF}"},{"newText":"${IN_THE_DIFF}","oldText":"${IN_THE_DIFF}"}]`,
      'path: "/p/notes.md"',
      "Change to /p/notes.md:",
      "--- /p/notes.md",
      "+++ /p/notes.md",
      "@@ edit 1 of 2 @@",
      " one",
      "-two",
      "+2",
      " three",
      "@@ edit 2 of 2 @@",
      "-x",
      "+y",
    ].join("\n"),
  );
});

test("one old_string/new_string pair is an edit too; credentials in it are redacted before the diff", () => {
  const prompt = approvalPrompt(call({ file_path: "/p/.env", old_string: "A=1", new_string: "A=1\napi_key=sk-live-abcdefghijklmnop" }, "Edit"));
  expect(prompt).toContain("--- /p/.env\n+++ /p/.env\n@@ the edit @@\n A=1\n+api_key=[REDACTED:");
  expect(prompt).not.toContain("sk-live-abcdefghijklmnop");
});

test("a write over a file the caller may read is shown as a diff against it; one it may not read shows its arguments only", () => {
  const write = call({ path: "/p/a.txt", content: "a\nB\nc\n" }, "write_file");
  expect(approvalPrompt(write, undefined, { readExisting: () => "a\nb\nc\n" })).toContain(`content: "${IN_THE_DIFF}"`);
  expect(approvalPrompt(write, undefined, { readExisting: () => "a\nb\nc\n" })).toContain("Change to /p/a.txt:\n--- /p/a.txt\n+++ /p/a.txt\n@@ -1,3 +1,3 @@\n a\n-b\n+B\n c");
  const unread = approvalPrompt(write, undefined, { readExisting: () => null });
  expect(unread).toContain('content: "a\\nB\\nc\\n"');
  expect(unread).not.toContain("Change to");
});

test("the first three lines carry the change (what Claude Code's form shows): the file in the headline, what is replaced by what", () => {
  const one = approvalPrompt(call({ path: "/p/notes.md", edits: [{ oldText: "Status: draft", newText: "Status: final" }] }, "edit_file"), "rule default-destructive: approval required");
  expect(one.split("\n").slice(0, 4)).toEqual([
    "ThoughtGate: allow edit_file on server gh to change /p/notes.md? (rule default-destructive: approval required)",
    "-Status: draft",
    "+Status: final",
    "1 line removed, 1 added",
  ]);
  // A write that only adds: the first two added lines, then how many more.
  const added = approvalPrompt(call({ path: "/p/a.txt", content: "a\n1\n2\n3\n4\n" }, "write_file"), undefined, { readExisting: () => "a\n" });
  expect(added.split("\n").slice(1, 4)).toEqual(["+1", "+2", "0 lines removed, 4 added; 2 more changed lines in the diff below"]);
  // Many lines replaced: the first removed and the first added, wherever they are.
  const replaced = approvalPrompt(call({ path: "/p", old_string: "a\nb\nc", new_string: "x\ny\nz" }));
  expect(replaced.split("\n").slice(1, 4)).toEqual(["-a", "+x", "3 lines removed, 3 added; 4 more changed lines in the diff below"]);
  // The same content: said so.
  expect(approvalPrompt(call({ path: "/p/a.txt", content: "a\n" }, "write_file"), undefined, { readExisting: () => "a\n" }).split("\n")[1]).toBe("(no line of the file changes)");
  // A long changed line is cut in the lead (the whole diff below keeps it), saying how much.
  const long = approvalPrompt(call({ path: "/p", old_string: "a", new_string: "b".repeat(1_000) }));
  expect(long.split("\n")[2]).toBe(`+${"b".repeat(239)}…[761 characters more]`);
  expect(long).toContain(`\n+${"b".repeat(1_000)}`);
  // Invisible characters are escapes in the lead too, and in the file's name.
  expect(approvalPrompt(call({ path: "/p\u202e", old_string: "a", new_string: "b\u202e" })).split("\n").slice(0, 3)).toEqual(["ThoughtGate: allow run on server gh to change /p\\u202e?", "-a", "+b\\u202e"]);
});

test("invisible characters in a diff are shown as escapes; a long diff loses its middle and says where to see it all", () => {
  expect(approvalPrompt(call({ path: "/p", old_string: "a", new_string: "b\u202e" }))).toContain("+b\\u202e");
  const long = Array.from({ length: 2_000 }, (_, i) => `line ${i}`).join("\n");
  const prompt = approvalPrompt(call({ path: "/p", old_string: "", new_string: long }), undefined, { seeAllAt: SEE });
  const diff = prompt.slice(prompt.indexOf("Change to /p:\n"));
  expect(diff.length).toBeLessThan(PROMPT_DIFF_CHARS + 200);
  expect(diff).toContain(`characters of the diff not shown; the whole diff: ${SEE}]`);
  expect(diff).toContain("+line 1999");
});
