/**
 * opencode's hook is a plugin: a JavaScript module whose `tool.execute.before` runs before every
 * tool call (its own and its MCP servers'), with the tool's id and arguments, in opencode's own
 * process; a plugin that throws refuses the call, its message going to the model as the tool's
 * result (measured with opencode 1.18.33). ThoughtGate's plugin runs `thoughtgate hook opencode`
 * with the call as JSON and lets the call run only on an answer of "allow" (or "none": a tool its
 * MCP server's shim decides); a refusal, a crash, no answer in time or an answer it cannot read
 * throws, with one line saying why (docs/governance.md, "Built-in tools").
 *
 * Where opencode 1.18.33 takes plugins from (its config loader, read in the binary and run): every
 * `plugin` list of every config it merges, and every `{plugin,plugins}/*.{ts,js}` file of its
 * config directories (global, the project's `.opencode` directories, `~/.opencode`,
 * `$OPENCODE_CONFIG_DIR`); the lists are appended, never replaced, and deduplicated by file URL for
 * a file (by package name for a package), so a repository's config or plugin can add plugins but
 * can neither remove ThoughtGate's nor stand in for it. `--pure` (or `OPENCODE_PURE`) turns every
 * one off: wrap says so (opencodePluginsOff).
 *
 * - `wrap` gives the plugin for the session only: the file is in the session directory (the
 *   agent's tools may not write ThoughtGate's state: the default policy's self-protection), named in
 *   `OPENCODE_CONFIG_CONTENT` on the agent's environment (merged into the user's own value), which
 *   opencode reads after every config file and directory, so the plugin runs after a repository's;
 *   nothing of the user's is written.
 * - `enroll opencode` writes it to `$XDG_CONFIG_HOME/opencode/plugins/thoughtgate.js` for every
 *   later run; `unenroll opencode` removes it (and leaves a file changed since, saying so).
 */
import { mkdirSync, readFileSync, rmSync } from "node:fs";
import { dirname, join } from "node:path";
import { pathToFileURL } from "node:url";
import { writeFileAtomic } from "../core/atomic-write.ts";
import { messageOf, ThoughtGateError } from "../core/errors.ts";
import { xdgConfigHome } from "./adapters/config-dirs.ts";
import type { AgentContext } from "./adapters/types.ts";

/** How long the plugin waits for the hook: the hook blocks the call itself before (commands/hook.ts, HOOK_DEADLINE_MS). */
const PLUGIN_TIMEOUT_MS = 600_000;

/** The plugin's text: the binary it runs is written into it. */
function opencodePluginSource(binary: string): string {
  return `// ThoughtGate's opencode plugin: every tool call goes to \`thoughtgate hook opencode\` first.
// Written by thoughtgate (wrap, enroll); \`thoughtgate unenroll opencode\` removes it.
import { spawn } from "node:child_process";

const BINARY = ${JSON.stringify(binary)};
const TIMEOUT_MS = ${PLUGIN_TIMEOUT_MS};

function blocked(why) {
  return new Error("ThoughtGate blocked this call: " + why);
}

// Nothing that runs after the decision (another plugin) may change what runs.
function freeze(value) {
  if (value === null || typeof value !== "object" || Object.isFrozen(value)) return;
  Object.freeze(value);
  for (const item of Object.values(value)) freeze(item);
}

function ask(call) {
  return new Promise((resolve) => {
    let child;
    try {
      child = spawn(BINARY, ["hook", "opencode"], { stdio: ["pipe", "pipe", "pipe"] });
    } catch (error) {
      resolve({ failed: "thoughtgate could not be started (" + (error && error.message) + "); run thoughtgate doctor" });
      return;
    }
    let out = "";
    let err = "";
    const timer = setTimeout(() => {
      child.kill("SIGKILL");
      resolve({ failed: "no answer from thoughtgate within " + TIMEOUT_MS / 1000 + " s" });
    }, TIMEOUT_MS);
    child.stdout.on("data", (chunk) => (out += chunk));
    child.stderr.on("data", (chunk) => (err += chunk));
    child.on("error", (error) => {
      clearTimeout(timer);
      resolve({ failed: "thoughtgate could not be started (" + (error && error.message) + "); run thoughtgate doctor" });
    });
    child.on("close", (code) => {
      clearTimeout(timer);
      resolve({ code, out, err });
    });
    child.stdin.on("error", () => {});
    child.stdin.end(JSON.stringify(call));
  });
}

export const ThoughtGate = async ({ directory }) => ({
  "tool.execute.before": async (input, output) => {
    const args = output && output.args !== null && typeof output.args === "object" ? output.args : {};
    const result = await ask({ hook_event_name: "tool.execute.before", tool_name: input.tool, tool_input: args, cwd: directory, session_id: input.sessionID, tool_use_id: input.callID });
    if (result.failed) throw blocked(result.failed);
    if (result.code !== 0) {
      const line = result.err.trim().split("\\n")[0];
      throw new Error(line || "ThoughtGate blocked this call: thoughtgate hook exited with " + result.code);
    }
    let answer;
    try {
      answer = JSON.parse(result.out);
    } catch {
      throw blocked("its answer could not be read");
    }
    if (answer && (answer.decision === "allow" || answer.decision === "none")) {
      freeze(args);
      return;
    }
    if (answer && answer.decision === "deny" && typeof answer.reason === "string") throw new Error(answer.reason);
    throw blocked("its answer could not be read");
  },
});
`;
}

