import { homedir } from "node:os";
import type { ThoughtGateConfig } from "../core/config/schema.ts";
import { locateInYaml } from "../core/config/yaml.ts";
import { messageOf, usageError } from "../core/errors.ts";
import { compileGlob } from "../core/glob.ts";
import { placeOf } from "../core/project.ts";
import { didYouMean } from "../core/suggest.ts";
import { showInvisible } from "../core/visible-text.ts";
import { catalogHint } from "../governance/definitions/annotation-catalog.ts";
import { explainTools, type ListedTool } from "../governance/engine/explain.ts";
import type { PolicyInForce } from "../governance/engine/policy.ts";
import { inspectServer } from "../mcp/inspect.ts";
import { AGENT_TYPES, discover, effectiveEntries, isAgentType } from "../wrap/adapters/index.ts";

/** How long `--explain` waits for each answer of a server it starts. */
const SERVER_TIMEOUT_MS = 30_000;

/**
 * A server to explain: its id (the config's name for it, as `wrap` gives the shim), how to start it,
 * and its program as the shim knows it (the command as the config writes it, `${VAR}`s unexpanded:
 * what a rule written by "always allow" names).
 */
export type ServerToExplain = { id: string; command: string[]; program: string[]; env?: Record<string, string> } | { id: string; skipped: string };

/** The servers an agent's configuration names, in every scope `wrap` would rewrite. */
export function agentServers(agent: string): ServerToExplain[] {
  if (!isAgentType(agent) || agent === "custom") {
    throw usageError(`--agent: expected one of ${AGENT_TYPES.filter((a) => a !== "custom").join("|")}, got ${JSON.stringify(agent)}`);
  }
  const ctx = { home: homedir(), cwd: process.cwd(), env: process.env, platform: process.platform };
  return effectiveEntries(discover(agent, ctx)).map((entry) => {
    if (!entry.governed) return { id: entry.name, skipped: `not governed by wrap (${entry.reason ?? entry.status})` };
    if (entry.transport === "remote" || !entry.effective) return { id: entry.name, skipped: "a remote server: not started here (its tools are decided the same way once listed)" };
    return { id: entry.name, command: [entry.effective.command, ...entry.effective.args], program: [entry.command ?? "", ...entry.args], env: entry.effective.env };
  });
}

/** `--server "CMD ARGS"`: split as a shell would split plain words and quoted ones (no expansion). */
export function serverFromFlag(text: string, id: string): ServerToExplain {
  const words: string[] = [];
  const pattern = /"((?:[^"\\]|\\.)*)"|'([^']*)'|(\S+)/g;
  for (const match of text.matchAll(pattern)) words.push(match[1]?.replace(/\\(.)/g, "$1") ?? match[2] ?? match[3] ?? "");
  if (words.length === 0) throw usageError("--server is empty: give the command that starts the server");
  return { id, command: words, program: words };
}

/**
 * Start each server, list its tools, stop it, and say what each tool will get and why under the
 * policy in force. A server that cannot be started or listed is one line; the others are still
 * explained.
 */
export async function explainServers(policy: PolicyInForce, servers: ServerToExplain[]): Promise<string[]> {
  const place = placeOf(process.cwd());
  const lines: string[] = [`what each tool will get (the session's project: ${place.project}):`];
  if (servers.length === 0) lines.push("  (the configuration names no server)");
  for (const server of servers) {
    if ("skipped" in server) {
      lines.push("", `server ${server.id}: ${server.skipped}`);
      continue;
    }
    let tools: ListedTool[];
    try {
      const report = await inspectServer({ command: server.command, timeoutMs: SERVER_TIMEOUT_MS, ...(server.env ? { env: server.env } : {}) });
      tools = report.tools.map((tool) => {
        const declared = (tool.definition as { annotations?: unknown }).annotations;
        if (declared !== null && typeof declared === "object") return { name: tool.name, annotations: declared as ListedTool["annotations"] };
        const hint = catalogHint(tool.definition);
        return hint ? { name: tool.name, annotations: hint.annotations, annotationSource: hint.source } : { name: tool.name, annotations: undefined };
      });
    } catch (error) {
      lines.push("", `server ${server.id}: could not be listed: ${messageOf(error)}`);
      continue;
    }
    lines.push("", `server ${server.id} (${server.command.join(" ")}): ${tools.length} tool${tools.length === 1 ? "" : "s"}`, ...explainTools(policy, server.id, tools, place, { command: server.program, url: null }));
  }
  // Names and messages come from the servers: shown escaped, so nothing in them drives the terminal.
  return lines.map(showInvisible);
}

/** A server an agent's configuration names: its id and its command line as written. */
export type ConfiguredServer = { id: string; commandLine: string };

/**
 * The servers of every agent configuration `wrap` can see from here (user and project scopes),
 * read by wrap's own adapters. An agent whose files cannot be read adds none: this only feeds a
 * warning, never a decision.
 */
export function serversOnMachine(): ConfiguredServer[] {
  const ctx = { home: homedir(), cwd: process.cwd(), env: process.env, platform: process.platform };
  const servers = new Map<string, string>();
  for (const agent of AGENT_TYPES) {
    if (agent === "custom") continue;
    try {
      for (const file of discover(agent, ctx)) {
        for (const entry of file.entries) servers.set(entry.name, [entry.command ?? entry.line ?? "", ...entry.args].join(" "));
      }
    } catch {
      // One adapter's failure is doctor's to report; the others' servers still count.
    }
  }
  return [...servers].map(([id, commandLine]) => ({ id, commandLine })).sort((a, b) => a.id.localeCompare(b.id));
}

/**
 * A rule whose `source:` matches none of the servers the agents on this machine name never takes
 * effect (a server is known by its name in the agent's config, not by its package: `fs`, not
 * `filesystem`): one warning per rule, with the id meant, by spelling or else by the one server
 * whose command names the word. Nothing is said when no agent configuration names any server.
 */
export function sourcesNamingNoServer(config: ThoughtGateConfig, file: string, text: string, servers: readonly ConfiguredServer[]): string[] {
  if (servers.length === 0) return [];
  const ids = servers.map((server) => server.id);
  return config.governance.rules.flatMap((rule, i) => {
    if (rule.source === undefined) return [];
    const glob = compileGlob(rule.source);
    if (ids.some((id) => glob.test(id))) return [];
    const place = locateInYaml(text, ["governance", "rules", i, "source"]);
    const where = place ? `${file}:${place.line}:${place.column}: ` : `${file}: `;
    const shown = ids.length > 12 ? `${ids.slice(0, 12).join(", ")}, …` : ids.join(", ");
    const byCommand = servers.filter((server) => server.commandLine.includes(rule.source as string));
    const meant = didYouMean(rule.source, ids) || (byCommand.length === 1 ? ` (did you mean "${byCommand[0]?.id}"? its command names ${rule.source})` : "");
    return [`warning: ${where}governance.rules[${i}].source: "${rule.source}" names no MCP server in the agent configurations found here (${shown})${meant}; the rule never applies`];
  });
}
