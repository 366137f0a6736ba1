/**
 * "Always allow this tool on this server": the rule written into the user's policy file, where it
 * goes, what it keeps of the file, and when it is refused (a project's or an explicit policy, names
 * that a rule would read as patterns). The edited file is loaded by a real engine holder.
 */
import { describe, expect, test } from "bun:test";
import { existsSync, readFileSync, statSync, writeFileSync } from "node:fs";
import type { Workflow } from "../../../src/core/config/schema.ts";
import { alwaysAllow, type AlwaysAllowContext } from "../../../src/governance/approval/always-allow.ts";
import { EngineHolder } from "../../../src/governance/engine/engine-holder.ts";
import { insertRule, yamlString } from "../../../src/governance/approval/policy-edit.ts";
import { TaskStore, type Task } from "../../../src/governance/approval/tasks.ts";
import { policyHome, type PolicyHome } from "../../support/policy-home.ts";

const WORKFLOW: Workflow = { destination: { type: "any" }, timeout: 300_000, on_timeout: "deny" };
const NOW = new Date("2026-11-22T12:00:00.000Z");
/** Chosen on the approvals page, for every project (the rule has no `project:`). */
const PAGE = { alwaysScope: "everywhere", by: "on the approvals page" } as const;

/** The program a shim reports for a server: one per id in these tests. */
const programOf = (serverId: string): { command: string[]; url: string | null } => ({ command: ["node", `${serverId}-server.js`], url: null });

function taskFor(serverId: string, name: string, annotations?: Task["annotations"]): Task {
  const created = new TaskStore().create({ serverId, server: programOf(serverId), method: "tools/call", name, arguments: { path: "/tmp/x" }, ...(annotations ? { annotations } : {}), ruleId: null, workflowName: "default", workflow: WORKFLOW, reason: "" });
  if (!created.ok) throw new Error("full");
  return created.task;
}

async function holderIn(home: PolicyHome, flag?: string): Promise<{ holder: EngineHolder; ctx: AlwaysAllowContext }> {
  const holder = await EngineHolder.load(flag, home.env, home.project);
  return { holder, ctx: { policy: () => holder.policy, reload: () => holder.reload(), env: home.env, cwd: home.project, origin: "wrap session run-1", now: () => NOW } };
}

const call = (serverId: string, name: string, annotations?: Task["annotations"], server = programOf(serverId)) => ({ serverId, server, method: "tools/call", name, arguments: {}, ...(annotations ? { annotations } : {}) });

const USER = `# My policy: keep it short.
schema: 1
governance:
  defaults: { action: forward }
  rules:
    # Reads are fine.
    - { id: reads, match: "get_*", action: forward }

    # Anything that deletes asks me first.
    - id: deletes
      match: "delete_*"
      action: approve   # every channel
approval: {}
`;

