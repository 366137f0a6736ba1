/**
 * `doctor`'s policy check: which policy `wrap`, `serve` and a standalone shim would use here (the
 * files discovery finds, and from where), whether each is valid (the first problem in one line:
 * an invalid policy stops them, fail closed), and the profile in force.
 */
import { discoverPolicy, discoveryPaths, policyFiles, type PolicyFile } from "../core/config/discover.ts";
import type { ThoughtGateConfig } from "../core/config/schema.ts";
import { messageOf } from "../core/errors.ts";
import { isProfile } from "../core/profile.ts";
import { showInvisible } from "../core/visible-text.ts";
import { EMBEDDED_DEFAULT_WORDS } from "../governance/engine/default-policy.ts";
import { checkPolicyFile } from "../governance/engine/policy.ts";
import type { CheckBody, DoctorContext } from "./report.ts";

/** What the channels check needs to know of the policy: the valid files' configs (Slack lives there). */
export type PolicyFound = { body: CheckBody; configs: ThoughtGateConfig[]; valid: boolean };

const ORIGIN: Record<PolicyFile["origin"], string> = {
  flag: "given with --thoughtgate-config",
  env: "named by $THOUGHTGATE_CONFIG, used alone",
  user: "your policy",
  project: "this directory's project policy: it can only add restrictions to yours",
};

const EMBEDDED = `the embedded default policy (${EMBEDDED_DEFAULT_WORDS})`;

export async function checkPolicy({ env, cwd, home }: DoctorContext): Promise<PolicyFound> {
  const profile = profileOf(env);
  let files: PolicyFile[];
  try {
    files = policyFiles(discoverPolicy(undefined, env, cwd));
  } catch (error) {
    return { body: { status: "fail", summary: messageOf(error), details: [profile.line], data: { files: [], error: messageOf(error) } }, configs: [], valid: false };
  }
  const shown = (path: string) => (home && path.startsWith(`${home}/`) ? `~${path.slice(home.length)}` : path);
  const details: string[] = [];
  const configs: ThoughtGateConfig[] = [];
  const results: Array<{ file: string; origin: string; valid: boolean; error?: string }> = [];
  for (const found of files) {
    const result = await checkPolicyFile(found, env);
    if (result.ok) {
      configs.push(result.loaded.config);
      details.push(`${shown(found.file)} (${ORIGIN[found.origin]}): valid`);
      results.push({ file: found.file, origin: found.origin, valid: true });
      continue;
    }
    // Problems come as `file:line:column: path: message`; the file is named once, in front.
    const placed = (problem: string) => problem.replace(/^(.*):(\d+):(\d+): /, (whole, file: string, line: string, column: string) => (file === found.file ? `line ${line}, column ${column}: ` : whole));
    const error = "unreadable" in result ? result.unreadable : firstProblem(result.problems.map(placed));
    // A project's policy comes with the repository: what it holds is shown escaped, never run by the terminal.
    details.push(`${shown(found.file)} (${ORIGIN[found.origin]}): INVALID: ${showInvisible(error)}`);
    results.push({ file: found.file, origin: found.origin, valid: false, error });
  }
  const user = files.find((file) => file.origin !== "project");
  const project = files.find((file) => file.origin === "project");
  if (!user) details.unshift(`no ${shown(discoveryPaths(env, cwd).user)}: ${EMBEDDED}`);
  details.push(profile.line);
  const data = { files: results, embedded: !user, profile: profile.value };
  const invalid = results.filter((result) => !result.valid);
  if (invalid.length > 0) {
    const summary = `${invalid.map((r) => shown(r.file)).join(", ")} ${invalid.length === 1 ? "is" : "are"} invalid: wrap, serve and shims refuse to start on it (fail closed); \`thoughtgate validate-config\` lists every problem`;
    return { body: { status: "fail", summary, details, data }, configs, valid: false };
  }
  const base = user ? shown(user.file) : "the embedded default policy";
  const summary = project ? `${base}, restricted by ${shown(project.file)}` : base;
  if (!profile.ok) return { body: { status: "fail", summary: `${summary}; $THOUGHTGATE_PROFILE is invalid`, details, data }, configs, valid: true };
  return { body: { status: "pass", summary, details, data }, configs, valid: true };
}

/** The first problem, and how many more there are. */
function firstProblem(problems: string[]): string {
  const [first = "invalid", ...rest] = problems;
  return rest.length === 0 ? first : `${first} (and ${rest.length} more problem${rest.length === 1 ? "" : "s"})`;
}

/** The profile commands use without `--profile`. */
function profileOf(env: NodeJS.ProcessEnv): { ok: boolean; value: string | null; line: string } {
  const given = env.THOUGHTGATE_PROFILE;
  if (given === undefined) return { ok: true, value: "production", line: "profile production (the default; --profile development logs WOULD_BLOCK and forwards instead)" };
  if (isProfile(given)) return { ok: true, value: given, line: `profile ${given} (from $THOUGHTGATE_PROFILE)` };
  return { ok: false, value: null, line: `profile: $THOUGHTGATE_PROFILE=${JSON.stringify(given)} is neither production nor development: the commands that read it stop` };
}
