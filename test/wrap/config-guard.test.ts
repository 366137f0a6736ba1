import { afterEach, beforeEach, expect, spyOn, test } from "bun:test";
import { chmodSync, existsSync, lstatSync, mkdirSync, readdirSync, readFileSync, renameSync, rmSync, statSync, symlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { ThoughtGateError } from "../../src/core/errors.ts";
import { log } from "../../src/core/log.ts";
import { journalPath } from "../../src/core/paths.ts";
import { ConfigGuard, restoreAllGuards } from "../../src/wrap/config-guard.ts";
import { readJournal } from "../../src/wrap/journal.ts";
import { ownProcessStartId } from "../../src/core/process-identity.ts";
import { sha256OfBytes } from "../../src/wrap/put-back.ts";
import { agentEdit, rewriteSample, SAMPLE_JSONC } from "../support/config-rewrite.ts";
import { killHard, startHolder } from "../support/guard-holder.ts";
import { tempDir } from "../support/harness.ts";

let dir: ReturnType<typeof tempDir>;
let config: string;
beforeEach(() => {
  dir = tempDir();
  process.env.XDG_STATE_HOME = join(dir.path, "state");
  config = join(dir.path, "settings.json");
  writeFileSync(config, SAMPLE_JSONC);
});
afterEach(() => {
  restoreAllGuards();
  dir[Symbol.dispose]();
});

function guardFor(path = config): ConfigGuard {
  const guard = new ConfigGuard({ configPath: path, agentType: "zed" });
  guard.acquire();
  return guard;
}

/** Everything wrap leaves next to the config and in the state dir, besides the config itself. */
function leftovers(): string[] {
  const state = join(dir.path, "state", "thoughtgate");
  const stateFiles = existsSync(state) ? readdirSync(state).filter((name) => name !== "journal.json.lock") : [];
  return [...readdirSync(dir.path).filter((name) => name !== "settings.json" && name !== "state" && name !== "other.json"), ...stateFiles];
}

test("acquire backs up the exact bytes with the config's mode, and the rewrite keeps the mode too", () => {
  chmodSync(config, 0o640);
  const guard = guardFor();
  expect(readFileSync(guard.backupPath).equals(Buffer.from(SAMPLE_JSONC))).toBe(true);
  expect(statSync(guard.backupPath).mode & 0o7777).toBe(0o640);
  expect(guard.originalText).toBe(SAMPLE_JSONC);
  const { text, owned } = rewriteSample(guard.originalText);
  guard.write(text, owned);
  expect({ text: readFileSync(config, "utf8"), mode: statSync(config).mode & 0o7777 }).toEqual({ text, mode: 0o640 });
  expect(text).toContain("// Servers I use every day");
});

test("a file nobody touched comes back byte-identical; restore is idempotent and leaves nothing behind", () => {
  const guard = guardFor();
  const { text, owned } = rewriteSample(guard.originalText);
  guard.write(text, owned);
  expect(guard.restore()).toEqual({ status: "restored", configPath: config, kind: "backup" });
  expect(guard.restore()).toEqual({ status: "nothing", configPath: config });
  expect(readFileSync(config, "utf8")).toBe(SAMPLE_JSONC);
  expect(leftovers()).toEqual([]);
});

test("a file the agent changed during the session: only the owned entries go back, the agent's edits and the comments stay", () => {
  const guard = guardFor();
  const { text, owned } = rewriteSample(guard.originalText);
  guard.write(text, owned);
  writeFileSync(config, agentEdit(readFileSync(config, "utf8")));
  expect(guard.restore()).toMatchObject({ status: "restored", kind: "owned-keys" });
  const restored = readFileSync(config, "utf8");
  expect(restored).toContain('"theme": "light"');
  expect(restored).toContain('"added-by-agent": {');
  expect(restored).toContain('"files": { "command": "npx", "args": ["-y", "@modelcontextprotocol/server-filesystem", "/tmp/ünïcode"] },');
  expect(restored).toContain("// Servers I use every day");
  expect(restored).toContain('"args": ["-y", "@modelcontextprotocol/server-github"], // pinned by hand');
  expect(restored).not.toContain("thoughtgate");
});

test("a config the agent deleted during the session is put back from the backup", () => {
  const guard = guardFor();
  const { text, owned } = rewriteSample(guard.originalText);
  guard.write(text, owned);
  rmSync(config);
  expect(guard.restore()).toMatchObject({ status: "restored", kind: "backup" });
  expect(readFileSync(config, "utf8")).toBe(SAMPLE_JSONC);
});

test("two guards on two files are both in the journal with what a repair needs; each restore removes only its own", () => {
  const other = join(dir.path, "other.json");
  writeFileSync(other, '{ "mcpServers": { "github": { "command": "npx" } } }');
  const a = guardFor();
  const b = new ConfigGuard({ configPath: other, agentType: "cursor" });
  b.acquire();
  const rewrittenA = rewriteSample(a.originalText);
  a.write(rewrittenA.text, rewrittenA.owned);
  const records = readJournal();
  expect(records.map((r) => r.configPath).toSorted()).toEqual([other, config].toSorted());
  expect(records.find((r) => r.configPath === config)).toEqual({
    configPath: config,
    backupPath: `${config}.thoughtgate-backup`,
    agentType: "zed",
    owned: [["mcpServers", "github"], ["mcpServers", "files"]],
    rewrittenSha256: sha256OfBytes(Buffer.from(rewrittenA.text)),
    pid: process.pid,
    pidStart: ownProcessStartId(),
    startedAt: expect.any(String),
  });
  expect(records.find((r) => r.configPath === other)).toMatchObject({ agentType: "cursor", rewrittenSha256: null, owned: [] });
  a.restore();
  expect(readJournal().map((r) => r.configPath)).toEqual([other]);
  expect(restoreAllGuards()).toEqual([{ status: "restored", configPath: other, kind: "never-rewritten" }]);
  expect(existsSync(journalPath())).toBe(false);
});

test("wraps in separate processes on different files, started at once, all keep their journal records", async () => {
  const files = [1, 2, 3, 4].map((n) => join(dir.path, `agent-${n}.json`));
  for (const file of files) writeFileSync(file, SAMPLE_JSONC);
  const holders = await Promise.all(files.map((file) => startHolder(file)));
  try {
    const expected = holders.map((holder, i) => `${files[i]} ${holder.pid}`);
    expect(readJournal().map((r) => `${r.configPath} ${r.pid}`).toSorted()).toEqual(expected.toSorted());
  } finally {
    await Promise.all(holders.map((holder) => killHard(holder)));
  }
});

test("the next acquire repairs what a SIGKILLed wrap left rewritten, then backs up the original", async () => {
  const holder = await startHolder(config);
  await killHard(holder);
  expect(readFileSync(config, "utf8")).not.toBe(SAMPLE_JSONC);
  const warn = spyOn(log, "warn");
  try {
    const guard = guardFor();
    expect(warn.mock.calls.flat().join(" ")).toContain(`left by a wrap (pid ${holder.pid}, custom`);
    expect(guard.originalText).toBe(SAMPLE_JSONC);
    expect(readJournal().map((r) => r.pid)).toEqual([process.pid]);
    guard.restore();
  } finally {
    warn.mockRestore();
  }
  expect(leftovers()).toEqual([]);
});

test("a left-over backup without a journal record: removed when identical, refused when it differs", () => {
  const backup = `${config}.thoughtgate-backup`;
  writeFileSync(backup, SAMPLE_JSONC);
  guardFor().restore();
  expect(existsSync(backup)).toBe(false);

  writeFileSync(backup, "{ /* some other original */ }");
  const guard = new ConfigGuard({ configPath: config, agentType: "zed" });
  let error: unknown;
  try {
    guard.acquire();
  } catch (caught) {
    error = caught;
  }
  expect(error).toBeInstanceOf(ThoughtGateError);
  expect((error as ThoughtGateError).code).toBe("CONFIG");
  expect((error as ThoughtGateError).message).toContain(`${backup} is left over from an earlier wrap and differs`);
  expect(readFileSync(backup, "utf8")).toBe("{ /* some other original */ }");
  expect(leftovers()).toEqual(["settings.json.thoughtgate-backup"]);
});

test("a restore that cannot work logs the backup path and how to restore by hand, and keeps the record for unwrap", () => {
  const guard = guardFor();
  const { text, owned } = rewriteSample(guard.originalText);
  guard.write(text, owned);
  // Something swaps the config for a symlink during the session: wrap must not write through it.
  const other = join(dir.path, "other.json");
  writeFileSync(other, "not yours");
  rmSync(config);
  symlinkSync(other, config);
  // Recorded, not printed: the test asserts on it.
  const error = spyOn(log, "error").mockImplementation(Object.assign(() => {}, { raw: () => {} }));
  try {
    expect(guard.restore()).toMatchObject({ status: "failed", configPath: config, backupPath: guard.backupPath, error: expect.stringContaining("is a symbolic link") });
    const logged = error.mock.calls.flat().join(" ");
    expect(logged).toContain(`could not restore ${config}`);
    expect(logged).toContain(`cp ${guard.backupPath} ${config}`);
  } finally {
    error.mockRestore();
  }
  expect(readFileSync(other, "utf8")).toBe("not yours");
  expect(readJournal().map((r) => r.configPath)).toEqual([config]);
  expect(existsSync(`${config}.thoughtgate-lock`)).toBe(false);
  // Once the config is a file again, the record is repairable.
  rmSync(config);
  writeFileSync(config, text);
  const again = guardFor();
  expect(again.originalText).toBe(SAMPLE_JSONC);
  again.restore();
});

test("a backup deleted or swapped for a symlink during the session: the live restore puts back the bytes it backed up", () => {
  const secret = join(dir.path, "other.json");
  writeFileSync(secret, "a secret of the user's");
  for (const tamper of [() => rmSync(`${config}.thoughtgate-backup`), () => (rmSync(`${config}.thoughtgate-backup`), symlinkSync(secret, `${config}.thoughtgate-backup`))]) {
    const guard = guardFor();
    const { text, owned } = rewriteSample(guard.originalText);
    guard.write(text, owned);
    tamper();
    expect(guard.restore()).toEqual({ status: "restored", configPath: config, kind: "backup" });
    expect(readFileSync(config, "utf8")).toBe(SAMPLE_JSONC);
    expect(readFileSync(secret, "utf8")).toBe("a secret of the user's");
    expect(leftovers()).toEqual([]);
  }
});

test("a config that is a symlink (dotfiles): lock and backup beside the real file, the link stays a link, the target gets its bytes back", () => {
  const dotfiles = join(dir.path, "dotfiles");
  mkdirSync(dotfiles);
  const real = join(dotfiles, "settings.json");
  renameSync(config, real);
  symlinkSync(real, config);
  const guard = guardFor();
  expect({ config: guard.configPath, backup: guard.backupPath, lock: guard.lockPath }).toEqual({ config: real, backup: `${real}.thoughtgate-backup`, lock: `${real}.thoughtgate-lock` });
  const { text, owned } = rewriteSample(guard.originalText);
  guard.write(text, owned);
  expect({ link: lstatSync(config).isSymbolicLink(), seen: readFileSync(config, "utf8") }).toEqual({ link: true, seen: text });
  expect(readJournal().map((r) => r.configPath)).toEqual([real]);
  expect(guard.restore()).toEqual({ status: "restored", configPath: real, kind: "backup" });
  expect({ link: lstatSync(config).isSymbolicLink(), target: readFileSync(real, "utf8"), beside: readdirSync(dotfiles) }).toEqual({ link: true, target: SAMPLE_JSONC, beside: ["settings.json"] });
});

test("release() keeps the rewrite, the backup and the record (--no-restore); a later acquire puts it back", () => {
  const guard = guardFor();
  const { text, owned } = rewriteSample(guard.originalText);
  guard.write(text, owned);
  guard.release();
  expect(guard.restore()).toEqual({ status: "nothing", configPath: config });
  expect(readFileSync(config, "utf8")).toBe(text);
  expect(readJournal().map((r) => r.configPath)).toEqual([config]);
  const again = guardFor();
  expect(again.originalText).toBe(SAMPLE_JSONC);
  again.restore();
  expect(leftovers()).toEqual([]);
});
