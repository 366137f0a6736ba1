import { existsSync, readFileSync } from "node:fs";
import { dirname, isAbsolute, join } from "node:path";
import * as v from "valibot";
import { ThoughtGateError } from "../errors.ts";
import { discoverConfig, type ConfigOrigin } from "./discover.ts";
import { expandEnv } from "./expand.ts";
import { configSchema, type ThoughtGateConfig } from "./schema.ts";

export type ConfigProblem = { path: string; message: string };

export type LoadedConfig = {
  config: ThoughtGateConfig;
  /** Absolute path of the file, or null for the embedded default. */
  file: string | null;
  /** How it was found: the flag, the environment, the working directory, the user config dir, or the default. */
  origin: ConfigOrigin;
};

export { discoverConfig };

export type ParseResult = { ok: true; config: ThoughtGateConfig } | { ok: false; problems: ConfigProblem[] };

/** Parse and validate YAML text. Every problem comes with its field path. */
export function parseConfig(text: string, env: NodeJS.ProcessEnv = process.env): ParseResult {
  let raw: unknown;
  try {
    raw = Bun.YAML.parse(text);
  } catch (error) {
    return { ok: false, problems: [{ path: "(file)", message: `not valid YAML: ${(error as Error).message}` }] };
  }
  if (raw === null || typeof raw !== "object" || Array.isArray(raw)) {
    return { ok: false, problems: [{ path: "(file)", message: "expected a YAML mapping starting with `schema: 1`" }] };
  }
  const expansionProblems: ConfigProblem[] = [];
  const expanded = expandEnv(raw, env, "", expansionProblems);
  if (expansionProblems.length > 0) return { ok: false, problems: expansionProblems };
  const parsed = v.safeParse(configSchema, expanded);
  if (!parsed.success) {
    return { ok: false, problems: parsed.issues.map((issue) => ({ path: issuePath(issue), message: issue.message })) };
  }
  const problems = crossCheck(parsed.output);
  return problems.length > 0 ? { ok: false, problems } : { ok: true, config: parsed.output };
}

/**
 * Load the config the user asked for (or discovered). A file that was asked for and is missing or
 * invalid is fatal: never a silent forward-all (docs/architecture.md, decision 3). No file at all → null, and the
 * caller uses the embedded default policy.
 */
export function loadConfig(flag: string | undefined, env: NodeJS.ProcessEnv = process.env, cwd = process.cwd()): LoadedConfig | null {
  const found = discoverConfig(flag, env, cwd);
  if (!found) return null;
  if (!existsSync(found.file)) {
    const how = found.origin === "flag" ? "--thoughtgate-config" : "$THOUGHTGATE_CONFIG";
    throw new ThoughtGateError("CONFIG", `${found.file}: no such file (given by ${how})`);
  }
  let text: string;
  try {
    text = readFileSync(found.file, "utf8");
  } catch (error) {
    throw new ThoughtGateError("CONFIG", `${found.file}: cannot read: ${(error as Error).message}`);
  }
  const result = parseConfig(text, env);
  if (!result.ok) throw new ThoughtGateError("CONFIG", formatProblems(found.file, result.problems));
  return { config: resolvePaths(result.config, dirname(found.file)), file: found.file, origin: found.origin };
}

export function formatProblems(file: string, problems: ConfigProblem[]): string {
  const lines = problems.map((p) => `  ${p.path}: ${p.message}`);
  return `${file}: ${problems.length} problem${problems.length === 1 ? "" : "s"}\n${lines.join("\n")}`;
}

/** Checks that span fields: references must point at something that exists. */
function crossCheck(config: ThoughtGateConfig): ConfigProblem[] {
  const problems: ConfigProblem[] = [];
  const seen = new Map<string, number>();
  config.sources.forEach((source, i) => {
    const first = seen.get(source.id);
    if (first !== undefined) problems.push({ path: `sources[${i}].id`, message: `duplicate id "${source.id}" (also sources[${first}])` });
    else seen.set(source.id, i);
  });
  const ruleIds = new Map<string, number>();
  config.governance.rules.forEach((rule, i) => {
    const at = `governance.rules[${i}]`;
    if (rule.id !== undefined) {
      const first = ruleIds.get(rule.id);
      if (first !== undefined) problems.push({ path: `${at}.id`, message: `duplicate rule id "${rule.id}" (also rules[${first}])` });
      else ruleIds.set(rule.id, i);
    }
    if (rule.approval !== undefined && !(rule.approval in config.approval)) {
      const known = Object.keys(config.approval);
      problems.push({
        path: `${at}.approval`,
        message: `no approval workflow named "${rule.approval}"${known.length ? ` (defined: ${known.join(", ")})` : "; define it under approval:, or leave approval out to use the built-in default"}`,
      });
    }
    if (rule.approval !== undefined && rule.action !== "approve" && rule.action !== "policy") {
      problems.push({ path: `${at}.approval`, message: `only rules with action approve or policy use an approval workflow (this one is ${rule.action})` });
    }
    if (rule.action === "policy" && !config.cedar) {
      problems.push({ path: `${at}.action`, message: "action policy needs Cedar policies: add cedar.policies" });
    }
    if (rule.policy_id !== undefined && rule.action !== "policy") {
      problems.push({ path: `${at}.policy_id`, message: `policy_id only applies to action policy (this one is ${rule.action})` });
    }
  });
  if (config.governance.defaults.action === "policy" && !config.cedar) {
    problems.push({ path: "governance.defaults.action", message: "action policy needs Cedar policies: add cedar.policies" });
  }
  return problems;
}

/** Policy and schema paths are relative to the config file. */
function resolvePaths(config: ThoughtGateConfig, base: string): ThoughtGateConfig {
  if (!config.cedar) return config;
  const abs = (p: string) => (isAbsolute(p) ? p : join(base, p));
  return {
    ...config,
    cedar: { policies: config.cedar.policies.map(abs), ...(config.cedar.schema ? { schema: abs(config.cedar.schema) } : {}) },
  };
}

function issuePath(issue: v.BaseIssue<unknown>): string {
  if (!issue.path || issue.path.length === 0) return "(root)";
  let out = "";
  for (const item of issue.path) {
    const key = (item as { key: unknown }).key;
    out += typeof key === "number" ? `[${key}]` : out ? `.${String(key)}` : String(key);
  }
  return out;
}
