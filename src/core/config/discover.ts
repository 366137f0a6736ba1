import { existsSync, realpathSync } from "node:fs";
import { join, resolve } from "node:path";
import { ThoughtGateError } from "../errors.ts";
import { configDir, MACHINE_DIR } from "../paths.ts";

/**
 * The organisation's policy on a machine set up by MDM (src/governance/engine/organisation.ts,
 * docs/team.md): its URL, the file holding its public key, and optionally its max_stale and
 * refresh. They apply whatever policy file is in force.
 */
export const ORG_URL_ENV = "THOUGHTGATE_ORG_POLICY_URL";
export const ORG_KEY_ENV = "THOUGHTGATE_ORG_POLICY_KEY_FILE";
export const ORG_MAX_STALE_ENV = "THOUGHTGATE_ORG_POLICY_MAX_STALE";
export const ORG_REFRESH_ENV = "THOUGHTGATE_ORG_POLICY_REFRESH";

/**
 * The same settings in a file of the machine's (docs/team.md): what a managed setup writes, read
 * by every thoughtgate whatever environment its agent gave it, and before the variables above.
 */
export const MACHINE_ORGANISATION_FILE = join(MACHINE_DIR, "organisation.yaml");

/** How a file was found: the flag, the environment, the user config dir, or the working directory (a project). */
export type ConfigOrigin = "flag" | "env" | "user" | "project";

export type PolicyFile = { file: string; origin: ConfigOrigin };

/**
 * Which policy files are in force.
 * - `explicit`: `--thoughtgate-config` or `$THOUGHTGATE_CONFIG` names one file, and it alone
 *   applies (whether it exists is checked when it is loaded, never skipped).
 * - `layered`: the user's `~/.config/thoughtgate/thoughtgate.yaml` (null: the embedded default
 *   policy) restricted by the project's `./thoughtgate.yaml` when there is one. The project file
 *   comes with whatever repository is in the working directory, so it may only add restrictions
 *   (docs/governance.md, "Where the policy comes from").
 */
export type Discovery =
  | { mode: "explicit"; file: PolicyFile }
  | { mode: "layered"; user: PolicyFile | null; project: PolicyFile | null };

/** The file names discovery looks at for `layered` policies, whether or not they exist (to watch them). */
export function discoveryPaths(env: NodeJS.ProcessEnv = process.env, cwd = process.cwd()): { user: string; project: string } {
  return { user: join(configDir(env), "thoughtgate.yaml"), project: join(cwd, "thoughtgate.yaml") };
}

export function discoverPolicy(flag: string | undefined, env: NodeJS.ProcessEnv = process.env, cwd = process.cwd()): Discovery {
  // Given but empty is an error, never "not given": an unset ${VAR} would otherwise fall back to discovery.
  if (flag !== undefined && flag.trim() === "") throw new ThoughtGateError("USAGE", "--thoughtgate-config is empty: give a policy file or leave it out");
  if (env.THOUGHTGATE_CONFIG !== undefined && env.THOUGHTGATE_CONFIG.trim() === "") throw new ThoughtGateError("USAGE", "$THOUGHTGATE_CONFIG is empty: give a policy file or unset it");
  if (flag) return { mode: "explicit", file: { file: resolve(cwd, flag), origin: "flag" } };
  if (env.THOUGHTGATE_CONFIG) return { mode: "explicit", file: { file: resolve(cwd, env.THOUGHTGATE_CONFIG), origin: "env" } };
  const paths = discoveryPaths(env, cwd);
  const user = existsSync(paths.user) ? { file: paths.user, origin: "user" as const } : null;
  // Working in the user config directory itself: its thoughtgate.yaml is the user's, not a project's.
  const project = existsSync(paths.project) && !(user && sameFile(user.file, paths.project)) ? { file: paths.project, origin: "project" as const } : null;
  return { mode: "layered", user, project };
}

/** The files a discovery names, in the order they apply. */
export function policyFiles(discovery: Discovery): PolicyFile[] {
  if (discovery.mode === "explicit") return [discovery.file];
  return [discovery.user, discovery.project].filter((file): file is PolicyFile => file !== null);
}

function sameFile(a: string, b: string): boolean {
  try {
    return realpathSync(a) === realpathSync(b);
  } catch {
    return a === b;
  }
}
