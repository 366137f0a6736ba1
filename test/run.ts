/**
 * `bun run test` after the build: `bun test` with HOME and the XDG dirs in a fresh temp directory
 * and no `THOUGHTGATE_*` variables. Set here, in the environment `bun test` starts with, because
 * what a preload assigns to `process.env` does not reach processes started with `Bun.spawn`: every
 * compiled binary a test starts must also see the temp HOME, never the developer's real config,
 * journal or session records. Extra arguments go to `bun test` (e.g. a file to run).
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

const home = mkdtempSync(join(tmpdir(), "thoughtgate-test-home-"));
const env: Record<string, string> = {};
for (const [key, value] of Object.entries(process.env)) {
  if (value !== undefined && !key.startsWith("THOUGHTGATE_")) env[key] = value;
}
Object.assign(env, {
  HOME: home,
  XDG_CONFIG_HOME: join(home, ".config"),
  XDG_STATE_HOME: join(home, ".local", "state"),
  XDG_DATA_HOME: join(home, ".local", "share"),
  TG_TEST_HOME: home,
});
const tests = Bun.spawn([process.execPath, "test", "--timeout", "60000", ...process.argv.slice(2)], {
  env,
  stdin: "inherit",
  stdout: "inherit",
  stderr: "inherit",
});
const forward = (signal: NodeJS.Signals) => () => tests.kill(signal);
process.on("SIGINT", forward("SIGINT"));
process.on("SIGTERM", forward("SIGTERM"));
const code = await tests.exited;
rmSync(home, { recursive: true, force: true });
process.exit(code);
