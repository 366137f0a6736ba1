import { describe, expect, test } from "bun:test";
import { rmSync } from "node:fs";
import { EngineHolder } from "../../../src/governance/engine/engine-holder.ts";
import { fixture, waitFor } from "../../support/harness.ts";
import { policyHome } from "../../support/policy-home.ts";

const call = (name: string) => ({ serverId: "notes", method: "tools/call", name, arguments: {} });
const denyRule = (id: string, tool: string) => `schema: 1\ngovernance:\n  rules: [{ id: ${id}, match: ${tool}, action: deny }]\n`;

describe("which policy is in force", () => {
  test("no policy file: the embedded default, without loading the YAML parser or the schema", () => {
    using home = policyHome();
    const run = (cwd: string) => {
      const result = Bun.spawnSync(fixture("policy-modules-fixture.ts"), { cwd, env: { ...process.env, ...home.env } });
      if (result.exitCode !== 0) throw new Error(result.stderr.toString());
      return JSON.parse(result.stdout.toString()) as { label: string; loaded: string[] };
    };
    expect(run(home.project)).toEqual({ label: "embedded-default", loaded: [] });
    home.writeProject("schema: 1\n");
    expect(run(home.project)).toEqual({ label: `embedded default policy, restricted by project policy ${home.projectFile}`, loaded: ["load", "valibot", "yaml"] });
  });

  test("the user's file alone, restricted by the project's, or an explicit file alone", async () => {
    using home = policyHome();
    home.writeUser(denyRule("user-rule", "a"));
    expect((await EngineHolder.load(undefined, home.env, home.project)).label).toBe(`user policy ${home.userFile}`);
    home.writeProject(denyRule("project-rule", "b"));
    const both = await EngineHolder.load(undefined, home.env, home.project);
    expect(both.label).toBe(`user policy ${home.userFile}, restricted by project policy ${home.projectFile}`);
    expect(both.files).toEqual([home.userFile, home.projectFile]);
    expect([both.engine.evaluate(call("a")).kind, both.engine.evaluate(call("b")).kind, both.engine.evaluate(call("c")).kind]).toEqual(["deny", "deny", "forward"]);
    const explicit = await EngineHolder.load(home.userFile, home.env, home.project);
    expect([explicit.label, explicit.engine.evaluate(call("b")).kind]).toEqual([home.userFile, "forward"]);
  });
});

describe("reload", () => {
  test("reloads both files; a project file that appears is added; a file in force that is gone keeps the policy", async () => {
    using home = policyHome();
    home.writeUser(denyRule("user-rule", "a"));
    const holder = await EngineHolder.load(undefined, home.env, home.project);
    home.writeProject(denyRule("project-rule", "b"));
    expect(await holder.reload()).toBe(true);
    expect(holder.engine.evaluate(call("b"))).toMatchObject({ kind: "deny", block: { ruleId: "project-rule" } });
    home.writeUser(denyRule("user-rule-2", "c"));
    expect(await holder.reload()).toBe(true);
    expect([holder.engine.evaluate(call("a")).kind, holder.engine.evaluate(call("c")).kind]).toEqual(["forward", "deny"]);
    rmSync(home.projectFile);
    expect(await holder.reload()).toBe(false);
    expect(holder.engine.evaluate(call("b")).kind).toBe("deny");
    home.writeProject("schema: 1\ngovernance: { defaults: { action: nope } }\n");
    expect(await holder.reload()).toBe(false);
    expect(holder.label).toBe(`user policy ${home.userFile}, restricted by project policy ${home.projectFile}`);
  });
});

describe("watching", () => {
  for (const mode of ["events", "poll"] as const) {
    test(`${mode}: with the embedded default in force, a user policy file that appears is picked up, and so is an edit of it`, async () => {
      using home = policyHome();
      const holder = await EngineHolder.load(undefined, home.env, home.project);
      holder.watch(mode);
      try {
        expect(holder.label).toBe("embedded-default");
        home.writeUser(denyRule("user-rule", "a"));
        await waitFor(() => holder.label === `user policy ${home.userFile}`, "the reload");
        expect(holder.engine.evaluate(call("a")).kind).toBe("deny");
        home.writeUser(denyRule("user-rule", "b"));
        await waitFor(() => holder.engine.evaluate(call("b")).kind === "deny", "the reload of the edit");
        expect(holder.engine.evaluate(call("a")).kind).toBe("forward");
      } finally {
        holder.close();
      }
    });
  }
});
