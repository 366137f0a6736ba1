import { resolve } from "node:path";
import { ThoughtGateError } from "../core/errors.ts";
import type { AgentType, ConfigFile } from "./adapters/index.ts";

export type CoverageOptions = {
  agent: AgentType;
  /** `--config-path`, resolved against the working directory. */
  configPath: string | undefined;
  /** `--allow-ungoverned`: run the agent even when nothing (or not everything) can be governed. */
  allowUngoverned: boolean;
  /** The agent's own tools are governed through its hooks (agent-hooks.ts): an agent with no MCP server is still governed. */
  hooksGovern?: boolean;
};

/**
 * Before the agent starts: would it run ungoverned without the user knowing? A file the user named
 * (`--config-path`) that cannot be used is an error, like a policy file that was asked for. A file
 * the agent reads that wrap cannot edit safely (it does not parse, it is a FIFO, …) would leave its
 * servers ungoverned: an error. A remote server the agent will connect to that wrap cannot govern
 * (the old HTTP+SSE transport, an agent whose remote entries wrap does not rewrite) is the same:
 * the agent would reach it around the shim, so it is an error, named. No server to govern at all:
 * an error. These are allowed with `--allow-ungoverned`, which returns one warning line to print
 * instead. Throws a CONFIG error
 * whose one line names the file and the reason; the agent is then never started.
 */
export function checkCoverage(files: readonly ConfigFile[], options: CoverageOptions): string | null {
  if (options.configPath !== undefined) {
    const named = resolve(options.configPath);
    const file = files.find((f) => resolve(f.path) === named);
    const why = !file || !file.exists ? "no such file" : file.problems[0] ?? (file.text.trim() === "" ? "is empty" : file.entries.length === 0 ? `holds no MCP servers for ${options.agent}` : null);
    if (why !== null) throw new ThoughtGateError("CONFIG", `${named}: ${why} (given by --config-path)`);
  }
  const unusable = files.filter((file) => file.exists && file.problems.length > 0);
  // An entry that runs through thoughtgate already (enrolled, another wrap's) is governed too.
  const governed = files.flatMap((file) => file.entries).filter((entry) => entry.governed || entry.status === "wrapped");
  const reasons: string[] = [];
  for (const file of unusable) reasons.push(`${file.path} ${file.problems[0]}: its MCP servers would run ungoverned`);
  // A server the config turns off is not reached; one shadowed by another scope's entry neither.
  const remote = files.flatMap((file) => file.entries).filter((entry) => entry.status === "remote" && entry.disabled === undefined && !entry.shadowedBy);
  if (remote.length > 0) reasons.push(`the remote server${remote.length === 1 ? "" : "s"} ${remote.map((entry) => `"${entry.name}"`).join(", ")} would run ungoverned (see the table above)`);
  const unseen = files.flatMap((file) => file.entries).filter((entry) => entry.status === "refused");
  for (const entry of unseen) reasons.push(`"${entry.name}" (${entry.file}) is ${entry.reason ?? "started where wrap cannot rewrite it"}`);
  if (governed.length === 0 && options.hooksGovern !== true) reasons.push(`no MCP server of ${options.agent} can be governed (see the table above)`);
  if (reasons.length === 0) return null;
  if (options.allowUngoverned) return `thoughtgate: warning: --allow-ungoverned: ${reasons.join("; ")}`;
  throw new ThoughtGateError("CONFIG", `${reasons.join("; ")}; the agent was not started (fix it, or pass --allow-ungoverned to run it anyway)`);
}
