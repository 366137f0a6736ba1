/**
 * What wrap spends on a 1 MB `~/.claude.json`, in the bench process: `discover("claude-code")`
 * (which reads the file) and `rewrite` of each file with governed entries, as `runWrap` calls
 * them, then `restoreOwnedKeys` for a file Claude Code saved during the session. Each iteration
 * writes a fresh text first (the start count differs), and each timed call starts after a full
 * collection, as in a wrap process that has just started; the first iteration is reported apart,
 * since a real wrap makes these calls once, before the JIT has seen them. Every result is checked
 * outside the clock: the three stdio servers run the shim, everything else in the file is
 * unchanged, and the restore gives exactly the agent's file with the original servers.
 */
import { deepEqual } from "node:assert/strict";
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import type { JSONPath } from "jsonc-parser";
import { discover, rewrite, type AgentContext, type ServerEntry, type ShimCommand } from "../../src/wrap/adapters/index.ts";
import { restoreOwnedKeys } from "../../src/wrap/merge-owned-keys.ts";
import { shimCommandFor } from "../../src/wrap/shim-entry.ts";
import { agentSaves, claudeJson, claudeJsonText, GOVERNED_SERVERS, USER_SERVERS, type ClaudeJson } from "./claude-json.ts";
import { WRAP_PLAN } from "./plan.ts";

export type RewriteFigures = {
  bytes: number;
  projects: number;
  /** Owned JSON paths per rewrite (what restore gets). */
  owned: number;
  /** The first iteration, in a bench process that had not run this code before. */
  first: { discoverMs: number; rewriteMs: number; restoreMs: number };
  discoverMs: number[];
  rewriteMs: number[];
  /** discover + rewrite of the same iteration. */
  totalMs: number[];
  restoreMs: number[];
};

/** The shim command wrap itself writes (src/wrap/shim-entry.ts): the entry names its server, no session. */
function shimFor(binary: string): (entry: ServerEntry) => ShimCommand {
  return (entry) => shimCommandFor(binary, entry.name, entry);
}

function timed<T>(work: () => T): [T, number] {
  Bun.gc(true);
  const started = performance.now();
  const result = work();
  return [result, performance.now() - started];
}

export function measureRewrite(dir: string, binary: string): RewriteFigures {
  const home = join(dir, "rewrite-home");
  const project = join(home, "src", "projet-été");
  mkdirSync(project, { recursive: true });
  const ctx: AgentContext = { home, cwd: project, env: { HOME: home }, platform: "linux" };
  const configPath = join(home, ".claude.json");
  const config = claudeJson(project);
  const figures: RewriteFigures = {
    bytes: 0,
    projects: Object.keys(config.projects).length,
    owned: 0,
    first: { discoverMs: 0, rewriteMs: 0, restoreMs: 0 },
    discoverMs: [],
    rewriteMs: [],
    totalMs: [],
    restoreMs: [],
  };

  for (let i = 0; i <= WRAP_PLAN.rewrites; i++) {
    const original = claudeJsonText(config, 1000 + i);
    writeFileSync(configPath, original);
    const session = shimFor(binary);
    const [files, discoverMs] = timed(() => discover("claude-code", ctx));
    const [rewrites, rewriteMs] = timed(() =>
      files.filter((file) => file.entries.some((entry) => entry.governed)).map((file) => ({ file, ...rewrite(file.text, file.entries, session) })),
    );
    const [done, ...others] = rewrites;
    if (!done || others.length > 0 || done.file.path !== configPath) throw new Error(`expected one rewrite, of ${configPath}; got ${rewrites.map((r) => r.file.path).join(", ")}`);
    checkRewrite(original, done.text, binary);

    const saved = agentSaves(done.text, project, i);
    const [restored, restoreMs] = timed(() => restoreOwnedKeys(original, done.text, saved, done.owned as JSONPath[]));
    if (restored !== agentSaves(original, project, i)) throw new Error("restoreOwnedKeys did not give back the agent's file with the original servers");

    figures.bytes = Buffer.byteLength(original);
    figures.owned = done.owned.length;
    if (i === 0) {
      figures.first = { discoverMs, rewriteMs, restoreMs };
      continue;
    }
    figures.discoverMs.push(discoverMs);
    figures.rewriteMs.push(rewriteMs);
    figures.totalMs.push(discoverMs + rewriteMs);
    figures.restoreMs.push(restoreMs);
  }
  return figures;
}

/** The three stdio servers run the shim in front of their original command, the remote one `shim --url`; nothing else changed. */
function checkRewrite(original: string, rewritten: string, binary: string): void {
  const before = JSON.parse(original) as ClaudeJson;
  const after = JSON.parse(rewritten) as ClaudeJson & { mcpServers: Record<string, { command?: string; args?: string[] }> };
  const shimmed = Object.entries(after.mcpServers).filter(([, entry]) => entry.command === binary && entry.args?.[0] === "shim");
  if (shimmed.length !== GOVERNED_SERVERS) throw new Error(`${shimmed.length} servers run the shim after the rewrite, not ${GOVERNED_SERVERS}`);
  const sentry = after.mcpServers.sentry?.args ?? [];
  if (sentry[sentry.indexOf("--url") + 1] !== USER_SERVERS.sentry.url) throw new Error(`the remote server does not run shim --url ${USER_SERVERS.sentry.url}: ${JSON.stringify(after.mcpServers.sentry)}`);
  deepEqual({ ...after, mcpServers: null }, { ...before, mcpServers: null });
}
