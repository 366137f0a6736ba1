/**
 * `thoughtgate wrap` when something goes wrong around it, through the compiled binary in a
 * sandboxed home: a config it cannot rewrite halfway through (the ones already rewritten go back, the
 * agent never starts), an agent that cannot start (exit 127, everything put back and stopped), and
 * an editor that saves the config atomically (a new file renamed over it) while wrap holds it.
 * Whatever happens, the configs end as the user left them and wrap's lock, backup, journal, service
 * and secret are gone.
 */
import { afterEach, describe, expect, setDefaultTimeout, test } from "bun:test";
import type { Subprocess } from "bun";
import { existsSync, mkdirSync, readdirSync, readFileSync, renameSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { applyEdits, modify } from "jsonc-parser";
import { fixture, requireBinary, waitFor } from "../support/harness.ts";
import { STDIO_SERVERS, wrapSandbox, type Sandbox } from "../support/wrap-sandbox.ts";

setDefaultTimeout(60_000);
requireBinary();

const holders: Subprocess[] = [];
afterEach(async () => {
  for (const holder of holders.splice(0)) {
    holder.kill("SIGKILL");
    await holder.exited;
  }
});

/** A user config and a project config, each with a stdio server: wrap rewrites the user's first. */
const USER_CONFIG = '{\n  "theme": "dark",\n  "mcpServers": { "mail": { "command": "node", "args": ["mail.js"] } }\n}\n';
function twoConfigs(box: Sandbox): { user: string; project: string } {
  const user = join(box.home, ".claude.json");
  const project = join(box.project, ".mcp.json");
  writeFileSync(user, USER_CONFIG);
  writeFileSync(project, STDIO_SERVERS);
  return { user, project };
}

/** The agent: it records that it ran. */
const AGENT = ["sh", "-c", "echo ran > agent-ran"];

/** wrap's own files that must be gone when it has finished: beside each config, the journal, the service descriptor, the session secret. */
function leftBehind(box: Sandbox, configs: string[]): string[] {
  const state = join(box.state, "thoughtgate");
  const beside = configs.flatMap((config) => readdirSync(join(config, "..")).filter((name) => name.includes(".thoughtgate")).map((name) => join(config, "..", name)));
  const journal = existsSync(join(state, "journal.json")) ? [join(state, "journal.json")] : [];
  const services = existsSync(join(state, "services")) ? readdirSync(join(state, "services")).map((name) => join(state, "services", name)) : [];
  const sessions = join(state, "sessions");
  const secrets = existsSync(sessions) ? readdirSync(sessions).map((id) => join(sessions, id, "secret")).filter((path) => existsSync(path)) : [];
  return [...beside, ...journal, ...services, ...secrets];
}

/** The governance service wrap printed no longer accepts connections. */
async function serviceStopped(stderr: string): Promise<boolean> {
  const url = /governance service (http:\/\/127\.0\.0\.1:\d+)/.exec(stderr)?.[1];
  if (!url) throw new Error(`wrap printed no service:\n${stderr}`);
  return fetch(`${url}/healthz`).then(
    () => false,
    () => true,
  );
}

async function holdLock(config: string): Promise<void> {
  const holder = Bun.spawn(fixture("lock-holder-fixture.ts", config), { stdin: "ignore", stdout: "pipe", stderr: "pipe" });
  holders.push(holder);
  const reader = holder.stdout.getReader();
  const { value } = await reader.read();
  if (!new TextDecoder().decode(value).includes("ready")) throw new Error(`the lock holder did not start: ${await new Response(holder.stderr).text()}`);
  reader.releaseLock();
}

describe("a config wrap cannot rewrite, after it rewrote another", () => {
  const obstacles = [
    { what: "its lock is held by another process", place: holdLock, says: (project: string) => `${project} is being wrapped by pid` },
    {
      what: "a directory stands where its backup goes",
      place: async (project: string) => mkdirSync(`${project}.thoughtgate-backup`),
      says: (project: string) => `${project}.thoughtgate-backup`,
    },
  ];
  for (const { what, place, says } of obstacles) {
    test(`${what}: the config already rewritten goes back byte for byte, exit 1, the agent never starts`, async () => {
      await using box = wrapSandbox();
      const { user, project } = twoConfigs(box);
      await place(project);
      const run = await box.run(["wrap", "--agent-type", "claude-code", "--", ...AGENT]);
      expect(run.code).toBe(1);
      const errors = run.stderr.split("\n").filter((line) => line.startsWith("[error]"));
      expect(errors).toEqual([expect.stringContaining(says(project))]);
      // The user config had been rewritten (it comes first), so it was put back.
      expect(run.stderr).toContain(`thoughtgate: restored ${user} (byte-identical)`);
      expect({ user: readFileSync(user, "utf8"), project: readFileSync(project, "utf8") }).toEqual({ user: USER_CONFIG, project: STDIO_SERVERS });
      expect(existsSync(join(box.project, "agent-ran"))).toBe(false);
      expect(await serviceStopped(run.stderr)).toBe(true);
      const expected = what.startsWith("a directory") ? [`${project}.thoughtgate-backup`] : [`${project}.thoughtgate-lock`];
      expect(leftBehind(box, [user, project])).toEqual(expected);
    });
  }
});

describe("an agent that cannot start", () => {
  test("a command that does not exist: exit 127, every config back byte for byte, the service stopped, nothing left", async () => {
    await using box = wrapSandbox();
    const { user, project } = twoConfigs(box);
    const run = await box.run(["wrap", "--agent-type", "claude-code", "--", join(box.home, "no-such-agent"), "--flag"]);
    expect(run.code).toBe(127);
    expect(run.stderr).toContain(`thoughtgate: cannot start ${JSON.stringify(join(box.home, "no-such-agent"))}`);
    expect({ user: readFileSync(user, "utf8"), project: readFileSync(project, "utf8") }).toEqual({ user: USER_CONFIG, project: STDIO_SERVERS });
    expect(await serviceStopped(run.stderr)).toBe(true);
    expect(leftBehind(box, [user, project])).toEqual([]);
  });
});

describe("an editor saves the config atomically while wrap holds it", () => {
  test("its changes outside wrap's entries are kept, wrap's entries go back, and the lock, backup and journal end clean", async () => {
    await using box = wrapSandbox();
    const config = join(box.project, "mcp.json");
    const original = `{\n  "theme": "dark",\n  "mcpServers": {\n    "notes": { "command": ${JSON.stringify(process.execPath)}, "args": [${JSON.stringify(join(import.meta.dir, "../fixtures/scripted-server-fixture.ts"))}] }\n  },\n  "recent": ["a.md"]\n}\n`;
    writeFileSync(config, original);
    const report = join(box.project, "agent-report.json");
    const wrap = box.start(["wrap", "--agent-type", "custom", "--config-path", config, "--", ...fixture("wrap-agent-fixture.ts", config, report, "--call", "echo:{}", "--wait")]);
    await waitFor(() => existsSync(report), "the agent to be ready");
    const rewritten = readFileSync(config, "utf8");
    expect(rewritten).toContain('"shim"');

    // The editor: the file as it has it, with the user's edits (one key changed, one removed, one added),
    // written to a temp file and renamed over the config.
    let edited = applyEdits(rewritten, modify(rewritten, ["theme"], "light", {}));
    edited = applyEdits(edited, modify(edited, ["recent"], undefined, {}));
    edited = applyEdits(edited, modify(edited, ["fontSize"], 14, {}));
    const temp = join(box.project, ".mcp.json.editor-save~");
    writeFileSync(temp, edited);
    renameSync(temp, config);

    wrap.proc.kill("SIGTERM");
    await wrap.proc.exited;
    const after = readFileSync(config, "utf8");
    expect(JSON.parse(after)).toEqual({
      theme: "light",
      fontSize: 14,
      mcpServers: { notes: { command: process.execPath, args: [join(import.meta.dir, "../fixtures/scripted-server-fixture.ts")] } },
    });
    expect(after).not.toContain("\"--server-id\"");
    expect(wrap.stderr()).toContain(`thoughtgate: restored ${config} (kept the agent's own changes)`);
    expect(leftBehind(box, [config])).toEqual([]);
  });
});
