import { expect, test } from "bun:test";
import { existsSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { journalPath } from "../../src/core/paths.ts";
import { patchRecord, readJournal } from "../../src/wrap/journal.ts";
import { processStartId } from "../../src/core/process-identity.ts";
import { repair, repairStale } from "../../src/wrap/repair.ts";
import { agentEdit, SAMPLE_JSONC, useSampleConfig } from "../support/config-rewrite.ts";
import { killHard, runFixture, startHolder } from "../support/guard-holder.ts";
import { isAlive, waitFor } from "../support/harness.ts";

const sample = useSampleConfig();

/** Files next to the sample.config besides the sample.config itself: backups, lock files, temp files. */
function besideConfig(): string[] {
  return readdirSync(sample.dir).filter((name) => name !== "settings.json" && name !== "state");
}

test("a crash between backup and rewrite: repair removes the backup and the record, the sample.config was never touched", async () => {
  const crashed = await runFixture("die-after-backup", sample.config);
  expect(crashed.signal).toBe("SIGKILL");
  expect(besideConfig().toSorted()).toEqual(["settings.json.thoughtgate-backup"]);
  expect(readJournal()).toMatchObject([{ configPath: sample.config, rewrittenSha256: null }]);
  expect(repair()).toMatchObject([{ status: "restored", configPath: sample.config, kind: "never-rewritten", agentType: "custom" }]);
  expect(readFileSync(sample.config, "utf8")).toBe(SAMPLE_JSONC);
  expect({ beside: besideConfig(), journal: existsSync(journalPath()) }).toEqual({ beside: [], journal: false });
});

test("after kill -9, changes the agent made since are kept and only the owned entries are put back", async () => {
  const holder = await startHolder(sample.config);
  await killHard(holder);
  writeFileSync(sample.config, agentEdit(readFileSync(sample.config, "utf8")));
  expect(repair({ configPath: sample.config })).toEqual([{ status: "restored", configPath: sample.config, kind: "owned-keys", agentType: "custom", pid: holder.pid }]);
  const restored = readFileSync(sample.config, "utf8");
  expect(restored).toContain('"theme": "light"');
  expect(restored).toContain('"added-by-agent"');
  expect(restored).not.toContain("thoughtgate");
  expect(restored).toContain('"args": ["-y", "@modelcontextprotocol/server-github"], // pinned by hand');
});

test("a live wrap's file is refused; --dry-run shows the diff of a dead one and changes nothing", async () => {
  const other = join(sample.dir, "other.json");
  writeFileSync(other, SAMPLE_JSONC);
  await using live = await startHolder(sample.config);
  const dead = await startHolder(other);
  await killHard(dead);
  const rewrittenOther = readFileSync(other, "utf8");

  const preview = repair({ dryRun: true });
  expect(preview.map((o) => [o.configPath, o.status])).toEqual([
    [sample.config, "refused"],
    [other, "would-restore"],
  ]);
  expect(preview[0]).toMatchObject({ reason: expect.stringContaining(`is in use by wrap pid ${live.pid} (custom), still running`) });
  expect(preview[1]).toMatchObject({ kind: "backup", diff: expect.stringContaining('+      "args": ["-y", "@modelcontextprotocol/server-github"], // pinned by hand') });
  expect(readFileSync(other, "utf8")).toBe(rewrittenOther);
  expect(readJournal()).toHaveLength(2);

  // The wrap command's start-up repair: the dead one is fixed, the live one is not its business.
  expect(repairStale()).toEqual([{ status: "restored", configPath: other, kind: "backup", agentType: "custom", pid: dead.pid }]);
  expect(readFileSync(other, "utf8")).toBe(SAMPLE_JSONC);
  expect(readJournal().map((r) => r.configPath)).toEqual([sample.config]);
  await killHard(live);
});

test("a reused pid does not pass for the dead wrap: the start stamp differs, so the record is repaired", async () => {
  const holder = await startHolder(sample.config);
  await killHard(holder);
  await using stranger = Bun.spawn([process.execPath, "-e", "setInterval(() => {}, 1 << 30)"], { stdout: "ignore", stderr: "ignore" });
  await waitFor(() => isAlive(stranger.pid), "the stranger process");
  // Same pid as a running process, but the start stamp the dead wrap recorded.
  patchRecord(sample.config, { holders: readJournal()[0]?.holders.map((holder) => ({ ...holder, pid: stranger.pid })) ?? [] });
  expect(repair()).toMatchObject([{ status: "restored", kind: "backup", pid: stranger.pid }]);
  expect(readFileSync(sample.config, "utf8")).toBe(SAMPLE_JSONC);
  stranger.kill("SIGKILL");
});

test("a record naming a process that runs, with its own start stamp, is refused even when the lock is free", async () => {
  const holder = await startHolder(sample.config);
  await killHard(holder);
  await using running = Bun.spawn([process.execPath, "-e", "setInterval(() => {}, 1 << 30)"], { stdout: "ignore", stderr: "ignore" });
  await waitFor(() => isAlive(running.pid), "the running process");
  patchRecord(sample.config, { holders: readJournal()[0]?.holders.map((holder) => ({ ...holder, pid: running.pid, pidStart: processStartId(running.pid) })) ?? [] });
  expect(repair()).toMatchObject([{ status: "refused", configPath: sample.config, reason: expect.stringContaining(`wrap pid ${running.pid}`) }]);
  expect(readFileSync(sample.config, "utf8")).not.toBe(SAMPLE_JSONC);
  running.kill("SIGKILL");
  await running.exited;
  expect(repair()).toMatchObject([{ status: "restored", kind: "backup" }]);
});

test("asking for one sample.config with no record but a backup beside it reports the orphan backup", () => {
  writeFileSync(`${sample.config}.thoughtgate-backup`, "{}");
  expect(repair({ configPath: sample.config })).toEqual([{ status: "orphan-backup", configPath: sample.config, backupPath: `${sample.config}.thoughtgate-backup` }]);
  expect(repair({ configPath: join(sample.dir, "nothing.json") })).toEqual([]);
});

test("a backup changed behind the journal's back is never put back: the repair fails with how to restore by hand", async () => {
  const holder = await startHolder(sample.config);
  await killHard(holder);
  const rewritten = readFileSync(sample.config, "utf8");
  writeFileSync(`${sample.config}.thoughtgate-backup`, '{ "mcpServers": { "planted": { "command": "sh" } } }');
  expect(repair()).toMatchObject([{ status: "failed", configPath: sample.config, reason: expect.stringContaining("is not the backup the wrap journal recorded") }]);
  expect(readFileSync(sample.config, "utf8")).toBe(rewritten);
});

test("an enrolled config stays rewritten: unwrap drops the wraps that died and says unenroll puts it back", async () => {
  const holder = await startHolder(sample.config);
  await killHard(holder);
  const rewritten = readFileSync(sample.config, "utf8");
  patchRecord(sample.config, { holders: [...(readJournal()[0]?.holders ?? []), { kind: "enroll", agent: "custom", since: "2026-11-28T10:00:00Z" }] });
  expect(repair()).toEqual([{ status: "enrolled", configPath: sample.config, agentType: "custom" }]);
  expect(readJournal()[0]?.holders).toEqual([{ kind: "enroll", agent: "custom", since: "2026-11-28T10:00:00Z" }]);
  expect(readFileSync(sample.config, "utf8")).toBe(rewritten);
});

test("a journal an earlier thoughtgate wrote (one wrap per config) is still repaired", async () => {
  const holder = await startHolder(sample.config);
  await killHard(holder);
  const [record] = readJournal();
  const first = { configPath: record?.configPath, backupPath: record?.backupPath, agentType: "custom", owned: record?.owned, rewrittenSha256: record?.rewrittenSha256, pid: holder.pid, pidStart: null, startedAt: "2026-11-20T10:00:00Z" };
  writeFileSync(journalPath(), JSON.stringify({ version: 1, records: [first] }));
  expect(repair()).toEqual([{ status: "restored", configPath: sample.config, kind: "backup", agentType: "custom", pid: holder.pid }]);
  expect(readFileSync(sample.config, "utf8")).toBe(SAMPLE_JSONC);
});
