import { basename } from "node:path";
import type { AgentContext, CommandLine } from "./types.ts";

/**
 * Variable references as each agent resolves them when it starts a server. Used only to know what
 * the agent will really run (coverage table, double-wrap detection): the rewritten file keeps the
 * references as written, so the agent still resolves them itself and no secret reaches the disk.
 *
 * - `claude-code`: `${VAR}` and `${VAR:-default}` (Claude Code docs, "Environment variable expansion
 *   in .mcp.json"). A set variable wins even when empty; an unset one without a default stays as
 *   written and is reported , as Claude Code itself reports it.
 * - `cursor`, `vscode`: `${env:NAME}`, `${userHome}`, `${workspaceFolder}`,
 *   `${workspaceFolderBasename}`, `${pathSeparator}` / `${/}`; an unset `${env:NAME}` is empty.
 *   VS Code's `${input:…}` (asked for when the server starts), `${command:…}` and `${config:…}`
 *   cannot be known beforehand: left as written, with a warning.
 * - `windsurf`: `${env:NAME}`.
 * - `gemini`: `$VAR`, `${VAR}` and `${VAR:-default}` anywhere in the settings file (Gemini CLI's
 *   `resolveEnvVarsInString`); an unset one without a default stays as written.
 * - `qwen`: `$VAR` and `${VAR}` (Qwen Code's copy of it, without defaults).
 * - `kiro`: `${VAR}` (Kiro docs, "Environment variables"); an unset one stays as written.
 * - `opencode`: `{env:VAR}` (opencode docs, "Variables"); an unset one becomes an empty string.
 * - `none`: Claude Desktop, Zed, Codex, Copilot, goose, Cline, Amp, Junie and custom configs are
 *   taken literally.
 * Any other `${…}` stays as written.
 */
export type ExpansionSyntax = "claude-code" | "cursor" | "vscode" | "windsurf" | "gemini" | "qwen" | "kiro" | "opencode" | "none";

const REFERENCE = /\$\{([^}]+)\}/g;

/** `$VAR`, `${VAR}` and (Gemini CLI) `${VAR:-default}`, as Gemini CLI and Qwen Code read them. */
const GEMINI_REFERENCE = /\$(?:(\w+)|\{([^}]+?)(?::-([^}]*))?\})/g;
const QWEN_REFERENCE = /\$(?:(\w+)|\{([^}]+)\})/g;
const OPENCODE_REFERENCE = /\{env:([^}]+)\}/g;

const AGENT_NAMES: Partial<Record<ExpansionSyntax, string>> = { gemini: "Gemini CLI", qwen: "Qwen Code", kiro: "Kiro" };

export function expandString(value: string, syntax: ExpansionSyntax, ctx: AgentContext, warnings: Set<string>): string {
  if (syntax === "gemini" || syntax === "qwen") {
    if (!value.includes("$")) return value;
    return value.replace(syntax === "gemini" ? GEMINI_REFERENCE : QWEN_REFERENCE, (reference, bare?: string, braced?: string, fallback?: unknown) => {
      const name = bare ?? braced ?? "";
      const set = ctx.env[name];
      if (set !== undefined) return set;
      // Qwen's pattern has no default group: its third argument is the match's offset.
      if (syntax === "gemini" && typeof fallback === "string") return fallback;
      warnings.add(`${reference} is not set: ${AGENT_NAMES[syntax]} will start the server with it unexpanded`);
      return reference;
    });
  }
  if (syntax === "opencode") {
    if (!value.includes("{env:")) return value;
    return value.replace(OPENCODE_REFERENCE, (_, name: string) => {
      const set = ctx.env[name];
      if (set === undefined) warnings.add(`{env:${name}} is not set: it expands to an empty string`);
      return set ?? "";
    });
  }
  if (syntax === "kiro") {
    if (!value.includes("${")) return value;
    return value.replace(REFERENCE, (reference, name: string) => {
      const set = ctx.env[name];
      if (set !== undefined) return set;
      warnings.add(`${reference} is not set: Kiro will start the server with it unexpanded`);
      return reference;
    });
  }
  if (syntax === "none" || !value.includes("${")) return value;
  return value.replace(REFERENCE, (reference, body: string) => {
    if (syntax === "claude-code") {
      const split = body.indexOf(":-");
      const name = split < 0 ? body : body.slice(0, split);
      const set = ctx.env[name];
      if (set !== undefined) return set;
      if (split >= 0) return body.slice(split + 2);
      warnings.add(`\${${name}} is not set and has no default: Claude Code will start the server with it unexpanded`);
      return reference;
    }
    if (body.startsWith("env:")) {
      const name = body.slice(4);
      const set = ctx.env[name];
      if (set === undefined) warnings.add(`\${env:${name}} is not set: it expands to an empty string`);
      return set ?? "";
    }
    if (syntax === "windsurf") return reference;
    switch (body) {
      case "userHome":
        return ctx.home;
      case "workspaceFolder":
        return ctx.cwd;
      case "workspaceFolderBasename":
        return basename(ctx.cwd);
      case "pathSeparator":
      case "/":
        return "/";
    }
    if (syntax === "vscode" && /^(input|command|config):/.test(body)) {
      warnings.add(`${reference} is resolved by VS Code when the server starts: left as written`);
    }
    return reference;
  });
}

export function expandCommandLine(line: CommandLine, syntax: ExpansionSyntax, ctx: AgentContext, warnings: Set<string>): CommandLine {
  const expand = (value: string) => expandString(value, syntax, ctx, warnings);
  return {
    command: expand(line.command),
    args: line.args.map(expand),
    env: Object.fromEntries(Object.entries(line.env).map(([key, value]) => [key, expand(value)])),
  };
}
