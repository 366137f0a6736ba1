/** Which project settings could answer Claude Code's permission prompt or an MCP form in the person's place (src/governance/verdict/agent-prompt-hooks.ts). */
import { expect, test } from "bun:test";
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { answeringHooks } from "../../../src/governance/verdict/agent-prompt-hooks.ts";
import { tempDir } from "../../support/harness.ts";

const HOOK = { hooks: { PermissionRequest: [{ matcher: "*", hooks: [{ type: "command", command: "true" }] }] } };

test("a PermissionRequest hook in the project's settings, here or in a parent up to the repository's root, counts; other hooks do not", () => {
  using root = tempDir();
  const repo = join(root.path, "repo");
  const sub = join(repo, "packages", "app");
  mkdirSync(join(repo, ".git"), { recursive: true });
  mkdirSync(join(sub, ".claude"), { recursive: true });
  mkdirSync(join(repo, ".claude"));
  mkdirSync(join(root.path, ".claude"));
  expect(answeringHooks(sub).PermissionRequest).toEqual([]);
  writeFileSync(join(sub, ".claude", "settings.json"), JSON.stringify({ hooks: { PreToolUse: HOOK.hooks.PermissionRequest, PermissionRequest: [] } }));
  writeFileSync(join(repo, ".claude", "settings.local.json"), JSON.stringify(HOOK));
  // Above the repository's root: not the project's.
  writeFileSync(join(root.path, ".claude", "settings.json"), JSON.stringify(HOOK));
  expect(answeringHooks(sub).PermissionRequest).toEqual([join(repo, ".claude", "settings.local.json")]);
  // Each question by its own hook: none of these files has an Elicitation hook.
  expect(answeringHooks(sub).Elicitation).toEqual([]);
  writeFileSync(join(sub, ".claude", "settings.local.json"), JSON.stringify({ hooks: { Elicitation: [{ hooks: [{ type: "command", command: "true" }] }] } }));
  writeFileSync(join(repo, ".claude", "settings.json"), JSON.stringify({ hooks: { ElicitationResult: [{ hooks: [{ type: "command", command: "true" }] }] } }));
  expect(answeringHooks(sub).Elicitation).toEqual([join(sub, ".claude", "settings.local.json"), join(repo, ".claude", "settings.json")]);
});

test("a settings file that does not parse, or is not a regular file, counts: it is not trusted to leave the prompt to the person", () => {
  using root = tempDir();
  mkdirSync(join(root.path, ".git"));
  mkdirSync(join(root.path, ".claude", "settings.local.json"), { recursive: true });
  writeFileSync(join(root.path, ".claude", "settings.json"), '{"hooks": {');
  expect(answeringHooks(root.path).PermissionRequest).toEqual([join(root.path, ".claude", "settings.json"), join(root.path, ".claude", "settings.local.json")]);
});

test("outside a repository, the working directory alone", () => {
  using root = tempDir();
  const dir = join(root.path, "work");
  mkdirSync(join(dir, ".claude"), { recursive: true });
  mkdirSync(join(root.path, ".claude"));
  writeFileSync(join(root.path, ".claude", "settings.json"), JSON.stringify(HOOK));
  expect(answeringHooks(dir).PermissionRequest).toEqual([]);
  writeFileSync(join(dir, ".claude", "settings.json"), JSON.stringify(HOOK));
  expect(answeringHooks(dir).PermissionRequest).toEqual([join(dir, ".claude", "settings.json")]);
});
