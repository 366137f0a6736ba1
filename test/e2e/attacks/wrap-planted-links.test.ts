/**
 * Attack: symlinks planted where `thoughtgate wrap` keeps its own files — the lock and the backup
 * next to a cloned repository's `.mcp.json`, the journal and its lock in the state dir — pointing
 * at a file of the user's. Wrap must refuse with one line naming the path and write nothing
 * through the link; a backup swapped for a link during the session must not be what goes back.
 */
import { describe, expect, setDefaultTimeout, test } from "bun:test";
import { existsSync, lstatSync, mkdirSync, readdirSync, readFileSync, symlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { EVERYTHING_SERVER, fixture, requireBinary } from "../../support/harness.ts";
import { linesNaming, STDIO_SERVERS, userFile, wrapSandbox } from "../../support/wrap-sandbox.ts";

setDefaultTimeout(60_000);
requireBinary();

const EVERYTHING = `{ "mcpServers": { "everything": { "command": ${JSON.stringify(EVERYTHING_SERVER[0])}, "args": ${JSON.stringify(EVERYTHING_SERVER.slice(1))} } } }\n`;

/** The cloned repository's files other than `.mcp.json` itself. */
const besideConfig = (project: string) => readdirSync(project).filter((name) => name !== ".mcp.json");

describe("a symlink planted at a file wrap owns", () => {
  test("the repo ships .mcp.json.thoughtgate-lock as a link to a user file: wrap refuses in one line, exit 1, the file keeps its bytes", async () => {
    await using box = wrapSandbox();
    const victim = userFile(box, ".bashrc");
    const config = join(box.project, ".mcp.json");
    const lock = `${config}.thoughtgate-lock`;
    writeFileSync(config, EVERYTHING);
    symlinkSync(victim.path, lock);
    const report = join(box.home, "report.json");
    const run = await box.run(["wrap", "--agent-type", "claude-code", "--", ...fixture("wrap-agent-fixture.ts", config, report, "--call", 'echo:{"message":"hi"}')]);
    expect({ code: run.code, lines: linesNaming(run.stderr, lock) }).toEqual({
      code: 1,
      lines: [`[error] refusing the lock file ${lock}: it is a symbolic link, not a regular file; wrap neither reads nor writes through it (remove it, then run wrap again)`],
    });
    expect({ victim: readFileSync(victim.path, "utf8"), config: readFileSync(config, "utf8"), agentRan: existsSync(report) }).toEqual({ victim: victim.content, config: EVERYTHING, agentRan: false });
    expect(lstatSync(lock).isSymbolicLink()).toBe(true);
  });

  for (const [what, target] of [
    ["an existing user file", (home: string) => join(home, ".profile")],
    ["a path that does not exist yet", (home: string) => join(home, ".ssh", "authorized_keys")],
  ] as const) {
    test(`the repo ships .mcp.json.thoughtgate-backup as a link to ${what}: refused in one line, nothing created or written`, async () => {
      await using box = wrapSandbox();
      mkdirSync(join(box.home, ".ssh"));
      const aimed = target(box.home);
      if (what === "an existing user file") writeFileSync(aimed, "the user's profile\n");
      const config = join(box.project, ".mcp.json");
      const backup = `${config}.thoughtgate-backup`;
      writeFileSync(config, STDIO_SERVERS);
      symlinkSync(aimed, backup);
      const run = await box.run(["wrap", "--agent-type", "claude-code", "--", "true"]);
      expect({ code: run.code, lines: linesNaming(run.stderr, backup) }).toEqual({
        code: 1,
        lines: [`[error] refusing the backup ${backup}: it is a symbolic link, not a regular file; wrap neither reads nor writes through it (remove it, then run wrap again)`],
      });
      expect({
        aimed: existsSync(aimed) ? readFileSync(aimed, "utf8") : "absent",
        config: readFileSync(config, "utf8"),
        beside: besideConfig(box.project),
      }).toEqual({ aimed: what === "an existing user file" ? "the user's profile\n" : "absent", config: STDIO_SERVERS, beside: [".mcp.json.thoughtgate-backup"] });
    });
  }

  test("an agent swaps the backup for a link to the user's key during the session: the restore puts back the original, never the key", async () => {
    await using box = wrapSandbox();
    const key = userFile(box, "id_ed25519", "-----BEGIN OPENSSH PRIVATE KEY-----\nsecret\n");
    const config = join(box.project, ".mcp.json");
    writeFileSync(config, STDIO_SERVERS);
    const swap = `test -f .mcp.json.thoughtgate-backup && rm .mcp.json.thoughtgate-backup && ln -s "$HOME/id_ed25519" .mcp.json.thoughtgate-backup`;
    const run = await box.run(["wrap", "--agent-type", "claude-code", "--", "sh", "-c", swap]);
    expect({ code: run.code, config: readFileSync(config, "utf8"), key: readFileSync(key.path, "utf8"), beside: besideConfig(box.project) }).toEqual({
      code: 0,
      config: STDIO_SERVERS,
      key: key.content,
      beside: [],
    });
    expect(run.stderr).toContain(`restored ${config} (byte-identical)`);
  });

  test("the wrap journal is a link to a user file shaped like a journal: refused in one line, the file is not overwritten", async () => {
    await using box = wrapSandbox();
    const victim = userFile(box, "notes.json", '{"version":1,"records":[]}\n');
    const journalDir = join(box.state, "thoughtgate");
    mkdirSync(journalDir, { recursive: true });
    const journal = join(journalDir, "journal.json");
    symlinkSync(victim.path, journal);
    writeFileSync(join(box.project, ".mcp.json"), STDIO_SERVERS);
    const run = await box.run(["wrap", "--agent-type", "claude-code", "--", "true"]);
    expect({ code: run.code, lines: linesNaming(run.stderr, journal) }).toEqual({
      code: 1,
      lines: [`[error] refusing the wrap journal ${journal}: it is a symbolic link, not a regular file; wrap neither reads nor writes through it (remove it, then run wrap again)`],
    });
    expect({ victim: readFileSync(victim.path, "utf8"), config: readFileSync(join(box.project, ".mcp.json"), "utf8") }).toEqual({ victim: victim.content, config: STDIO_SERVERS });
  });

  test("the journal's lock file is a link to a user file: refused in one line, the file does not get wrap's pid", async () => {
    await using box = wrapSandbox();
    const victim = userFile(box, ".gitconfig");
    const journalDir = join(box.state, "thoughtgate");
    mkdirSync(journalDir, { recursive: true });
    const journalLock = join(journalDir, "journal.json.lock");
    symlinkSync(victim.path, journalLock);
    writeFileSync(join(box.project, ".mcp.json"), STDIO_SERVERS);
    const run = await box.run(["wrap", "--agent-type", "claude-code", "--", "true"]);
    expect({ code: run.code, lines: linesNaming(run.stderr, journalLock) }).toEqual({
      code: 1,
      lines: [`[error] refusing the lock file ${journalLock}: it is a symbolic link, not a regular file; wrap neither reads nor writes through it (remove it, then run wrap again)`],
    });
    expect({ victim: readFileSync(victim.path, "utf8"), config: readFileSync(join(box.project, ".mcp.json"), "utf8"), beside: besideConfig(box.project) }).toEqual({
      victim: victim.content,
      config: STDIO_SERVERS,
      beside: [],
    });
  });
});
