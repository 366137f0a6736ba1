/**
 * Attack: a cloned repository ships `.mcp.json` as something that is not a config file — a link
 * to /dev/zero (reading it grows wrap without end), a FIFO (reading it blocks forever), or a file
 * far larger than any config. `thoughtgate wrap` must finish promptly with the problem reported on
 * that file, in bounded memory, and leave it as it is; since the servers the agent may read from it
 * could not be governed, wrap stops (exit 1) and does not start the agent.
 */
import { describe, expect, setDefaultTimeout, test } from "bun:test";
import { lstatSync, readlinkSync, symlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { requireBinary } from "../../support/harness.ts";
import { wrapSandbox } from "../../support/wrap-sandbox.ts";

setDefaultTimeout(60_000);
requireBinary();

/** "Promptly": wrap --dry-run takes well under a second; this only bounds a wrap that hangs or reads without end. */
const DEADLINE_MS = 10_000;
/** Wrap's own peak is ~45 MiB; reading /dev/zero took it past 4 GiB. */
const MAX_RSS_BYTES = 160 * 1024 * 1024;

const DRY_RUN = ["wrap", "--dry-run", "--agent-type", "claude-code", "--", "true"];

describe("a project .mcp.json that is not a regular file", () => {
  test("a link to /dev/zero: wrap finishes at once with the problem reported, in bounded memory", async () => {
    await using box = wrapSandbox();
    symlinkSync("/dev/zero", join(box.project, ".mcp.json"));
    const run = await box.run(DRY_RUN, DEADLINE_MS);
    expect({ timedOut: run.timedOut, code: run.code }).toEqual({ timedOut: false, code: 1 });
    expect(run.stderr).toContain("its MCP servers would run ungoverned");
    expect(run.stderr).toContain("problem: ./.mcp.json is a character device, not a regular file; wrap leaves it untouched");
    expect(run.maxRss).toBeLessThan(MAX_RSS_BYTES);
    expect(readlinkSync(join(box.project, ".mcp.json"))).toBe("/dev/zero");
  });

  test("a FIFO: wrap does not block on it; it finishes with the problem reported and the FIFO left in place", async () => {
    await using box = wrapSandbox();
    const config = join(box.project, ".mcp.json");
    expect(Bun.spawnSync(["mkfifo", config]).exitCode).toBe(0);
    const run = await box.run(DRY_RUN, DEADLINE_MS);
    expect({ timedOut: run.timedOut, code: run.code }).toEqual({ timedOut: false, code: 1 });
    expect(run.stderr).toContain("its MCP servers would run ungoverned");
    expect(run.stderr).toContain("problem: ./.mcp.json is a FIFO (named pipe), not a regular file; wrap leaves it untouched");
    expect(lstatSync(config).isFIFO()).toBe(true);
  });

  test("a valid config of 17 MiB: over the 16 MiB cap, reported and not read", async () => {
    await using box = wrapSandbox();
    const padding = "x".repeat(17 * 1024 * 1024);
    const text = `{ "padding": "${padding}", "mcpServers": { "notes": { "command": "node", "args": ["notes.js"] } } }\n`;
    writeFileSync(join(box.project, ".mcp.json"), text);
    const run = await box.run(DRY_RUN, DEADLINE_MS);
    expect({ timedOut: run.timedOut, code: run.code }).toEqual({ timedOut: false, code: 1 });
    expect(run.stderr).toContain("its MCP servers would run ungoverned");
    expect(run.stderr).toContain("problem: ./.mcp.json is larger than 16 MiB, the most wrap reads of one file; wrap leaves it untouched");
    expect(run.stdout).not.toContain("+++ ");
    expect(run.maxRss).toBeLessThan(MAX_RSS_BYTES);
  });
});
