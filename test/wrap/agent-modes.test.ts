import { describe, expect, test } from "bun:test";
import { agentCanAsk, agentScreen } from "../../src/wrap/agent-modes.ts";

describe("which agent modes can put an approval prompt in front of a person", () => {
  test("the modes that run one prompt and answer every form unseen cannot; interactive ones can", () => {
    const cases: Array<[Parameters<typeof agentCanAsk>[0], string[], boolean]> = [
      ["claude-code", ["claude"], true],
      ["claude-code", ["claude", "-p", "do it"], false],
      ["claude-code", ["claude", "--print", "do it", "--mcp-config", "x.json"], false],
      // After `--` the words are the prompt's, not options.
      ["claude-code", ["claude", "--", "-p"], true],
      ["codex", ["codex"], true],
      ["codex", ["codex", "exec", "fix it"], false],
      ["codex", ["codex", "--model", "o4", "e", "fix it"], false],
      ["codex", ["codex", "resume"], true],
      ["opencode", ["opencode"], true],
      ["opencode", ["opencode", "run", "hi"], false],
      ["gemini", ["gemini", "-p", "hi"], false],
      ["qwen", ["qwen", "--prompt=hi"], false],
      ["copilot", ["copilot", "--prompt", "hi"], false],
      ["copilot", ["copilot"], true],
      ["zed", ["zed", "-p"], true],
    ];
    expect(cases.map(([agent, command]) => agentCanAsk(agent, command))).toEqual(cases.map(([, , expected]) => expected));
  });
});

describe("what an agent does with the terminal wrap shares with it", () => {
  test("TUIs own it, print modes print and exit, editors and custom agents leave it alone", () => {
    const cases: Array<[Parameters<typeof agentScreen>[0], string[], ReturnType<typeof agentScreen>]> = [
      ["claude-code", ["claude"], "owns"],
      ["claude-code", ["claude", "-p", "do it"], "prints"],
      ["codex", ["codex"], "owns"],
      ["codex", ["codex", "exec", "fix it"], "prints"],
      ["opencode", ["opencode"], "owns"],
      ["opencode", ["opencode", "run", "hi"], "prints"],
      ["gemini", ["gemini"], "owns"],
      ["amp", ["amp"], "owns"],
      ["cursor", ["cursor-agent"], "owns"],
      ["cursor", ["cursor", "."], "none"],
      ["kiro", ["kiro-cli"], "owns"],
      ["kiro", ["kiro", "."], "none"],
      ["vscode", ["code", "."], "none"],
      ["zed", ["zed"], "none"],
      ["custom", ["./my-agent"], "none"],
    ];
    expect(cases.map(([agent, command]) => agentScreen(agent, command))).toEqual(cases.map(([, , expected]) => expected));
  });
});
