/**
 * The agent config corpus in test/fixtures/configs/<agent>/: `home/` is copied to a temporary
 * home and `project/` to a project directory inside it with a non-ASCII name; `@@PROJECT@@` in
 * any file becomes that directory's path (Claude Code keys local servers by it).
 */
import { cpSync, existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { AgentContext, ConfigFile } from "../../src/wrap/adapters/index.ts";
import { AGENT_TYPES } from "../../src/wrap/adapters/types.ts";

export const CORPUS = join(import.meta.dir, "..", "fixtures", "configs");
/** Every agent `wrap` knows has a corpus. */
export const CORPUS_AGENTS = AGENT_TYPES;

/** One line per entry, what a user reads in the coverage table. */
export const summary = (files: ConfigFile[]) =>
  files.flatMap((file) => file.entries).map((entry) => {
    const shadow = entry.shadowedBy ? ` (shadowed by ${entry.shadowedBy.scope})` : "";
    const off = entry.disabled === undefined ? "" : ` (disabled by ${entry.disabled})`;
    return `${entry.scope} ${entry.name}: ${entry.governed ? "governed" : entry.status}${off}${shadow}`;
  });

export type AgentConfigFixture = Disposable & { ctx: AgentContext; home: string; project: string };

export function agentConfigFixture(agent: string, env: Record<string, string> = {}): AgentConfigFixture {
  const root = mkdtempSync(join(tmpdir(), "thoughtgate-configs-"));
  const home = join(root, "home");
  const project = join(home, "src", "projet-été");
  const source = join(CORPUS, agent);
  cpSync(join(source, "home"), home, { recursive: true });
  if (existsSync(join(source, "project"))) cpSync(join(source, "project"), project, { recursive: true });
  for (const file of filesUnder(root)) {
    const text = readFileSync(file, "utf8");
    if (text.includes("@@PROJECT@@")) writeFileSync(file, text.replaceAll("@@PROJECT@@", project));
  }
  return {
    ctx: { home, cwd: project, env: { HOME: home, ...env }, platform: "linux" },
    home,
    project,
    [Symbol.dispose]: () => rmSync(root, { recursive: true, force: true }),
  };
}

function filesUnder(dir: string): string[] {
  return readdirSync(dir, { recursive: true, withFileTypes: true })
    .filter((entry) => entry.isFile())
    .map((entry) => join(entry.parentPath, entry.name));
}