describe("the rule in the user's policy file", () => {
  test("goes right above the rule that asked, with a comment saying when and from where; the rest of the file is byte for byte the same", async () => {
    using home = policyHome();
    home.writeUser(USER);
    const { holder, ctx } = await holderIn(home);
    const task = taskFor("fs", "delete_file");
    const result = await alwaysAllow(task, PAGE, ctx);
    expect(result).toEqual({ ok: true, file: home.userFile, ruleId: "always-allow-fs-delete_file", note: `always allowed: rule always-allow-fs-delete_file added to ${home.userFile}` });
    const added = `    # Added 2026-11-22T12:00:00.000Z by "always allow" on the approvals page (wrap session run-1, task ${task.id}): fs.delete_file runs without asking when the program under "server" serves it.
    - { id: "always-allow-fs-delete_file", match: "delete_file", method: "tools/call", source: "fs", server: { command: ["node", "fs-server.js"] }, action: "forward" }
`;
    expect(readFileSync(home.userFile, "utf8")).toBe(USER.replace("    # Anything that deletes", `${added}    # Anything that deletes`));
    // The holder reloaded it: this tool on this server runs; the same tool elsewhere and other deletes still ask.
    expect(holder.engine.evaluate(call("fs", "delete_file"))).toMatchObject({ kind: "forward", ruleId: "always-allow-fs-delete_file" });
    expect(holder.engine.evaluate(call("other", "delete_file")).kind).toBe("approve");
    // The same id over another program (a repository's entry named fs) is another server: it still asks.
    expect(holder.engine.evaluate(call("fs", "delete_file", undefined, { command: ["node", "evil.js"], url: null })).kind).toBe("approve");
    expect(holder.engine.evaluate(call("fs", "delete_dir")).kind).toBe("approve");
    // Two more at once (two clicks): each gets its own rule, neither writes over the other's.
    const both = await Promise.all([alwaysAllow(taskFor("fs", "delete_dir"), PAGE, ctx), alwaysAllow(taskFor("fs", "delete_link"), PAGE, ctx)]);
    expect(both.map((r) => r.ok && r.ruleId)).toEqual(["always-allow-fs-delete_dir", "always-allow-fs-delete_link"]);
    expect([holder.engine.evaluate(call("fs", "delete_dir")).kind, holder.engine.evaluate(call("fs", "delete_link")).kind]).toEqual(["forward", "forward"]);
  });

  test("no user file: it is created from the embedded default, which keeps applying to everything else", async () => {
    using home = policyHome();
    const { holder, ctx } = await holderIn(home);
    const destructive = { destructiveHint: true };
    expect(holder.engine.evaluate(call("notes", "delete_note", destructive)).kind).toBe("approve");
    const result = await alwaysAllow(taskFor("notes", "delete_note", destructive), PAGE, ctx);
    expect(result.ok).toBe(true);
    const text = readFileSync(home.userFile, "utf8");
    expect(text).toStartWith('# ThoughtGate policy (docs/governance.md). Created 2026-11-22T12:00:00.000Z by "always allow"\n# (wrap session run-1) from the embedded default policy');
    expect(statSync(home.userFile).mode & 0o777).toBe(0o600);
    expect(holder.label).toBe(`user policy ${home.userFile}`);
    expect(holder.engine.evaluate(call("notes", "delete_note", destructive))).toMatchObject({ kind: "forward", ruleId: "always-allow-notes-delete_note" });
    expect(holder.engine.evaluate(call("notes", "purge", destructive))).toMatchObject({ kind: "approve", ruleId: "default-destructive" });
    expect(holder.engine.evaluate(call("notes", "read", { readOnlyHint: true }))).toMatchObject({ kind: "forward", ruleId: "default-read-only" });
  });

  test("a Cedar rule that asked keeps its Cedar check: only the question goes", async () => {
    using home = policyHome();
    writeFileSync(`${home.userFile.replace(/thoughtgate\.yaml$/, "")}main.cedar`, 'permit(principal, action, resource) unless { resource.arguments has path && resource.arguments.path like "/etc/*" };\n');
    writeFileSync(`${home.userFile.replace(/thoughtgate\.yaml$/, "")}arguments.cedarschema`, "namespace ThoughtGate { type Arguments = { path?: String }; }\n");
    home.writeUser(`schema: 1\ngovernance:\n  rules:\n    - { id: guarded, match: "write_*", action: policy, approval: careful }\napproval:\n  careful: {}\ncedar:\n  policies: [main.cedar]\n  schema: arguments.cedarschema\n`);
    const { holder, ctx } = await holderIn(home);
    expect(await alwaysAllow(taskFor("fs", "write_file"), PAGE, ctx)).toMatchObject({ ok: true });
    expect(readFileSync(home.userFile, "utf8")).toContain('- { id: "always-allow-fs-write_file", match: "write_file", method: "tools/call", source: "fs", server: { command: ["node", "fs-server.js"] }, action: "policy" }');
    expect(holder.engine.evaluate({ ...call("fs", "write_file"), arguments: { path: "/tmp/a" } }).kind).toBe("forward");
    expect(holder.engine.evaluate({ ...call("fs", "write_file"), arguments: { path: "/etc/passwd" } }).kind).toBe("deny");
  });
});

