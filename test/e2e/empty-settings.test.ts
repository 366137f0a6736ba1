/**
 * A governance, policy or events setting that is given but empty or unusable stops the command
 * with exit 2 and one line naming it; it never means "not given". An unset `${VAR}` in an agent's
 * config produces exactly such an empty value, and reading it as absent would quietly decide with
 * another policy (the embedded default instead of the service's), write no audit, or run another
 * server id's rules. Through the compiled binary; nothing is started in any of these cases.
 */
import { describe, expect, setDefaultTimeout, test } from "bun:test";
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { requireBinary, tempDir } from "../support/harness.ts";
import { closedPort } from "../support/fake-governance.ts";

setDefaultTimeout(60_000);
requireBinary();

type Case = {
  /** What is empty or malformed, as the test name says it. */
  what: string;
  command: "shim" | "wrap" | "arbiter" | "serve";
  flags: string[];
  env?: Record<string, string>;
  /** What the one error line must say. */
  says: string;
};

const CASES: Case[] = [
  { what: "shim --governance-endpoint ''", command: "shim", flags: ["--governance-endpoint", ""], says: "--governance-endpoint is empty" },
  { what: "THOUGHTGATE_GOVERNANCE_ENDPOINT=''", command: "shim", flags: [], env: { THOUGHTGATE_GOVERNANCE_ENDPOINT: "" }, says: "$THOUGHTGATE_GOVERNANCE_ENDPOINT is empty" },
  { what: "shim --governance-endpoint that is not a URL", command: "shim", flags: ["--governance-endpoint", "127.0.0.1:8080"], env: { THOUGHTGATE_GOVERNANCE_SECRET: "s" }, says: 'is not an http:// URL' },
  { what: "shim --governance-endpoint with another scheme", command: "shim", flags: ["--governance-endpoint", "file:///etc/passwd"], env: { THOUGHTGATE_GOVERNANCE_SECRET: "s" }, says: "is not an http:// URL" },
  { what: "THOUGHTGATE_GOVERNANCE_ENDPOINT that is not a URL", command: "shim", flags: [], env: { THOUGHTGATE_GOVERNANCE_ENDPOINT: "${TG_ENDPOINT}", THOUGHTGATE_GOVERNANCE_SECRET: "s" }, says: "is not an http:// URL" },
  { what: "shim --governance-secret-file ''", command: "shim", flags: ["--governance-endpoint", "<closed>", "--governance-secret-file", ""], says: "--governance-secret-file is empty" },
  { what: "shim --governance-ready-timeout ''", command: "shim", flags: ["--governance-endpoint", "<closed>", "--governance-ready-timeout", ""], env: { THOUGHTGATE_GOVERNANCE_SECRET: "s" }, says: "--governance-ready-timeout is empty" },
  { what: "shim --thoughtgate-config ''", command: "shim", flags: ["--thoughtgate-config", ""], says: "--thoughtgate-config is empty" },
  { what: "THOUGHTGATE_CONFIG='' (shim)", command: "shim", flags: [], env: { THOUGHTGATE_CONFIG: "" }, says: "$THOUGHTGATE_CONFIG is empty" },
  { what: "shim --server-id ''", command: "shim", flags: ["--server-id", ""], says: "--server-id is empty" },
  { what: "shim --profile ''", command: "shim", flags: ["--profile", ""], says: "--profile is empty" },
  { what: "THOUGHTGATE_PROFILE=''", command: "shim", flags: [], env: { THOUGHTGATE_PROFILE: "" }, says: "$THOUGHTGATE_PROFILE is empty" },
  { what: "shim --orphan-timeout ''", command: "shim", flags: ["--orphan-timeout", ""], says: "--orphan-timeout is empty" },
  { what: "shim --stdin-close-grace ''", command: "shim", flags: ["--stdin-close-grace", ""], says: "--stdin-close-grace is empty" },
  { what: "shim --sigterm-grace ''", command: "shim", flags: ["--sigterm-grace", ""], says: "--sigterm-grace is empty" },
  { what: "shim --events ''", command: "shim", flags: ["--events", ""], says: "--events is empty" },
  { what: "THOUGHTGATE_EVENTS=''", command: "shim", flags: [], env: { THOUGHTGATE_EVENTS: "" }, says: "$THOUGHTGATE_EVENTS is empty" },
  { what: "THOUGHTGATE_RUN_ID=''", command: "shim", flags: [], env: { THOUGHTGATE_RUN_ID: "" }, says: "$THOUGHTGATE_RUN_ID is empty" },
  { what: "wrap --config-path ''", command: "wrap", flags: ["--agent-type", "custom", "--config-path", ""], says: "--config-path is empty" },
  { what: "wrap --governance-port ''", command: "wrap", flags: ["--governance-port", ""], says: "--governance-port is empty" },
  { what: "wrap --governance-port that is not a port", command: "wrap", flags: ["--governance-port", "80a"], says: "--governance-port: expected a port number" },
  { what: "wrap --thoughtgate-config ''", command: "wrap", flags: ["--thoughtgate-config", ""], says: "--thoughtgate-config is empty" },
  { what: "THOUGHTGATE_CONFIG='' (wrap)", command: "wrap", flags: [], env: { THOUGHTGATE_CONFIG: "" }, says: "$THOUGHTGATE_CONFIG is empty" },
  { what: "wrap --profile ''", command: "wrap", flags: ["--profile", ""], says: "--profile is empty" },
  { what: "wrap --agent-type ''", command: "wrap", flags: ["--agent-type", ""], says: "--agent-type is empty" },
  { what: "arbiter --events ''", command: "arbiter", flags: ["--events", ""], says: "--events is empty" },
  { what: "arbiter --server-id ''", command: "arbiter", flags: ["--server-id", ""], says: "--server-id is empty" },
  { what: "arbiter --event-prefix ''", command: "arbiter", flags: ["--event-prefix", ""], says: "--event-prefix is empty" },
  { what: "arbiter --thoughtgate-config ''", command: "arbiter", flags: ["--thoughtgate-config", ""], says: "--thoughtgate-config is empty" },
  { what: "serve --thoughtgate-config ''", command: "serve", flags: ["--thoughtgate-config", ""], says: "--thoughtgate-config is empty" },
  { what: "serve --governance-port ''", command: "serve", flags: ["--governance-port", ""], says: "--governance-port is empty" },
];

