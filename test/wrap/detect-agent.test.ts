import { expect, test } from "bun:test";
import { mkdirSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { detectAgent, isVsCodeInsiders, projectDir } from "../../src/wrap/adapters/detect.ts";

test.each([
  [["claude"], "claude-code"],
  [["/home/u/.local/bin/claude", "--continue"], "claude-code"],
  [["claude-code"], "claude-code"],
  [["/Applications/Claude.app/Contents/MacOS/Claude"], "claude-desktop"],
  [["open", "-a", "Claude"], "claude-desktop"],
  [["claude-desktop"], "claude-desktop"],
  [["cursor", "."], "cursor"],
  [["cursor-agent", "fix the tests"], "cursor"],
  [["/Applications/Cursor.app/Contents/MacOS/Cursor"], "cursor"],
  [["code", "."], "vscode"],
  [["code-insiders"], "vscode"],
  [["open", "-a", "/Applications/Visual Studio Code.app", "."], "vscode"],
  [["windsurf"], "windsurf"],
  [["zed", "~/src/app"], "zed"],
  [["zeditor"], "zed"],
  [["/Applications/Zed.app/Contents/MacOS/cli"], "zed"],
  [["npx", "claude"], null],
  [["vim"], null],
  [["open", "-a", "Safari"], null],
  [[], null],
])("%j → %s", (command, agent) => {
  expect(detectAgent(command)).toBe(agent as ReturnType<typeof detectAgent>);
});

test("VS Code Insiders is told apart", () => {
  expect([["code-insiders"], ["code"], ["open", "-a", "Visual Studio Code - Insiders"]].map(isVsCodeInsiders)).toEqual([true, false, true]);
});

test("an editor opened on a folder works in that folder; a CLI agent in the working directory", () => {
  const root = mkdtempSync(join(tmpdir(), "thoughtgate-project-"));
  try {
    mkdirSync(join(root, "app"));
    expect(projectDir("zed", ["zed", "--new", "app"], root)).toBe(join(root, "app"));
    expect(projectDir("vscode", ["code", "notes.md"], root)).toBe(root);
    expect(projectDir("claude-code", ["claude", "app"], root)).toBe(root);
    expect(projectDir("cursor", ["cursor-agent", "app"], root)).toBe(root);
    expect(projectDir("kiro", ["kiro", "app"], root)).toBe(join(root, "app"));
    expect(projectDir("kiro", ["kiro-cli", "app"], root)).toBe(root);
    // `opencode [project]`: only its first argument.
    expect(projectDir("opencode", ["opencode", "app"], root)).toBe(join(root, "app"));
    expect(projectDir("opencode", ["opencode", "run", "app"], root)).toBe(root);
  } finally {
    rmSync(root, { recursive: true, force: true });
  }
});
