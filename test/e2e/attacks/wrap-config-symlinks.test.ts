/**
 * Attack: a cloned repository ships its project config as a symlink out of the project, so that
 * `thoughtgate wrap` would rewrite (and "restore") a file of the user's elsewhere. The rule
 * (src/wrap/config-path.ts): a project config may resolve only inside its project; a user's own
 * config may be a link anywhere (dotfiles), and is worked on through its real file, the link kept.
 */
import { describe, expect, setDefaultTimeout, test } from "bun:test";
import { existsSync, lstatSync, mkdirSync, readdirSync, readFileSync, readlinkSync, statSync, symlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { EVERYTHING_SERVER, fixture, requireBinary, waitFor } from "../../support/harness.ts";
import { STDIO_SERVERS, wrapSandbox } from "../../support/wrap-sandbox.ts";

setDefaultTimeout(60_000);
requireBinary();

const wrapFiles = (dir: string) => readdirSync(dir).filter((name) => name.includes("thoughtgate"));

describe("a config that is a symlink", () => {
  test("the repo's .mcp.json links to a servers file outside the project: wrap reports it and never rewrites that file", async () => {
    await using box = wrapSandbox();
    const outside = join(box.home, "work-servers.json");
    writeFileSync(outside, STDIO_SERVERS);
    symlinkSync(outside, join(box.project, ".mcp.json"));
    const seen = join(box.home, "seen-during-session.json");
    // The agent copies what the outside file holds while wrap runs it.
    const run = await box.run(["wrap", "--agent-type", "claude-code", "--", "sh", "-c", `cat "${outside}" > "${seen}"`]);
    expect(run.stderr).toContain(`problem: ./.mcp.json resolves through a symbolic link to ${outside}, outside the project directory ${box.project}; wrap leaves it untouched`);
    // If the agent ran at all, the file it saw was never rewritten.
    expect({ during: existsSync(seen) ? readFileSync(seen, "utf8") : STDIO_SERVERS, after: readFileSync(outside, "utf8") }).toEqual({ during: STDIO_SERVERS, after: STDIO_SERVERS });
    expect({ link: readlinkSync(join(box.project, ".mcp.json")), home: wrapFiles(box.home), project: wrapFiles(box.project) }).toEqual({ link: outside, home: [], project: [] });
  });

  test("--dry-run shows no rewrite of a project config that links out of the project", async () => {
    await using box = wrapSandbox();
    const outside = join(box.home, "work-servers.json");
    writeFileSync(outside, STDIO_SERVERS);
    symlinkSync(outside, join(box.project, ".mcp.json"));
    const run = await box.run(["wrap", "--dry-run", "--agent-type", "claude-code", "--", "true"]);
    expect(run.code).toBe(1);
    expect(run.stderr).toMatch(/notes\s+project\s+\.\/\.mcp\.json\s+no: the file resolves through a symbolic link/);
    expect(run.stderr).toContain("its MCP servers would run ungoverned");
    expect(run.stdout).not.toContain("+++ ");
  });

  test("a user's ~/.claude.json that links into a dotfiles repo: governed through the real file, then still a link to byte-identical bytes", async () => {
    await using box = wrapSandbox();
    const dotfiles = join(box.home, "dotfiles");
    mkdirSync(dotfiles);
    const real = join(dotfiles, "claude.json");
    const link = join(box.home, ".claude.json");
    const original = `{\n  // mine\n  "mcpServers": { "everything": { "command": ${JSON.stringify(EVERYTHING_SERVER[0])}, "args": ${JSON.stringify(EVERYTHING_SERVER.slice(1))} } }\n}\n`;
    writeFileSync(real, original);
    symlinkSync(real, link);
    const report = join(box.home, "report.json");
    const { proc: wrap, stderr } = box.start(["wrap", "--agent-type", "claude-code", "--", ...fixture("wrap-agent-fixture.ts", link, report, "--call", 'echo:{"message":"hi"}', "--wait")]);
    const seen = await waitFor(() => (existsSync(report) ? (JSON.parse(readFileSync(report, "utf8")) as Record<string, any>) : null), "the agent to be ready");
    // While wrapped: the agent started the shim read through the link; the backup sits beside the real file
    // (the lock too, while wrap changes the file). The shim command is the shim path (a hard link: the same file).
    expect({ sameFile: statSync(seen.command).ino === statSync(requireBinary()).ino, echo: seen.results.echo }).toEqual({ sameFile: true, echo: { ok: [{ type: "text", text: "Echo: hi" }] } });
    expect({ link: lstatSync(link).isSymbolicLink(), dotfiles: wrapFiles(dotfiles).toSorted(), home: wrapFiles(box.home) }).toEqual({
      link: true,
      dotfiles: ["claude.json.thoughtgate-backup"],
      home: [],
    });
    wrap.kill("SIGTERM");
    expect(await wrap.exited).toBe(0);
    expect(stderr()).toContain(`restored ${real} (byte-identical)`);
    expect({ link: readlinkSync(link), bytes: readFileSync(real, "utf8"), dotfiles: wrapFiles(dotfiles), home: wrapFiles(box.home) }).toEqual({ link: real, bytes: original, dotfiles: [], home: [] });
  });
});
