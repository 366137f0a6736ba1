import { projectEscape } from "../config-path.ts";
import { amp } from "./amp.ts";
import { claudeCode } from "./claude-code.ts";
import { claudeDesktop } from "./claude-desktop.ts";
import { cline } from "./cline.ts";
import { codex } from "./codex.ts";
import { copilot } from "./copilot.ts";
import { cursor } from "./cursor.ts";
import { custom } from "./custom.ts";
import { gemini } from "./gemini.ts";
import { goose } from "./goose.ts";
import { junie } from "./junie.ts";
import { kiro } from "./kiro.ts";
import { opencode } from "./opencode.ts";
import { qwen } from "./qwen.ts";
import type { Adapter } from "./shared.ts";
import type { AgentContext, AgentType, ConfigFile, DiscoverOptions, ServerEntry } from "./types.ts";
import { vscode } from "./vscode.ts";
import { windsurf } from "./windsurf.ts";
import { zed } from "./zed.ts";

export const ADAPTERS: Record<AgentType, Adapter> = {
  "claude-desktop": claudeDesktop,
  "claude-code": claudeCode,
  cursor,
  vscode,
  windsurf,
  zed,
  codex,
  copilot,
  opencode,
  gemini,
  qwen,
  kiro,
  goose,
  cline,
  amp,
  junie,
  custom,
};

/**
 * Every config file `agent` may read its MCP servers from, existing or not, with their entries.
 * Reading never throws for a bad file: a file that cannot be used has `problems`, and its entries
 * (if any were read) are not governed, so wrap leaves it byte-identical. A project file that
 * resolves outside its project is such a file, whatever the agent (config-path.ts).
 */
export function discover(agent: AgentType, ctx: AgentContext, options: DiscoverOptions = {}): ConfigFile[] {
  const files = ADAPTERS[agent].discover(ctx, options);
  for (const file of files) {
    const escape = file.scope === "project" ? projectEscape(file.path, ctx.cwd) : undefined;
    if (escape) file.problems.unshift(escape);
    if (file.problems.length === 0) continue;
    for (const entry of file.entries) {
      if (!entry.governed) continue;
      entry.status = "file-problem";
      entry.governed = false;
      entry.reason = `the file ${file.problems[0]}: left untouched`;
    }
  }
  return files;
}

/** The entries the agent will start, after disabled ones and lower-precedence duplicates are set aside. */
export function effectiveEntries(files: readonly ConfigFile[]): ServerEntry[] {
  return files.flatMap((file) => file.entries).filter((entry) => !entry.shadowedBy && entry.disabled === undefined && entry.status !== "invalid");
}

export { detectAgent, isAgentType, isVsCodeInsiders, projectDir } from "./detect.ts";
export { renderCoverage } from "./coverage.ts";
export { rewrite } from "./rewrite.ts";
export { readMapFile } from "./shared.ts";
export type { Adapter } from "./shared.ts";
export * from "./types.ts";
