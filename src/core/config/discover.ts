import { existsSync } from "node:fs";
import { join, resolve } from "node:path";
import { configDir } from "../paths.ts";

/** How a config was found: the flag, the environment, the working directory, the user config dir, or the default. */
export type ConfigOrigin = "flag" | "env" | "cwd" | "user" | "embedded";

/**
 * Which file to load: `--thoughtgate-config`, `$THOUGHTGATE_CONFIG`, `./thoughtgate.yaml`,
 * `~/.config/thoughtgate/thoughtgate.yaml`; null when none exists. A file that was asked for
 * (flag or environment) must exist: that is checked by `loadConfig`, not skipped here.
 */
export function discoverConfig(flag: string | undefined, env: NodeJS.ProcessEnv = process.env, cwd = process.cwd()):
  { file: string; origin: ConfigOrigin } | null {
  if (flag) return { file: resolve(cwd, flag), origin: "flag" };
  if (env.THOUGHTGATE_CONFIG) return { file: resolve(cwd, env.THOUGHTGATE_CONFIG), origin: "env" };
  const local = join(cwd, "thoughtgate.yaml");
  if (existsSync(local)) return { file: local, origin: "cwd" };
  const user = join(configDir(env), "thoughtgate.yaml");
  if (existsSync(user)) return { file: user, origin: "user" };
  return null;
}