/** Flags and settings under which opencode loads no plugin: the name of the one found, or null. */
export function opencodePluginsOff(command: readonly string[], env: NodeJS.ProcessEnv): string | null {
  if (command.includes("--pure")) return "--pure";
  const pure = env.OPENCODE_PURE?.trim().toLowerCase();
  return pure === "1" || pure === "true" ? "OPENCODE_PURE" : null;
}

/**
 * The agent's environment for a wrap session: the plugin written into the session directory and
 * named in `OPENCODE_CONFIG_CONTENT`, after the plugins of the user's own value of it (kept).
 */
export function opencodeSessionEnv(binary: string, sessionDir: string, env: NodeJS.ProcessEnv): Record<string, string> {
  const file = join(sessionDir, "opencode-plugin.js");
  writeFileAtomic(file, opencodePluginSource(binary), { mode: 0o600 });
  const given = env.OPENCODE_CONFIG_CONTENT;
  let config: Record<string, unknown> = {};
  if (given !== undefined && given.trim() !== "") {
    try {
      const json: unknown = JSON.parse(given);
      if (json === null || typeof json !== "object" || Array.isArray(json)) throw new Error("not a JSON object");
      config = json as Record<string, unknown>;
    } catch (error) {
      throw new ThoughtGateError("CONFIG", `OPENCODE_CONFIG_CONTENT: ${messageOf(error)}; opencode was not started (ThoughtGate's plugin could not be added to it)`);
    }
  }
  const plugins = Array.isArray(config.plugin) ? config.plugin : [];
  return { OPENCODE_CONFIG_CONTENT: JSON.stringify({ ...config, plugin: [...plugins, pathToFileURL(file).href] }) };
}

/** Where `enroll opencode` keeps the plugin: a file of opencode's global plugin directory. */
export function enrolledPluginPath(ctx: Pick<AgentContext, "env" | "home">): string {
  return join(xdgConfigHome(ctx as AgentContext), "opencode", "plugins", "thoughtgate.js");
}

/** Write the plugin for every later run of opencode. */
export function enrollOpencodePlugin(ctx: AgentContext, binary: string): { path: string; outcome: "rewritten" | "joined" } | { path: string; problem: string } {
  const path = enrolledPluginPath(ctx);
  const text = opencodePluginSource(binary);
  try {
    if (readOrNull(path) === text) return { path, outcome: "joined" };
    mkdirSync(dirname(path), { recursive: true });
    writeFileAtomic(path, text, { mode: 0o644 });
    return { path, outcome: "rewritten" };
  } catch (error) {
    return { path, problem: `cannot be written (${messageOf(error)}); opencode's own tools are not governed in plain runs` };
  }
}

/** What `unenroll opencode` did with the plugin file. */
export type PluginRemoval = { path: string; status: "removed" | "absent" | "changed" | "failed"; error?: string };

/** Remove the enrolled plugin when it still holds what enroll wrote (with any binary path); a file changed since is left, and said. */
export function unenrollOpencodePlugin(ctx: AgentContext): PluginRemoval {
  const path = enrolledPluginPath(ctx);
  const text = readOrNull(path);
  if (text === null) return { path, status: "absent" };
  if (!isOurPlugin(text)) return { path, status: "changed" };
  try {
    rmSync(path);
    return { path, status: "removed" };
  } catch (error) {
    return { path, status: "failed", error: messageOf(error) };
  }
}

/** Whether the enrolled plugin is there as enroll writes it for `binary` (doctor), missing, or changed. */
export function enrolledPluginState(ctx: AgentContext, binary: string): "ok" | "missing" | "changed" {
  const text = readOrNull(enrolledPluginPath(ctx));
  if (text === null) return "missing";
  return text === opencodePluginSource(binary) ? "ok" : "changed";
}

/** The plugin text as some thoughtgate binary wrote it. */
function isOurPlugin(text: string): boolean {
  const binary = /^const BINARY = (".*");$/m.exec(text)?.[1];
  if (binary === undefined) return false;
  try {
    return text === opencodePluginSource(JSON.parse(binary) as string);
  } catch {
    return false;
  }
}

function readOrNull(path: string): string | null {
  try {
    return readFileSync(path, "utf8");
  } catch {
    return null;
  }
}