describe("a setting given but empty or malformed stops the command (exit 2, one line)", () => {
  for (const { what, command, flags, env, says } of CASES) {
    test(what, async () => {
      using dir = tempDir();
      const started = join(dir.path, "started");
      const config = join(dir.path, "mcp.json");
      const original = `{ "mcpServers": { "notes": { "command": "node", "args": ["notes.js"] } } }\n`;
      writeFileSync(config, original);
      const endpoint = `http://127.0.0.1:${await closedPort()}`;
      const given = flags.map((flag) => (flag === "<closed>" ? endpoint : flag));
      const child = ["touch", started];
      const argv =
        command === "wrap"
          ? ["wrap", ...(given.includes("--agent-type") ? [] : ["--agent-type", "custom", "--config-path", config]), ...given, "--", ...child]
          : command === "serve"
            ? ["serve", ...given]
            : [command, ...given, "--", ...child];
      await using proc = Bun.spawn([requireBinary(), ...argv], { cwd: dir.path, stdin: "ignore", stdout: "pipe", stderr: "pipe", env: { ...process.env, ...env } });
      // A command that wrongly starts (serve would run until stopped) is stopped after a while; the assertions then fail.
      const timer = setTimeout(() => proc.kill("SIGKILL"), 10_000);
      const [stdout, stderr, code] = await Promise.all([new Response(proc.stdout).text(), new Response(proc.stderr).text(), proc.exited]);
      clearTimeout(timer);
      const lines = stderr.split("\n").filter((line) => line !== "" && !line.startsWith("[info] run `thoughtgate"));
      expect({ code, lines }).toEqual({ code: 2, lines: [expect.stringContaining(says)] });
      expect(lines[0]).toStartWith("[error] ");
      expect(stdout).toBe("");
      expect(existsSync(started)).toBe(false);
      expect(readFileSync(config, "utf8")).toBe(original);
    });
  }
});
