/**
 * The agent of the wrap start-up figures, compiled by the bench: `launch-agent CONFIG [--bench-run=ID]`.
 * Its first act is one synchronous write of `launched` to stdout, which the bench times from its
 * side of the pipe (one clock: no timestamps compared across processes). Only then does it look
 * at what it was started with, so the bench can check that wrap really ran it against a rewritten
 * config: `active=<THOUGHTGATE_ACTIVE> shimmed=<entries whose args start with "shim">`. It imports
 * only node:fs, a builtin, so no module is loaded before the first write.
 */
import { readFileSync, writeSync } from "node:fs";

writeSync(1, "launched\n");
const [configPath] = process.argv.slice(2);
let shimmed = -1;
if (configPath) {
  // The bench writes plain JSON configs; wrap keeps them JSON.
  const config = JSON.parse(readFileSync(configPath, "utf8")) as { mcpServers?: Record<string, { args?: unknown }> };
  shimmed = Object.values(config.mcpServers ?? {}).filter((entry) => Array.isArray(entry.args) && entry.args[0] === "shim").length;
}
writeSync(1, `active=${process.env.THOUGHTGATE_ACTIVE ?? ""} shimmed=${shimmed}\n`);
