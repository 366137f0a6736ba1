import { parse as jsoncParse } from "jsonc-parser";
import { afterEach, beforeEach, expect, spyOn, test } from "bun:test";
import { chmodSync, existsSync, lstatSync, mkdirSync, readdirSync, readFileSync, renameSync, rmSync, statSync, symlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { ThoughtGateError } from "../../src/core/errors.ts";
import { log } from "../../src/core/log.ts";
import { journalPath } from "../../src/core/paths.ts";
import { ConfigGuard, restoreAllGuards } from "../../src/wrap/config-guard.ts";
import { enrollHolder, wrapHolder } from "../../src/wrap/holders.ts";
import { readJournal, type Holder } from "../../src/wrap/journal.ts";
import { ownProcessStartId } from "../../src/core/process-identity.ts";
import { sha256OfBytes } from "../../src/wrap/put-back.ts";
import { agentEdit, rewriteSample, SAMPLE_JSONC } from "../support/config-rewrite.ts";
import { deadPid, killHard, startHolder } from "../support/guard-holder.ts";
import { repair } from "../../src/wrap/repair.ts";
import { tempDir } from "../support/harness.ts";

let dir: ReturnType<typeof tempDir>;
let config: string;
const stateBefore = process.env.XDG_STATE_HOME;
beforeEach(() => {
  dir = tempDir();
  process.env.XDG_STATE_HOME = join(dir.path, "state");
  config = join(dir.path, "settings.json");
  writeFileSync(config, SAMPLE_JSONC);
});
afterEach(() => {
  restoreAllGuards();
  dir[Symbol.dispose]();
  // The test run's own state directory again: later files' binaries must not inherit a removed one.
  if (stateBefore === undefined) delete process.env.XDG_STATE_HOME;
  else process.env.XDG_STATE_HOME = stateBefore;
});

/** A guard for a wrap session of this process (a new run id each), sharing `path` with the sample rewrite. */
function share(path = config, holder: Holder = wrapHolder(Bun.randomUUIDv7()), servers?: string[]): { guard: ConfigGuard; text: string } {
  const guard = new ConfigGuard({ configPath: path, agentType: "zed", holder });
  const current = readFileSync(path, "utf8");
  const rewritten = rewriteSample(current, servers);
  guard.share(current, rewritten);
  return { guard, text: rewritten.text };
}

/** Everything wrap leaves next to the config and in the state dir, besides the config itself. */
function leftovers(): string[] {
  const state = join(dir.path, "state", "thoughtgate");
  const stateFiles = existsSync(state) ? readdirSync(state).filter((name) => name !== "journal.json.lock" && name !== "configs.lock") : [];
  return [...readdirSync(dir.path).filter((name) => name !== "settings.json" && name !== "state" && name !== "other.json"), ...stateFiles];
}

test("share backs up the exact bytes with the config's mode, and the rewrite keeps the mode too", () => {
  chmodSync(config, 0o640);
  const { guard, text } = share();
  expect(readFileSync(guard.backupPath).equals(Buffer.from(SAMPLE_JSONC))).toBe(true);
  expect(statSync(guard.backupPath).mode & 0o7777).toBe(0o640);
  expect({ text: readFileSync(config, "utf8"), mode: statSync(config).mode & 0o7777 }).toEqual({ text, mode: 0o640 });
  expect(text).toContain("// Servers I use every day");
});

test("a file nobody touched comes back byte-identical; restore is idempotent and leaves nothing behind", () => {
  const { guard } = share();
  expect(guard.restore()).toEqual({ status: "restored", configPath: config, kind: "backup" });
  expect(guard.restore()).toEqual({ status: "nothing", configPath: config });
  expect(readFileSync(config, "utf8")).toBe(SAMPLE_JSONC);
  expect(leftovers()).toEqual([]);
});

test("a file the agent changed during the session: only the owned entries go back, the agent's edits and the comments stay", () => {
  const { guard } = share();
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
  const { guard } = share();
  rmSync(config);
  expect(guard.restore()).toMatchObject({ status: "restored", kind: "backup" });
  expect(readFileSync(config, "utf8")).toBe(SAMPLE_JSONC);
});

test("two sessions share one config: the second joins without writing, the first to end leaves it rewritten, the last puts it back byte for byte", () => {
  const first = share();
  const rewritten = readFileSync(config, "utf8");
  const second = new ConfigGuard({ configPath: config, agentType: "zed", holder: wrapHolder(Bun.randomUUIDv7()) });
  // The second session's rewrite of the rewritten file is the same file: nothing new to write.
  expect(second.share(rewritten, { text: rewritten, owned: [] })).toBe("joined");
  expect(readJournal()).toMatchObject([{ configPath: config, holders: [first.guard.holder, second.holder] }]);
  expect(first.guard.restore()).toEqual({ status: "kept", configPath: config, holders: `wrap pid ${process.pid}` });
  expect(readFileSync(config, "utf8")).toBe(rewritten);
  expect(second.restore()).toEqual({ status: "restored", configPath: config, kind: "backup" });
  expect(readFileSync(config, "utf8")).toBe(SAMPLE_JSONC);
  expect(leftovers()).toEqual([]);
});

test("a server the agent added during one session is rewritten by the next to start, and the last restore gives it back as the agent wrote it", () => {
  const first = share();
  const edited = agentEdit(readFileSync(config, "utf8"));
  writeFileSync(config, edited);
  // The next session rewrites only what is new; the backup becomes the file as it would be put back now.
  const second = share(config, wrapHolder(Bun.randomUUIDv7()), ["added-by-agent"]);
  expect(readFileSync(config, "utf8")).toBe(second.text);
  const rebased = readFileSync(first.guard.backupPath, "utf8");
  expect(readJournal()[0]?.owned).toEqual([["mcpServers", "github"], ["mcpServers", "files"], ["mcpServers", "added-by-agent"]]);
  expect(first.guard.restore()).toMatchObject({ status: "kept" });
  expect(second.guard.restore()).toEqual({ status: "restored", configPath: config, kind: "backup" });
  const restored = readFileSync(config, "utf8");
  expect(restored).toBe(rebased);
  expect(restored).toContain('"theme": "light"');
  expect(restored).toContain('"added-by-agent": {\n      "command": "my-server"\n    }');
  expect(restored).toContain('"files": { "command": "npx", "args": ["-y", "@modelcontextprotocol/server-filesystem", "/tmp/ünïcode"] },');
  expect(restored).not.toContain("thoughtgate");
});

test("enroll holds a config until it lets go; a session on top of it leaves it rewritten", () => {
  const enrolled = share(config, enrollHolder("zed"));
  const rewritten = readFileSync(config, "utf8");
  const session = new ConfigGuard({ configPath: config, agentType: "zed", holder: wrapHolder(Bun.randomUUIDv7()) });
  expect(session.share(rewritten, { text: rewritten, owned: [] })).toBe("joined");
  expect(session.restore()).toEqual({ status: "kept", configPath: config, holders: "the enrollment of zed" });
  expect(readFileSync(config, "utf8")).toBe(rewritten);
  expect(enrolled.guard.restore()).toEqual({ status: "restored", configPath: config, kind: "backup" });
  expect(readFileSync(config, "utf8")).toBe(SAMPLE_JSONC);
});

test("two guards on two files are both in the journal with what a repair needs; each restore removes only its own", () => {
  const other = join(dir.path, "other.json");
  writeFileSync(other, '{ "mcpServers": { "github": { "command": "npx" } } }');
  const holder = wrapHolder("0199a1b2-c3d4-7e5f-8a9b-0c1d2e3f4a5b");
  const a = share(config, holder);
  share(other, holder);
  const records = readJournal();
  expect(records.map((r) => r.configPath).toSorted()).toEqual([other, config].toSorted());
  expect(records.find((r) => r.configPath === config)).toEqual({
    configPath: config,
    backupPath: `${config}.thoughtgate-backup`,
    agentType: "zed",
    owned: [["mcpServers", "github"], ["mcpServers", "files"]],
    rewrittenSha256: sha256OfBytes(Buffer.from(a.text)),
    backupSha256: sha256OfBytes(Buffer.from(SAMPLE_JSONC)),
    // What the rewrite put at each owned key: a restore puts back only keys still holding it.
    written: [jsoncParse(a.text).mcpServers.github, jsoncParse(a.text).mcpServers.files],
    holders: [{ kind: "wrap", pid: process.pid, pidStart: ownProcessStartId(), startedAt: expect.any(String), runId: "0199a1b2-c3d4-7e5f-8a9b-0c1d2e3f4a5b" }],
  });
  a.guard.restore();
  expect(readJournal().map((r) => r.configPath)).toEqual([other]);
  expect(restoreAllGuards()).toEqual([{ status: "restored", configPath: other, kind: "backup" }]);
  expect(existsSync(journalPath())).toBe(false);
});

test("wraps in separate processes on different files, started at once, all keep their journal records", async () => {
  const files = [1, 2, 3, 4].map((n) => join(dir.path, `agent-${n}.json`));
  for (const file of files) writeFileSync(file, SAMPLE_JSONC);
  const holders = await Promise.all(files.map((file) => startHolder(file)));
  try {
    const expected = holders.map((holder, i) => `${files[i]} ${holder.pid}`);
    expect(readJournal().map((r) => `${r.configPath} ${r.holders.map((h) => (h.kind === "wrap" ? h.pid : "")).join()}`).toSorted()).toEqual(expected.toSorted());
  } finally {
    await Promise.all(holders.map((holder) => killHard(holder)));
  }
});

test("the next share puts back what a SIGKILLed wrap left rewritten, then backs up the original", async () => {
  const holder = await startHolder(config);
  await killHard(holder);
  expect(readFileSync(config, "utf8")).not.toBe(SAMPLE_JSONC);
  const warn = spyOn(log, "warn");
  try {
    // What a wrap starting now reads is the dead one's rewrite, already in shim form: nothing new.
    const guard = new ConfigGuard({ configPath: config, agentType: "zed", holder: wrapHolder(Bun.randomUUIDv7()) });
    expect(() => guard.share(readFileSync(config, "utf8"), rewriteSample(SAMPLE_JSONC))).toThrow(`${config} changed while wrap was reading it; run wrap again`);
    expect(warn.mock.calls.flat().join(" ")).toContain(`left rewritten by wrap pid ${holder.pid}, which ended`);
    expect(readFileSync(config, "utf8")).toBe(SAMPLE_JSONC);
    const again = share();
    expect(readFileSync(again.guard.backupPath, "utf8")).toBe(SAMPLE_JSONC);
    expect(readJournal().map((r) => r.holders.map((h) => (h.kind === "wrap" ? h.pid : 0)))).toEqual([[process.pid]]);
    again.guard.restore();
  } finally {
    warn.mockRestore();
  }
  expect(leftovers()).toEqual([]);
});

test("a session that shares with a wrap that is then SIGKILLed puts the config back when it ends", async () => {
  const holder = await startHolder(config);
  const rewritten = readFileSync(config, "utf8");
  const mine = new ConfigGuard({ configPath: config, agentType: "zed", holder: wrapHolder(Bun.randomUUIDv7()) });
  expect(mine.share(rewritten, { text: rewritten, owned: [] })).toBe("joined");
  await killHard(holder);
  expect(mine.restore()).toEqual({ status: "restored", configPath: config, kind: "backup" });
  expect(readFileSync(config, "utf8")).toBe(SAMPLE_JSONC);
  expect(leftovers()).toEqual([]);
});

test("a left-over backup without a journal record: removed when identical, refused when it differs", () => {
  const backup = `${config}.thoughtgate-backup`;
  writeFileSync(backup, SAMPLE_JSONC);
  share().guard.restore();
  expect(existsSync(backup)).toBe(false);

  writeFileSync(backup, "{ /* some other original */ }");
  let error: unknown;
  try {
    share();
  } catch (caught) {
    error = caught;
  }
  expect(error).toBeInstanceOf(ThoughtGateError);
  expect((error as ThoughtGateError).code).toBe("CONFIG");
  expect((error as ThoughtGateError).message).toContain(`${backup} is left over from an earlier wrap and differs`);
  expect(readFileSync(backup, "utf8")).toBe("{ /* some other original */ }");
  expect(readFileSync(config, "utf8")).toBe(SAMPLE_JSONC);
  expect(leftovers()).toEqual(["settings.json.thoughtgate-backup"]);
});

test("a restore that cannot work logs the backup path and how to restore by hand, and keeps the record for unwrap", () => {
  const { guard, text } = share();
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
  // Once the config is a file again, the record is repairable: this process's holder ended with its guard.
  rmSync(config);
  writeFileSync(config, text);
  expect(readJournal()[0]?.holders).toHaveLength(1);
});

test("a backup deleted or swapped for a symlink during the session: the live restore puts back the bytes it backed up", () => {
  const secret = join(dir.path, "other.json");
  writeFileSync(secret, "a secret of the user's");
  for (const tamper of [() => rmSync(`${config}.thoughtgate-backup`), () => (rmSync(`${config}.thoughtgate-backup`), symlinkSync(secret, `${config}.thoughtgate-backup`))]) {
    const { guard } = share();
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
  const { guard, text } = share();
  expect({ config: guard.configPath, backup: guard.backupPath, lock: guard.lockPath }).toEqual({ config: real, backup: `${real}.thoughtgate-backup`, lock: `${real}.thoughtgate-lock` });
  expect({ link: lstatSync(config).isSymbolicLink(), seen: readFileSync(config, "utf8") }).toEqual({ link: true, seen: text });
  expect(readJournal().map((r) => r.configPath)).toEqual([real]);
  expect(guard.restore()).toEqual({ status: "restored", configPath: real, kind: "backup" });
  expect({ link: lstatSync(config).isSymbolicLink(), target: readFileSync(real, "utf8"), beside: readdirSync(dotfiles) }).toEqual({ link: true, target: SAMPLE_JSONC, beside: ["settings.json"] });
});

test("release() keeps the rewrite, the backup and the record (--no-restore); once its process is gone, a later share puts it back", async () => {
  const holder = await startHolder(config);
  const rewritten = readFileSync(config, "utf8");
  await killHard(holder);
  expect(readJournal().map((r) => r.configPath)).toEqual([config]);
  expect(readFileSync(config, "utf8")).toBe(rewritten);
  const again = new ConfigGuard({ configPath: config, agentType: "zed", holder: wrapHolder(Bun.randomUUIDv7()) });
  // Repaired first, then the file is not what was read: the caller reads it again.
  expect(() => again.share(rewritten, { text: rewritten, owned: [] })).toThrow("changed while wrap was reading it");
  expect(readFileSync(config, "utf8")).toBe(SAMPLE_JSONC);
  expect(leftovers()).toEqual([]);
});

/** The hook's settings file for a user who has none yet (agent-hooks.ts: the hook in `{}`). */
const HOOKED = `{\n  "hooks": {\n    "BeforeTool": [\n      { "matcher": ".*" }\n    ]\n  }\n}\n`;

function shareMissing(path: string, holder: Holder = wrapHolder(Bun.randomUUIDv7())): ConfigGuard {
  const guard = new ConfigGuard({ configPath: path, agentType: "gemini", holder });
  expect(guard.share("", { text: HOOKED, owned: [["hooks", "BeforeTool"]] })).toBe("rewritten");
  return guard;
}

test("a settings file that did not exist is created (in a new directory), shared, and removed by the last restore: nothing left", () => {
  const missing = join(dir.path, "gemini-home", "settings.json");
  const first = shareMissing(missing);
  expect(readFileSync(missing, "utf8")).toBe(HOOKED);
  expect(readJournal()).toMatchObject([{ configPath: missing, created: true, backupSha256: null }]);
  const second = new ConfigGuard({ configPath: missing, agentType: "gemini", holder: wrapHolder(Bun.randomUUIDv7()) });
  expect(second.share(HOOKED, { text: HOOKED, owned: [["hooks", "BeforeTool"]] })).toBe("joined");
  expect(first.restore()).toMatchObject({ status: "kept" });
  expect(existsSync(missing)).toBe(true);
  expect(second.restore()).toEqual({ status: "restored", configPath: missing, kind: "backup", removed: true });
  expect([existsSync(missing), readdirSync(join(dir.path, "gemini-home")), readJournal()]).toEqual([false, [], []]);
});

test("a created settings file the agent wrote in meanwhile: only the hook leaves it, the agent's setting stays", () => {
  const missing = join(dir.path, "settings-new.json");
  const guard = shareMissing(missing);
  writeFileSync(missing, HOOKED.replace('{\n  "hooks"', '{\n  "theme": "dark",\n  "hooks"'));
  expect(guard.restore()).toMatchObject({ status: "restored", kind: "owned-keys" });
  // The object that held the hook's key stays, empty: only the owned key is ThoughtGate's.
  expect(jsoncParse(readFileSync(missing, "utf8"))).toEqual({ theme: "dark", hooks: {} });
});

test("a created settings file left by a wrap that died: the repair removes it", async () => {
  const missing = join(dir.path, "settings-crash.json");
  const holder: Holder = { kind: "wrap", pid: await deadPid(), pidStart: "gone", startedAt: new Date().toISOString(), runId: Bun.randomUUIDv7() };
  shareMissing(missing, holder).release();
  expect(existsSync(missing)).toBe(true);
  expect(repair()).toMatchObject([{ status: "restored", configPath: missing, kind: "backup" }]);
  expect([existsSync(missing), readJournal()]).toEqual([false, []]);
});
