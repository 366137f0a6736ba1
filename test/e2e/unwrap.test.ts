import { expect, test } from "bun:test";
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { journalPath } from "../../src/core/paths.ts";
import { SAMPLE_JSONC, useSampleConfig } from "../support/config-rewrite.ts";
import { killHard, runFixture, startHolder } from "../support/guard-holder.ts";
import { requireBinary } from "../support/harness.ts";

const sample = useSampleConfig();

async function unwrap(...args: string[]) {
  await using proc = Bun.spawn([requireBinary(), "unwrap", ...args], { env: { ...process.env }, stdout: "pipe", stderr: "pipe" });
  const [code, stdout, stderr] = await Promise.all([proc.exited, new Response(proc.stdout).text(), new Response(proc.stderr).text()]);
  return { code, stdout, stderr };
}

function besideConfig(): string[] {
  return readdirSync(sample.dir).filter((name) => name !== "settings.json" && name !== "state");
}

test("kill -9 of a wrap holding the config: `unwrap --all` restores it byte for byte and clears the journal", async () => {
  const holder = await startHolder(sample.config);
  const rewritten = readFileSync(sample.config, "utf8");
  expect(rewritten).toContain("/opt/thoughtgate/bin/thoughtgate");
  await killHard(holder);

  const { code, stdout } = await unwrap("--all");
  expect({ code, stdout }).toEqual({ code: 0, stdout: `restored ${sample.config} from its backup, byte for byte (left by wrap pid ${holder.pid}, custom)\n` });
  expect(readFileSync(sample.config).equals(Buffer.from(SAMPLE_JSONC))).toBe(true);
  expect({ beside: besideConfig(), journal: existsSync(journalPath()) }).toEqual({ beside: [], journal: false });
  expect(await unwrap()).toMatchObject({ code: 0, stdout: `nothing to restore: the wrap journal (${journalPath()}) has no records\n` });
});

test("unwrap refuses the file of a wrap that is still running (the journal names it), then repairs it once it is killed", async () => {
  const holder = await startHolder(sample.config);
  const rewritten = readFileSync(sample.config, "utf8");
  try {
    const refused = await unwrap("--config-path", sample.config);
    expect(refused.code).toBe(1);
    expect(refused.stdout).toStartWith(`refused ${sample.config}: ${sample.config} is in use by wrap pid ${holder.pid} (custom), still running`);
    expect(readFileSync(sample.config, "utf8")).toBe(rewritten);
  } finally {
    await killHard(holder);
  }
  const repaired = await unwrap("--config-path", sample.config);
  expect(repaired.code).toBe(0);
  expect(readFileSync(sample.config, "utf8")).toBe(SAMPLE_JSONC);
  expect(besideConfig()).toEqual([]);
});

test("a crash between backup and rewrite is cleaned up by unwrap; the sample.config was never changed", async () => {
  const crashed = await runFixture("die-after-backup", sample.config);
  const { code, stdout } = await unwrap();
  expect({ code, stdout }).toEqual({ code: 0, stdout: `${sample.config} was backed up but never rewritten; removed the backup (left by wrap pid ${crashed.pid}, custom)\n` });
  expect(readFileSync(sample.config, "utf8")).toBe(SAMPLE_JSONC);
  expect({ beside: besideConfig(), journal: existsSync(journalPath()) }).toEqual({ beside: [], journal: false });
});

test("--dry-run prints a unified diff and changes nothing; usage errors exit 2", async () => {
  const holder = await startHolder(sample.config);
  await killHard(holder);
  const rewritten = readFileSync(sample.config, "utf8");
  const { code, stdout } = await unwrap("--dry-run");
  expect(code).toBe(0);
  expect(stdout).toStartWith(`would restore ${sample.config} from its backup, byte for byte`);
  expect(stdout).toContain(`--- ${sample.config}\tnow`);
  expect(stdout).toContain('-      "command": "/opt/thoughtgate/bin/thoughtgate",');
  expect(readFileSync(sample.config, "utf8")).toBe(rewritten);
  expect(existsSync(journalPath())).toBe(true);

  expect(await unwrap("--all", "--config-path", sample.config)).toMatchObject({ code: 2, stderr: expect.stringContaining("--config-path and --all exclude each other") });
  expect(await unwrap("--everything")).toMatchObject({ code: 2, stderr: expect.stringContaining("unknown flag --everything") });
  expect((await unwrap()).code).toBe(0);
});