describe("refused, with the file unchanged", () => {
  test("the approval comes from the project's policy, which is never written", async () => {
    using home = policyHome();
    home.writeUser(USER);
    home.writeProject(`schema: 1\ngovernance:\n  rules:\n    - { id: project-asks, match: "drop_*", action: approve }\n`);
    const { ctx } = await holderIn(home);
    const result = await alwaysAllow(taskFor("db", "drop_table"), PAGE, ctx);
    expect(result).toEqual({ ok: false, reason: `cannot always allow db.drop_table: the approval is asked by the project's policy ${home.projectFile}, which ThoughtGate never edits` });
    expect(readFileSync(home.userFile, "utf8")).toBe(USER);
  });

  test("both policies ask: the user's rule alone would not stop the questions", async () => {
    using home = policyHome();
    home.writeUser(USER);
    home.writeProject(`schema: 1\ngovernance:\n  rules:\n    - { id: project-asks, match: "delete_*", action: approve }\n`);
    const { ctx } = await holderIn(home);
    const result = await alwaysAllow(taskFor("fs", "delete_file"), PAGE, ctx);
    expect(result).toEqual({ ok: false, reason: "cannot always allow fs.delete_file: even with the rule, project policy: rule project-asks: approval required" });
    expect(readFileSync(home.userFile, "utf8")).toBe(USER);
  });

  test("the policy in force was given explicitly", async () => {
    using home = policyHome();
    home.writeUser(USER);
    const { ctx } = await holderIn(home, home.userFile);
    expect(await alwaysAllow(taskFor("fs", "delete_file"), PAGE, ctx)).toEqual({ ok: false, reason: `cannot always allow fs.delete_file: the policy in force is ${home.userFile}, given with --thoughtgate-config, not your policy file; add a rule there` });
    expect(readFileSync(home.userFile, "utf8")).toBe(USER);
  });

  test("names a rule would read as a pattern, or that hide characters", async () => {
    using home = policyHome();
    const { ctx } = await holderIn(home);
    const reasons = [];
    for (const [server, name] of [["fs", "delete_*"], ["f?", "delete_file"], ["fs", "delete\nfile"], ["fs", "delete\u202efile"]] as const) {
      const result = await alwaysAllow(taskFor(server, name, { destructiveHint: true }), PAGE, ctx);
      reasons.push(result.ok ? "written" : result.reason.replace(/^cannot always allow .*?: /s, ""));
    }
    expect(reasons).toEqual([
      "its name holds * or ?, which a rule would read as a pattern matching other names",
      "its server id holds * or ?, which a rule would read as a pattern matching other names",
      "its name holds invisible or control characters",
      "its name holds invisible or control characters",
    ]);
    expect(existsSync(home.userFile)).toBe(false);
  });
});

describe("insertRule", () => {
  const rule = { id: "r", match: 'a "quoted" # not a comment', method: "tools/call", source: "s", action: "forward" as const };

  test("a flow list gets the rule between its items; a file with no rules gets a list", () => {
    const flow = `schema: 1\ngovernance: { rules: [ { match: a, action: approve } ] }  # mine\n`;
    const edited = insertRule(flow, 0, rule, "added");
    expect(edited).toEqual({ ok: true, text: `schema: 1\n# added\ngovernance: { rules: [ { id: "r", match: "a \\"quoted\\" # not a comment", method: "tools/call", source: "s", action: "forward" }, { match: a, action: approve } ] }  # mine\n` });
    const none = insertRule("# top\nschema: 1 # one\n", 0, rule, "added");
    expect(none).toEqual({ ok: true, text: `# top\nschema: 1 # one\ngovernance:\n  rules:\n    # added\n    - { id: "r", match: "a \\"quoted\\" # not a comment", method: "tools/call", source: "s", action: "forward" }\n` });
  });

  test("a comment cannot be broken out of, and no character of a name ends its string", () => {
    const edited = insertRule("schema: 1\ngovernance:\n  rules:\n    - { match: x, action: deny }\n", 1, { ...rule, match: "x\n  - {match: '*', action: forward}\u2028\u007f" }, "by\nrules: []");
    expect(edited.ok).toBe(true);
    const text = edited.ok ? edited.text : "";
    expect(text.split("\n")).toHaveLength(7);
    expect(text).toContain("# by\\u000arules: []");
    expect(yamlString("\u2028\u007f\u0085")).toBe('"\\u2028\\u007f\\u0085"');
  });

  test("\"always … in this project\" writes the rule's project: key (the session's project, quoted like every value)", () => {
    const edited = insertRule("schema: 1\ngovernance:\n  rules:\n    - { match: x, action: deny }\n", 0, { id: "r", match: "write_file", method: "tools/call", source: "s", project: '/home/ada/my "app"', action: "forward" }, "added");
    expect(edited).toEqual({
      ok: true,
      text: 'schema: 1\ngovernance:\n  rules:\n    # added\n    - { id: "r", match: "write_file", method: "tools/call", source: "s", project: "/home/ada/my \\"app\\"", action: "forward" }\n    - { match: x, action: deny }\n',
    });
  });

  test("a governance section that is not a mapping is refused", () => {
    expect(insertRule("schema: 1\ngovernance: [1, 2]\n", 0, rule, "x")).toEqual({ ok: false, reason: "the file's governance section is not a mapping" });
  });
});

