import { expect, test } from "bun:test";
import { expandString, type ExpansionSyntax } from "../../src/wrap/adapters/expand.ts";
import type { AgentContext } from "../../src/wrap/adapters/index.ts";

const ctx: AgentContext = { home: "/home/zoë", cwd: "/home/zoë/src/app", env: { TOKEN: "t0k", EMPTY: "" }, platform: "linux" };
const expand = (value: string, syntax: ExpansionSyntax) => {
  const warnings = new Set<string>();
  return { value: expandString(value, syntax, ctx, warnings), warnings: [...warnings] };
};

test.each<[ExpansionSyntax, string, string, string[]]>([
  // Claude Code: ${VAR} and ${VAR:-default}; a set variable wins even when empty.
  ["claude-code", "Bearer ${TOKEN}", "Bearer t0k", []],
  ["claude-code", "${MISSING:-fallback}/x", "fallback/x", []],
  ["claude-code", "${EMPTY:-fallback}", "", []],
  ["claude-code", "${TOKEN:-unused}", "t0k", []],
  ["claude-code", "${MISSING}", "${MISSING}", ["${MISSING} is not set and has no default: Claude Code will start the server with it unexpanded"]],
  ["claude-code", "${env:TOKEN}", "${env:TOKEN}", ["${env:TOKEN} is not set and has no default: Claude Code will start the server with it unexpanded"]],
  ["claude-code", "$TOKEN and $$", "$TOKEN and $$", []],
  // Cursor: ${env:NAME} and the workspace variables.
  ["cursor", "${env:TOKEN}", "t0k", []],
  ["cursor", "${env:MISSING}", "", ["${env:MISSING} is not set: it expands to an empty string"]],
  ["cursor", "${userHome}${/}bin:${workspaceFolder}:${workspaceFolderBasename}", "/home/zoë/bin:/home/zoë/src/app:app", []],
  ["cursor", "${TOKEN}", "${TOKEN}", []],
  // VS Code: the same, and ${input:…} / ${command:…} left for VS Code to ask.
  ["vscode", "${input:api-key}", "${input:api-key}", ["${input:api-key} is resolved by VS Code when the server starts: left as written"]],
  ["vscode", "${command:pick}", "${command:pick}", ["${command:pick} is resolved by VS Code when the server starts: left as written"]],
  ["vscode", "${workspaceFolder}/tools", "/home/zoë/src/app/tools", []],
  // Windsurf: ${env:VAR} only.
  ["windsurf", "${env:TOKEN}", "t0k", []],
  ["windsurf", "${workspaceFolder}", "${workspaceFolder}", []],
  // Gemini CLI: $VAR, ${VAR}, ${VAR:-default}; an unset one stays as written.
  ["gemini", "$TOKEN-${TOKEN}-${MISSING:-d}-${EMPTY:-d}", "t0k-t0k-d-", []],
  ["gemini", "$MISSING/x", "$MISSING/x", ["$MISSING is not set: Gemini CLI will start the server with it unexpanded"]],
  // Qwen Code: $VAR and ${VAR}, no defaults.
  ["qwen", "${TOKEN}/$TOKEN", "t0k/t0k", []],
  ["qwen", "${MISSING:-d}", "${MISSING:-d}", ["${MISSING:-d} is not set: Qwen Code will start the server with it unexpanded"]],
  // Kiro: ${VAR}.
  ["kiro", "Bearer ${TOKEN} $TOKEN", "Bearer t0k $TOKEN", []],
  ["kiro", "${MISSING}", "${MISSING}", ["${MISSING} is not set: Kiro will start the server with it unexpanded"]],
  // opencode: {env:VAR}; an unset one is empty.
  ["opencode", "{env:TOKEN}/${TOKEN}", "t0k/${TOKEN}", []],
  ["opencode", "x{env:MISSING}", "x", ["{env:MISSING} is not set: it expands to an empty string"]],
  // Claude Desktop, Zed, Codex, Copilot, goose, Cline, Amp, Junie and custom configs are literal.
  ["none", "${TOKEN} ${env:TOKEN}", "${TOKEN} ${env:TOKEN}", []],
])("%s: %s → %s", (syntax, input, value, warnings) => {
  expect(expand(input, syntax)).toEqual({ value, warnings });
});
