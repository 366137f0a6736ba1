import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

// Every test run gets its own HOME and XDG dirs so nothing reads or writes the developer's real config.
const home = mkdtempSync(join(tmpdir(), "thoughtgate-test-home-"));
process.env.HOME = home;
process.env.XDG_CONFIG_HOME = join(home, ".config");
process.env.XDG_STATE_HOME = join(home, ".local", "state");
process.env.XDG_DATA_HOME = join(home, ".local", "share");
for (const key of Object.keys(process.env)) {
  if (key.startsWith("THOUGHTGATE_")) delete process.env[key];
}