describe("an always-allow rule is bound to the program that serves the tool", () => {
  test("a rule from before (no `server:`) still applies, and loading it says what it lets through and how to bind it", async () => {
    using home = policyHome();
    home.writeUser(`schema: 1
governance:
  rules:
    - { id: "always-allow-github-delete_branch", match: "delete_branch", method: "tools/call", source: "github", action: "forward" }
    - { id: ask, match: "*", action: approve }
`);
    const { holder } = await holderIn(home);
    expect(holder.engine.evaluate(call("github", "delete_branch")).kind).toBe("forward");
    const { unboundAlwaysAllowRules } = await import("../../../src/governance/engine/policy.ts");
    expect(unboundAlwaysAllowRules(holder.policy.base.engine.config, home.userFile)).toEqual([
      expect.stringContaining("rule always-allow-github-delete_branch (written by \"always allow\" before such rules named their server's program) allows github.delete_branch from any server with that id"),
    ]);
  });

  test("a call whose server's program is unknown (the arbiter) is not matched by a bound rule", async () => {
    using home = policyHome();
    home.writeUser(`schema: 1
governance:
  rules:
    - { id: bound, match: "delete_branch", source: "github", server: { command: ["npx", "-y", "server-github"] }, action: forward }
    - { id: remote, match: "delete_branch", source: "gh-remote", server: { url: "https://mcp.example/mcp" }, action: forward }
    - { id: ask, match: "*", action: approve }
`);
    const { holder } = await holderIn(home);
    const { server: _, ...unknown } = call("github", "delete_branch");
    expect(holder.engine.evaluate(unknown).kind).toBe("approve");
    expect(holder.engine.evaluate(call("github", "delete_branch", undefined, { command: ["npx", "-y", "server-github"], url: null })).kind).toBe("forward");
    expect(holder.engine.evaluate(call("github", "delete_branch", undefined, { command: ["npx", "-y", "server-github", "--evil"], url: null })).kind).toBe("approve");
    expect(holder.engine.evaluate(call("gh-remote", "delete_branch", undefined, { command: [], url: "https://mcp.example/mcp" })).kind).toBe("forward");
    expect(holder.engine.evaluate(call("gh-remote", "delete_branch", undefined, { command: [], url: "https://evil.example/mcp" })).kind).toBe("approve");
  });

  test("a task whose shim said nothing of its server's program is refused, and nothing is written", async () => {
    using home = policyHome();
    home.writeUser(USER);
    const { ctx } = await holderIn(home);
    const { server: _, ...task } = taskFor("fs", "delete_file");
    expect(await alwaysAllow(task as Task, PAGE, ctx)).toEqual({ ok: false, reason: "cannot always allow fs.delete_file: its shim did not say what runs the server, so a rule could not name it" });
    expect(readFileSync(home.userFile, "utf8")).toBe(USER);
  });
});
