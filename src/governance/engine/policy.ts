import { existsSync } from "node:fs";
import { discoverPolicy, type ConfigOrigin, type Discovery, type PolicyFile } from "../../core/config/discover.ts";
import type { LoadedConfig } from "../../core/config/load.ts";
import type { ThoughtGateConfig } from "../../core/config/schema.ts";
import { messageOf } from "../../core/errors.ts";
import { EMBEDDED_DEFAULT } from "./default-policy.ts";
import { GovernanceEngine, type PolicyEngine } from "./engine.ts";
import { StrictestOf } from "./strictest-of.ts";

/** One policy in force: its engine, and its file (null: the embedded default). */
export type PolicyLayer = { engine: GovernanceEngine } & ({ file: null; origin: "embedded" } | { file: string; origin: ConfigOrigin });

/**
 * What decides: `base` alone (an explicit file, the user's file or the embedded default), or
 * `base` restricted by a project's file, the stricter decision winning (`StrictestOf`).
 */
export type PolicyInForce = { engine: PolicyEngine; base: PolicyLayer; restriction: PolicyLayer | null };

export function embeddedDefault(): PolicyInForce {
  const engine = new GovernanceEngine(EMBEDDED_DEFAULT, null, "embedded default policy");
  return { engine, base: { engine, file: null, origin: "embedded" }, restriction: null };
}

/**
 * Load the policy discovery finds (docs/governance.md, "Where the policy comes from"). The schema
 * (valibot) and the YAML parser are imported only when there is a file to read: a shim on the
 * embedded default never loads them. A file that is missing (when asked for), unreadable or
 * invalid throws a CONFIG error: never a silent fallback (docs/architecture.md, decision 3).
 */
export async function loadPolicyInForce(discovery: Discovery, env: NodeJS.ProcessEnv = process.env): Promise<PolicyInForce> {
  if (discovery.mode === "layered" && !discovery.user && !discovery.project) return embeddedDefault();
  const { loadPolicy } = await import("../../core/config/load.ts");
  const loaded = loadPolicy(discovery, env);
  if (loaded.mode === "explicit") return single(await layer(loaded.file));
  const base = loaded.user ? await layer(loaded.user) : embeddedDefault().base;
  if (!loaded.project) return single(base);
  const restriction = await layer(loaded.project);
  return { engine: new StrictestOf(base.engine, restriction.engine), base, restriction };
}

/** `loadPolicyInForce` for `--thoughtgate-config` (or undefined) and the working directory. */
export async function discoverAndLoad(flag: string | undefined, env: NodeJS.ProcessEnv = process.env, cwd = process.cwd()): Promise<PolicyInForce> {
  return loadPolicyInForce(discoverPolicy(flag, env, cwd), env);
}

/** The files in force, in the order they apply (empty: the embedded default alone). */
export function filesInForce(policy: PolicyInForce): string[] {
  return [policy.base.file, policy.restriction?.file ?? null].filter((file): file is string => file !== null);
}

/**
 * Which policy is in force, in words, for `run_start.policy`, banners and `validate-config
 * --explain`: `/path/policy.yaml` (given explicitly), `user policy X`, `user policy X, restricted by
 * project policy Y`, `embedded default policy, restricted by project policy Y`, or
 * `embedded-default`.
 */
export function policyLabel(policy: PolicyInForce): string {
  const { base, restriction } = policy;
  if (!restriction) {
    if (base.origin === "embedded") return "embedded-default";
    return base.origin === "user" ? `user policy ${base.file}` : base.file;
  }
  const first = base.origin === "embedded" ? "embedded default policy" : `user policy ${base.file}`;
  return `${first}, restricted by project policy ${restriction.file}`;
}

/**
 * One policy file checked as loading it would: read, parsed, validated (as a project's when it is
 * one), placed (a project's Cedar files inside the project), and its Cedar policies compiled.
 * `problems` are `path: message` lines; `unreadable` one line naming the file.
 * `validate-config` prints these; `doctor` reports the first.
 */
export type PolicyFileCheck = { ok: true; loaded: LoadedConfig } | { ok: false; problems: string[] } | { ok: false; unreadable: string };

export async function checkPolicyFile(found: PolicyFile, env: NodeJS.ProcessEnv = process.env): Promise<PolicyFileCheck> {
  if (!existsSync(found.file)) return { ok: false, unreadable: `${found.file}: no such file` };
  const { loadConfigFile, parseConfig } = await import("../../core/config/load.ts");
  const { readPolicyFile } = await import("../../core/config/read-file.ts");
  let text: string;
  try {
    text = readPolicyFile(found.file);
  } catch (error) {
    return { ok: false, unreadable: messageOf(error) };
  }
  const parsed = parseConfig(text, env, found.origin === "project" ? "project" : "user");
  if (!parsed.ok) return { ok: false, problems: parsed.problems.map((p) => `${p.path}: ${p.message}`) };
  let loaded: LoadedConfig;
  try {
    loaded = loadConfigFile(found, env);
  } catch (error) {
    return { ok: false, unreadable: messageOf(error) };
  }
  try {
    await GovernanceEngine.fromConfig(loaded.config, loaded.file);
  } catch (error) {
    return { ok: false, problems: [`cedar: ${messageOf(error)}`] };
  }
  return { ok: true, loaded };
}

async function layer(loaded: LoadedConfig): Promise<PolicyLayer> {
  return { engine: await GovernanceEngine.fromConfig(loaded.config, loaded.file), file: loaded.file, origin: loaded.origin };
}

function single(base: PolicyLayer): PolicyInForce {
  return { engine: base.engine, base, restriction: null };
}

/**
 * Rules "always allow" wrote before such rules named their server's program (`always-allow-…`
 * without `server:`): each allows its tool from any server of that id, a repository's server of
 * the same name too. They keep working as written; this says so, once per load, with the way out.
 */
export function unboundAlwaysAllowRules(config: ThoughtGateConfig, file: string): string[] {
  return config.governance.rules
    .filter((rule) => rule.id?.startsWith("always-allow-") && rule.server === undefined && rule.action !== "deny")
    .map(
      (rule) =>
        `${file}: rule ${rule.id} (written by "always allow" before such rules named their server's program) allows ${rule.source ?? "*"}.${rule.match} from any server with that id, also a repository's server of that name; allow the tool again from the approvals page (the new rule names the command), or add to the rule \`server: { command: [the command and its arguments] }\` (or \`{ url: … }\`)`,
    );
}
