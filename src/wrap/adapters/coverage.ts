import { relative, sep } from "node:path";
import { isPlacingVariable } from "../../core/user-environment.ts";
import type { ConfigFile, ServerEntry } from "./types.ts";

/**
 * The table wrap prints before it launches the agent: one line per server with its scope, its
 * file and whether it runs through the shim, and why not. Then one line per warning and per file
 * that cannot be used. Plain text: `src/commands/` decides where it goes.
 */
export function renderCoverage(files: readonly ConfigFile[], where: { home: string; cwd: string }): string {
  const entries = files.flatMap((file) => file.entries);
  const show = (path: string) => displayPath(path, where);
  const rows = entries.map((entry) => [entry.name, entry.scope, show(entry.file), status(entry, show)]);
  const lines = rows.length === 0 ? ["no MCP servers found"] : table([["SERVER", "SCOPE", "FILE", "GOVERNED"], ...rows]);
  for (const entry of entries) for (const warning of entry.warnings) lines.push(`warning: ${entry.name}: ${warning}`);
  for (const file of files) {
    for (const warning of file.warnings) lines.push(`warning: ${show(file.path)}: ${warning}`);
    for (const problem of file.problems) lines.push(`problem: ${show(file.path)} ${problem}; wrap leaves it untouched`);
  }
  return lines.join("\n") + "\n";
}

function status(entry: ServerEntry, show: (path: string) => string): string {
  if (entry.status === "wrapped") return `yes (${entry.reason ?? "runs through thoughtgate already"})`;
  if (!entry.governed) return `no: ${entry.reason ?? entry.status}`;
  const notes = [
    // Rewritten with its off switch kept: if the user turns it on during the session, the shim runs.
    entry.disabled === undefined ? undefined : `disabled by ${entry.disabled}: governed if enabled mid-session`,
    entry.shadowedBy ? `the ${entry.shadowedBy.scope} entry in ${show(entry.shadowedBy.file)} takes precedence` : undefined,
    placing(entry),
  ].filter((note) => note !== undefined);
  return notes.length === 0 ? "yes" : `yes (${notes.join("; ")})`;
}

/** An entry whose env would move its shim: the shim ignores those variables (core/user-environment.ts), and the table says so. */
function placing(entry: ServerEntry): string | undefined {
  const keys = Object.keys(entry.env).filter(isPlacingVariable).sort();
  return keys.length === 0 ? undefined : `its env's ${keys.join(", ")} ignored by the shim: it follows your session and policy`;
}

function table(rows: string[][]): string[] {
  // Columns by display width: a server named in CJK takes two cells per character.
  const widths = rows[0]?.map((_, column) => Math.max(...rows.map((row) => Bun.stringWidth(row[column] ?? "")))) ?? [];
  const pad = (cell: string, width: number) => cell + " ".repeat(Math.max(0, width - Bun.stringWidth(cell)));
  return rows.map((row) => row.map((cell, column) => (column === row.length - 1 ? cell : pad(cell, widths[column] ?? 0))).join("  "));
}

/** `./.mcp.json` inside the working directory, `~/.claude.json` inside home, else absolute. */
function displayPath(path: string, { home, cwd }: { home: string; cwd: string }): string {
  const inside = (dir: string) => {
    const rel = relative(dir, path);
    return rel !== "" && !rel.startsWith("..") && !rel.startsWith(sep) ? rel : undefined;
  };
  // With the working directory at or above home, ~/ says more than ./ does.
  const cwdHoldsHome = !relative(cwd, home).startsWith("..");
  const inCwd = inside(cwd);
  if (inCwd !== undefined && !cwdHoldsHome) return `.${sep}${inCwd}`;
  const inHome = inside(home);
  return inHome !== undefined ? `~${sep}${inHome}` : path;
}
