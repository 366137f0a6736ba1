/**
 * Rules that see arguments and the project (docs/governance.md, "Rules that see arguments"):
 * `arguments:` matchers, `${PROJECT}` / `${CWD}` / `${HOME}` filled in per call, `project:`, and
 * glob alternation.
 */
import { describe, expect, test } from "bun:test";
import { mkdirSync, symlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { parseConfig } from "../../../src/core/config/load.ts";
import { compileGlob } from "../../../src/core/glob.ts";
import { placeOf, projectRoot, type Place } from "../../../src/core/project.ts";
import { GovernanceEngine, type EvaluateInput } from "../../../src/governance/engine/engine.ts";
import { tempDir } from "../../support/harness.ts";

function engine(yaml: string, env: Record<string, string> = {}): GovernanceEngine {
  const parsed = parseConfig(yaml, env);
  if (!parsed.ok) throw new Error(parsed.problems.map((p) => `${p.path}: ${p.message}`).join("\n"));
  return new GovernanceEngine(parsed.config, null, "test");
}

const problems = (yaml: string, layer: "user" | "project" = "user") => {
  const parsed = parseConfig(yaml, { PROJECT: "/from/the/environment", SECRET: "s3cret" }, layer);
  return parsed.ok ? [] : parsed.problems.map((p) => `${p.path}: ${p.message}`);
};

describe("glob alternation", () => {
  test("{a,b} matches either alternative, each a glob; braces without a comma are characters", () => {
    const glob = compileGlob("{write_file,edit_*,move_?ile}");
    expect(["write_file", "edit_file", "edit_x", "move_file"].map((n) => glob.test(n))).toEqual([true, true, true, true]);
    expect(["read_file", "write_files", "xwrite_file", "{write_file,edit_*,move_?ile}"].map((n) => glob.test(n))).toEqual([false, false, false, false]);
    expect(compileGlob("a{b,{c,d}e}").test("ade")).toBe(true);
    expect(compileGlob("{x}").test("{x}")).toBe(true);
    expect(compileGlob("{x}").test("x")).toBe(false);
    expect(compileGlob("a{b,c").test("a{b,c")).toBe(true);
    expect(compileGlob("a.b").test("aXb")).toBe(false);
  });
});

describe("arguments", () => {
  test("within: a path in the directory (itself included); .., ~ and relative paths are read as the server reads them", () => {
    using dir = tempDir();
    const project = join(dir.path, "app");
    mkdirSync(join(project, "src"), { recursive: true });
    const place: Place = { project, cwd: join(project, "src"), home: join(dir.path, "home") };
    const rules = engine(`schema: 1
governance:
  defaults: { action: approve }
  rules:
    - { id: in-project, match: write_file, arguments: { path: { within: "\${PROJECT}" } }, action: forward }
`);
    const decide = (path: unknown) => rules.evaluate({ serverId: "fs", method: "tools/call", name: "write_file", arguments: { path }, place }).kind;
    expect(decide(join(project, "src/a.ts"))).toBe("forward");
    expect(decide(project)).toBe("forward");
    expect(decide("b.ts")).toBe("forward"); // relative to the working directory, inside the project
    expect(decide(`${project}/../elsewhere/a.ts`)).toBe("approve");
    expect(decide(`${project}-other/a.ts`)).toBe("approve");
    expect(decide("../../x")).toBe("approve");
    expect(decide("~/notes.txt")).toBe("approve");
    expect(decide([join(project, "a"), join(project, "b")])).toBe("forward");
    expect(decide([join(project, "a"), "/etc/passwd"])).toBe("approve");
    expect(decide([])).toBe("approve");
    expect(decide(7)).toBe("approve");
    expect(rules.evaluate({ serverId: "fs", method: "tools/call", name: "write_file", arguments: {}, place }).kind).toBe("approve");
  });

  test("within follows links: one a cloned repository planted, dangling or not, is judged where it leads", () => {
    using dir = tempDir();
    const project = join(dir.path, "repo");
    const secrets = join(dir.path, "ssh");
    mkdirSync(project);
    mkdirSync(secrets);
    symlinkSync(secrets, join(project, "docs"));
    symlinkSync(join(secrets, "authorized_keys"), join(project, "keys"));
    const rules = engine(`schema: 1
governance:
  defaults: { action: approve }
  rules: [{ id: in-project, match: "*", arguments: { path: { within: "\${PROJECT}" } }, action: forward }]
`);
    const place = placeOf(project);
    const decide = (path: string) => rules.evaluate({ serverId: "fs", method: "tools/call", name: "write_file", arguments: { path }, place }).kind;
    expect(decide(join(project, "docs/authorized_keys"))).toBe("approve");
    expect(decide(join(project, "keys"))).toBe("approve");
    expect(decide(join(project, "notes/new.md"))).toBe("forward");
  });

  test("glob, equality and a list of alternatives; every named argument must match", () => {
    const rules = engine(`schema: 1
governance:
  rules:
    - id: own-repos
      match: "{create_issue,add_issue_comment}"
      arguments: { owner: [octocat, { glob: "octo-*" }], draft: false, labels: { equals: [bug] } }
      action: forward
    - { id: rest, match: "*", action: deny }
`);
    const decide = (args: Record<string, unknown>) => rules.evaluate({ serverId: "github", method: "tools/call", name: "create_issue", arguments: args }).kind;
    expect(decide({ owner: "octocat", draft: false, labels: ["bug"] })).toBe("forward");
    expect(decide({ owner: "octo-org", draft: false, labels: ["bug"] })).toBe("forward");
    expect(decide({ owner: "mallory", draft: false, labels: ["bug"] })).toBe("deny");
    expect(decide({ owner: "octocat", draft: "false", labels: ["bug"] })).toBe("deny");
    expect(decide({ owner: "octocat", draft: false, labels: ["bug", "p1"] })).toBe("deny");
    expect(decide({ owner: "octocat", labels: ["bug"] })).toBe("deny");
  });

  test("${CWD} and ${HOME} are the call's, filled in per call", () => {
    const rules = engine(`schema: 1
governance:
  defaults: { action: deny }
  rules:
    - { id: here, match: "*", arguments: { path: { glob: "\${CWD}/*" } }, action: forward }
    - { id: notes, match: "*", arguments: { path: "\${HOME}/notes.md" }, action: approve }
`);
    const decide = (path: string, place: Place) => rules.evaluate({ serverId: "fs", method: "tools/call", name: "read", arguments: { path }, place }).kind;
    const a: Place = { project: "/p", cwd: "/w/a", home: "/home/ada" };
    const b: Place = { project: "/p", cwd: "/w/b", home: "/home/bob" };
    expect([decide("/w/a/x", a), decide("/w/a/x", b), decide("/w/b/x", b)]).toEqual(["forward", "deny", "forward"]);
    expect([decide("/home/ada/notes.md", a), decide("/home/ada/notes.md", b)]).toEqual(["approve", "deny"]);
  });
});

describe("project:", () => {
  test("a rule kept to one project applies only in a session of that project", () => {
    using dir = tempDir();
    const app = join(dir.path, "app");
    mkdirSync(join(app, ".git"), { recursive: true });
    mkdirSync(join(app, "lib"));
    const rules = engine(`schema: 1
governance:
  rules:
    - { id: always-app, match: write_file, project: ${JSON.stringify(app)}, action: forward }
    - { id: ask, match: write_file, action: approve }
`);
    const decide = (place: Place) => rules.evaluate({ serverId: "fs", method: "tools/call", name: "write_file", arguments: { path: "/x" }, place }).kind;
    expect(decide(placeOf(join(app, "lib")))).toBe("forward");
    expect(decide(placeOf(dir.path))).toBe("approve");
    // Another project: a path that starts the same, and a repository of its own nested inside.
    mkdirSync(join(dir.path, "app-evil", ".git"), { recursive: true });
    mkdirSync(join(app, "vendor", "dep", ".git"), { recursive: true });
    expect(decide(placeOf(join(dir.path, "app-evil")))).toBe("approve");
    expect(decide(placeOf(join(app, "vendor", "dep")))).toBe("approve");
  });

  test("the project is the nearest ancestor holding .git, else the directory itself; links resolved", () => {
    using dir = tempDir();
    const repo = join(dir.path, "repo");
    mkdirSync(join(repo, "a/b"), { recursive: true });
    writeFileSync(join(repo, ".git"), "gitdir: /elsewhere\n");
    symlinkSync(repo, join(dir.path, "link"));
    expect(projectRoot(join(repo, "a/b"))).toBe(repo);
    expect(projectRoot(join(dir.path, "link/a"))).toBe(repo);
    const plain = join(dir.path, "plain");
    mkdirSync(plain);
    expect(projectRoot(plain)).toBe(plain);
  });
});

describe("what a policy file may say", () => {
  test("${PROJECT}, ${CWD} and ${HOME} are never read from the environment, in any policy file", () => {
    const yaml = 'schema: 1\ngovernance:\n  rules: [{ match: "*", arguments: { path: { within: "${PROJECT}" } }, action: forward }]\n';
    expect(problems(yaml)).toEqual([]);
    expect(problems(yaml, "project")).toEqual([]);
    const parsed = parseConfig(yaml, { PROJECT: "/from/the/environment" });
    expect(parsed.ok && parsed.config.governance.rules[0]?.arguments).toEqual({ path: { within: "${PROJECT}" } });
  });

  test("other ${…} in arguments, and anything but ${HOME} in project:, are errors naming the field", () => {
    expect(problems('schema: 1\ngovernance:\n  rules: [{ match: "*", arguments: { path: "${SECRET}" }, action: forward }]\n')).toEqual([
      "governance.rules[0].arguments.path: only ${PROJECT}, ${CWD} and ${HOME} are filled in here, per session and never from the environment (found ${SECRET})",
    ]);
    expect(problems('schema: 1\ngovernance:\n  rules: [{ match: "*", project: "${PROJECT}", action: forward }]\n')).toEqual([
      "governance.rules[0].project: only ${HOME} are filled in here, per session and never from the environment (found ${PROJECT})",
    ]);
    expect(problems('schema: 1\ngovernance:\n  rules: [{ match: "*", project: "${HOME}/src/app", action: forward }]\n')).toEqual([]);
  });

  test("matchers that are not matchers say what to write", () => {
    const rule = (args: string) => problems(`schema: 1\ngovernance:\n  rules: [{ match: "*", arguments: ${args}, action: forward }]\n`);
    expect(rule("{ path: { inside: /tmp } }")).toEqual([
      "governance.rules[0].arguments.path: expected {within: DIR}, {glob: PATTERN}, {equals: VALUE}, a string, number or boolean, or a list of these (any one matches); got a mapping with keys inside",
    ]);
    expect(rule("{ path: { within: tmp } }")).toEqual(["governance.rules[0].arguments.path: within needs an absolute directory (or one starting with ${PROJECT}, ${CWD} or ${HOME})"]);
    expect(rule("{ path: [] }")).toEqual(["governance.rules[0].arguments.path: an empty list matches nothing; list at least one matcher"]);
    expect(rule("{ path: [/a, { glob: 3 }] }")).toEqual(["governance.rules[0].arguments.path: [1]: glob needs a non-empty string"]);
    expect(problems('schema: 1\ngovernance:\n  rules: [{ match: "*", project: src/app, action: forward }]\n')).toEqual([
      "governance.rules[0].project: expected an absolute directory (or one starting with ${HOME}/)",
    ]);
  });
});

describe("decisions say where a hint came from", () => {
  const rules = engine(`schema: 1
governance:
  rules:
    - { id: reads, match: "*", annotations: { readOnlyHint: true }, action: forward }
    - { id: writes, match: "*", annotations: { destructiveHint: true }, action: approve }
`);
  const call = (extra: Partial<EvaluateInput>): EvaluateInput => ({ serverId: "github", method: "tools/call", name: "t", arguments: {}, ...extra });

  test("a tool that declares nothing is asked, and the reason says why", () => {
    expect(rules.evaluate(call({}))).toMatchObject({
      kind: "approve",
      reason: "rule writes: approval required; the tool declares no annotations, so MCP's defaults apply: not read-only, destructive",
    });
  });

  test("a catalog hint is named; the tool's own annotations are not remarked on", () => {
    expect(rules.evaluate(call({ annotations: { readOnlyHint: true }, annotationSource: "ThoughtGate's catalog (x 1.0)" }))).toMatchObject({
      kind: "forward",
      reason: "rule reads: forward; annotations from ThoughtGate's catalog (x 1.0)",
    });
    expect(rules.evaluate(call({ annotations: { readOnlyHint: true } }))).toMatchObject({ kind: "forward", reason: "rule reads: forward" });
  });
});
