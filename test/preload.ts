import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

// `bun run test` (test/run.ts) already starts bun test with a temp HOME that every spawned binary
// inherits. Run directly (`bun test file`), in-process code still gets a temp HOME here — but
// processes a test spawns do not see process.env changes, so prefer `bun run test -- <file>`.
if (!process.env.TG_TEST_HOME) {
  const home = mkdtempSync(join(tmpdir(), "thoughtgate-test-home-"));
  process.env.HOME = home;
  process.env.XDG_CONFIG_HOME = join(home, ".config");
  process.env.XDG_STATE_HOME = join(home, ".local", "state");
  process.env.XDG_DATA_HOME = join(home, ".local", "share");
}
for (const key of Object.keys(process.env)) {
  if (key.startsWith("THOUGHTGATE_")) delete process.env[key];
}
