/**
 * The exit codes README.md's table promises, and the `--help` every command prints, held against
 * the compiled binary.
 */
import { describe, expect, test } from "bun:test";
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { ROOT, tempDir } from "../support/harness.ts";
import { runBinary } from "../support/serve.ts";

/** The README's exit-code table: code (or "other") → its meaning. */
function readmeExitCodes(): Map<string, string> {
  const readme = readFileSync(join(ROOT, "README.md"), "utf8");
  const section = readme.slice(readme.indexOf("## Exit codes"));
  const rows = new Map<string, string>();
  for (const line of section.slice(0, section.indexOf("\n## ", 1)).split("\n")) {
    const cells = /^\| (\d+|other) \| (.+) \|$/.exec(line);
    if (cells?.[1] && cells[2]) rows.set(cells[1], cells[2]);
  }
  return rows;
}

type Case = { argv: string[]; expect: number; stderr?: RegExp; files?: Record<string, string> };

/** At least one case for every row of the table, each with the code that row says. */
const CASES: Record<string, Case[]> = {
  "0": [{ argv: ["--version"], expect: 0 }, { argv: ["wrap", "--help"], expect: 0 }],
  "1": [
    // No running session: "governance service unavailable", not a usage error.
    { argv: ["tasks"], expect: 1, stderr: /^\[error\] no running governance service found: start `thoughtgate wrap` or `thoughtgate serve`.*\n$/ },
    { argv: ["approve", "abc123", "--endpoint", "http://127.0.0.1:9"], expect: 1, stderr: /^\[error\] no running governance service found at http:\/\/127\.0\.0\.1:9 .*\n$/ },
    { argv: ["approve", "abc123", "--endpoint", "http://127.0.0.1:9", "--key", "k"], expect: 1, stderr: /^\[error\] cannot reach the governance service at http:\/\/127\.0\.0\.1:9 .*\n$/ },
    { argv: ["validate-config", "{dir}/missing.yaml"], expect: 1 },
    { argv: ["serve", "--thoughtgate-config", "{dir}/bad.yaml"], expect: 1, files: { "bad.yaml": "schema: 1\ngovernance: { defualts: {} }\n" }, stderr: /did you mean "defaults"/ },
  ],
  "2": [
    { argv: ["approv"], expect: 2 },
    { argv: ["wrap", "claude"], expect: 2 },
    { argv: ["doctor", "--jsn"], expect: 2 },
    { argv: ["approve"], expect: 2, stderr: /^\[error\] Missing required positional argument: TASK-ID\n\[info\] run `thoughtgate approve --help` for usage\n$/ },
    { argv: ["shim", "--profile", "staging", "--", "cat"], expect: 2 },
  ],
  other: [
    { argv: ["shim", "--events", "none", "--", "sh", "-c", "exit 7"], expect: 7 },
    { argv: ["arbiter", "--", "sh", "-c", "exit 5"], expect: 5 },
    { argv: ["wrap", "--agent-type", "custom", "--config-path", "{dir}/mcp.json", "--", "sh", "-c", "exit 3"], expect: 3, files: { "mcp.json": '{ "mcpServers": { "x": { "command": "true" } } }\n' } },
  ],
};

describe("exit codes: README.md's table, through the binary", () => {
  test("every row of the table has cases here, and nothing here is missing from the table", () => {
    expect([...readmeExitCodes().keys()].toSorted()).toEqual(Object.keys(CASES).toSorted());
  });

  for (const [code, cases] of Object.entries(CASES)) {
    for (const c of cases) {
      test(`${code}: thoughtgate ${c.argv.join(" ")} exits ${c.expect}`, async () => {
        using dir = tempDir();
        for (const [name, text] of Object.entries(c.files ?? {})) writeFileSync(join(dir.path, name), text);
        const env = { HOME: dir.path, XDG_STATE_HOME: join(dir.path, "state"), XDG_CONFIG_HOME: join(dir.path, "config"), THOUGHTGATE_DESKTOP_NOTIFY: "0" };
        const result = await runBinary(
          c.argv.map((arg) => arg.replace("{dir}", dir.path)),
          { env, cwd: dir.path },
        );
        expect(result.exitCode).toBe(c.expect);
        if (c.stderr) expect(result.stderr).toMatch(c.stderr);
        // A hint names the real command, never a placeholder.
        expect(result.stderr).not.toContain("<command>");
      });
    }
  }
});

/** The commands `thoughtgate --help` lists. */
async function listedCommands(): Promise<string[]> {
  const help = (await runBinary(["--help"])).stdout;
  const start = help.indexOf("Commands:\n") + "Commands:\n".length;
  const section = help.slice(start, help.indexOf("\n\n", start));
  return [...section.matchAll(/^ {2}([a-z-]+)(?: {2,}|$)/gm)].map((m) => m[1] as string);
}

describe("--help: fits 80 columns, no line padded with spaces, no colour codes in a pipe", () => {
  test("the root lists every command that is not hidden", async () => {
    expect(await listedCommands()).toEqual(["wrap", "demo", "shim", "inspect", "doctor", "serve", "tasks", "approvals", "approve", "deny", "validate-config", "unwrap", "enroll", "unenroll", "arbiter", "hook", "auth", "pins", "log", "policy"]);
  });

  test("the root's help and each command's, auth's own commands included", async () => {
    const pages = [[], ...(await listedCommands()).map((name) => [name]), ["auth", "login"], ["auth", "logout"], ["auth", "list"]];
    const problems: string[] = [];
    for (const page of pages) {
      const result = await runBinary([...page, "--help"]);
      expect([page.join(" "), result.exitCode, result.stderr]).toEqual([page.join(" "), 0, ""]);
      result.stdout.split("\n").forEach((line, i) => {
        const where = `thoughtgate ${[...page, "--help"].join(" ")}, line ${i + 1}`;
        if (line.length > 80) problems.push(`${where}: ${line.length} columns`);
        if (/\s$/.test(line)) problems.push(`${where}: ends with spaces`);
        if (line.includes("\u001b")) problems.push(`${where}: a colour code`);
      });
    }
    expect(problems).toEqual([]);
  });

  test("a command that runs another says so in its usage line; a positional argument is named", async () => {
    expect((await runBinary(["wrap", "--help"])).stdout).toContain("\nUsage: thoughtgate wrap [OPTIONS] -- CMD [ARGS...]\n");
    expect((await runBinary(["shim", "--help"])).stdout).toContain("\nUsage: thoughtgate shim [OPTIONS] -- CMD [ARGS...] | --url URL\n");
    expect((await runBinary(["approve", "--help"])).stdout).toContain("\nUsage: thoughtgate approve [OPTIONS] <TASK-ID>\n");
    expect((await runBinary(["auth", "login", "--help"])).stdout).toContain("\nUsage: thoughtgate auth login [OPTIONS] <SERVER>\n");
  });
});
