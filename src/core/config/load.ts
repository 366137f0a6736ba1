import { existsSync, realpathSync } from "node:fs";
import { dirname, isAbsolute, join, relative, resolve, sep } from "node:path";
import * as v from "valibot";
import { ThoughtGateError } from "../errors.ts";
import { didYouMean } from "../suggest.ts";
import { discoverPolicy, type ConfigOrigin, type Discovery, type PolicyFile } from "./discover.ts";
import { expandEnv, type Layer } from "./expand.ts";
import { readPolicyFile } from "./read-file.ts";
import { configSchema, type ThoughtGateConfig } from "./schema.ts";
import { locateInYaml, parseYaml, type TextPosition } from "./yaml.ts";

/** One problem of a policy file: the field, what is wrong, and where in the file (when it is there). */
export type ConfigProblem = { path: string; message: string } & Partial<TextPosition>;

export type LoadedConfig = {
  config: ThoughtGateConfig;
  /** Absolute path of the file. */
  file: string;
  /** How it was found: the flag, the environment, the user config dir, or the working directory. */
  origin: ConfigOrigin;
};

/** The files in force, loaded: one explicit file, or the user's (null: the embedded default) and the project's. */
export type LoadedPolicy =
  | { mode: "explicit"; file: LoadedConfig }
  | { mode: "layered"; user: LoadedConfig | null; project: LoadedConfig | null };

export { discoverPolicy };

export type ParseResult = { ok: true; config: ThoughtGateConfig } | { ok: false; problems: ConfigProblem[] };

/**
 * Settings only the user's own policy may hold: each sends data somewhere (OTLP export), says who
 * may decide (`cli`), or names where policy comes from (the organisation's), which a repository's
 * policy must never choose. A project policy may only add restrictions.
 */
const USER_ONLY_KEYS = ["telemetry", "cli", "policy"] as const;

/**
 * Parse and validate YAML text. Every problem comes with its field path. `layer` says whose file it
 * is: a project's expands no `${VAR}` and may not hold user-only settings.
 */
export function parseConfig(text: string, env: NodeJS.ProcessEnv = process.env, layer: Layer = "user"): ParseResult {
  const yaml = parseYaml(text);
  if (!yaml.ok) return { ok: false, problems: yaml.problems.map((problem) => ({ path: "(file)", ...problem, message: `not valid YAML: ${problem.message}` })) };
  const raw = yaml.value;
  if (raw === null || typeof raw !== "object" || Array.isArray(raw)) {
    return { ok: false, problems: [{ path: "(file)", message: "expected a YAML mapping starting with `schema: 1`" }] };
  }
  const placed = (problems: PlacedProblem[]): ParseResult => ({ ok: false, problems: problems.map((problem) => withPlace(text, problem)) });
  if (layer === "project") {
    const userOnly = USER_ONLY_KEYS.filter((key) => key in raw);
    if (userOnly.length > 0) {
      return placed(userOnly.map((key) => ({ key: true, path: key, message: "only the user's policy may set this; a project policy may only add restrictions" })));
    }
  }
  const expansionProblems: ConfigProblem[] = [];
  const expanded = expandEnv(raw, env, layer, expansionProblems);
  // The schema is checked even when expansion found problems, so every problem shows at once; a
  // `${…}` under a misspelt key (`argumets:`) is the misspelling's, reported once as an unknown key.
  const parsed = v.safeParse(configSchema, expanded);
  if (!parsed.success || expansionProblems.length > 0) {
    const schemaProblems = parsed.success ? [] : withoutEchoes(parsed.issues).map(schemaProblem);
    const unknownKeys = schemaProblems.filter((problem) => problem.key).map((problem) => problem.path);
    const underUnknown = (path: string) => unknownKeys.some((key) => path === key || path.startsWith(`${key}.`) || path.startsWith(`${key}[`));
    // A value left unexpanded fails the schema too: the expansion's problem says why, once.
    const expansionPaths = new Set(expansionProblems.map((problem) => problem.path));
    const problems = [...schemaProblems.filter((problem) => !expansionPaths.has(problem.path)), ...expansionProblems.filter((problem) => !underUnknown(problem.path))];
    return placed(problems.sort((a, b) => (placeOf(text, a)?.line ?? 0) - (placeOf(text, b)?.line ?? 0)));
  }
  const problems = [...crossCheck(parsed.output), ...(layer === "project" ? projectOnlyProblems(parsed.output) : [])];
  return problems.length > 0 ? placed(problems) : { ok: true, config: parsed.output };
}

/** A problem; `key`: it is about the key itself (an unknown key), placed at the key rather than its value. */
type PlacedProblem = ConfigProblem & { key?: boolean };

function schemaProblem(issue: v.BaseIssue<unknown>): PlacedProblem {
  return { path: issuePath(issue), message: issue.message, key: issue.type === "strict_object" && issue.expected === "never" };
}

/** `governance.rules[0].match` → ["governance", "rules", 0, "match"]; "(root)" and "(file)" → []. */
function pathSegments(path: string): (string | number)[] {
  if (path.startsWith("(")) return [];
  return [...path.matchAll(/\[(\d+)\]|([^.[\]]+)/g)].map((match) => (match[1] !== undefined ? Number(match[1]) : (match[2] as string)));
}

function placeOf(text: string, problem: PlacedProblem): TextPosition | null {
  if (problem.path.startsWith("(")) return null;
  return locateInYaml(text, pathSegments(problem.path), problem.key ? "key" : "value");
}

function withPlace(text: string, problem: PlacedProblem): ConfigProblem {
  const place = placeOf(text, problem);
  return { path: problem.path, message: problem.message, ...(place ?? {}) };
}

/** `file:line:column: path: message`, as editors and terminals link it (the place when the file has it). */
export function problemLine(file: string, problem: ConfigProblem): string {
  const place = problem.line !== undefined && problem.column !== undefined ? `${file}:${problem.line}:${problem.column}: ` : "";
  return `${place}${problem.path}: ${problem.message}`;
}

/**
 * A Slack destination sends every call it asks about (and a token) to a server it names, and lets the
 * users it lists decide: a repository's policy must choose neither. Combined with the user's policy,
 * a project's workflow would otherwise be the one used (`any` yields to it).
 */
function projectOnlyProblems(config: ThoughtGateConfig): ConfigProblem[] {
  return Object.entries(config.approval)
    .filter(([, workflow]) => workflow.destination.type === "slack")
    .map(([name]) => ({
      path: `approval.${name}.destination`,
      message: "only the user's policy may send approvals to Slack (it chooses where each call is sent and who may approve it); a project policy may only add restrictions",
    }));
}

/**
 * Load one file (bounded read, parse, validate, Cedar paths made absolute). A project file must lie
 * in the project directory, and so must the Cedar files it names: a repository's policy cannot
 * read the user's other files (`thoughtgate.yaml -> ~/.ssh/id_ed25519`, `cedar.policies:
 * [../../.aws/credentials]`) and echo them in a parse error. Throws CONFIG errors.
 */
export function loadConfigFile(found: PolicyFile, env: NodeJS.ProcessEnv = process.env): LoadedConfig {
  const layer: Layer = found.origin === "project" ? "project" : "user";
  const name = layer === "project" ? `${found.file} (project policy)` : found.file;
  if (!existsSync(found.file)) {
    const how = found.origin === "flag" ? "given by --thoughtgate-config" : found.origin === "env" ? "given by $THOUGHTGATE_CONFIG" : "it disappeared";
    throw new ThoughtGateError("CONFIG", `${found.file}: no such file (${how})`);
  }
  const base = dirname(found.file);
  if (layer === "project" && !inside(found.file, base)) {
    throw new ThoughtGateError("CONFIG", `${name}: it is a link to a file outside the project directory ${base}; a project policy must be a file in the project`);
  }
  const result = parseConfig(readPolicyFile(found.file), env, layer);
  if (!result.ok) throw new ThoughtGateError("CONFIG", formatProblems(name, result.problems, found.file));
  const config = resolvePaths(result.config, base);
  if (layer === "project" && config.cedar) {
    const outside = [...config.cedar.policies, ...(config.cedar.schema ? [config.cedar.schema] : [])].filter((file) => !inside(file, base));
    if (outside.length > 0) {
      throw new ThoughtGateError("CONFIG", formatProblems(name, outside.map((file) => ({ path: "cedar", message: `${file} is outside the project directory ${base}; a project policy may only name Cedar files in the project` }))));
    }
  }
  return { config, file: found.file, origin: found.origin };
}

/** Load one file given by path, as `--thoughtgate-config` does (relative to `cwd`). */
export function loadConfig(file: string, env: NodeJS.ProcessEnv = process.env, cwd = process.cwd()): LoadedConfig {
  return loadConfigFile({ file: resolve(cwd, file), origin: "flag" }, env);
}

/** Load every file a discovery names. Any one that is missing (when asked for) or invalid throws. */
export function loadPolicy(discovery: Discovery, env: NodeJS.ProcessEnv = process.env): LoadedPolicy {
  if (discovery.mode === "explicit") return { mode: "explicit", file: loadConfigFile(discovery.file, env) };
  return {
    mode: "layered",
    user: discovery.user ? loadConfigFile(discovery.user, env) : null,
    project: discovery.project ? loadConfigFile(discovery.project, env) : null,
  };
}

/** Whether `file`, with every link followed, is below `dir` (a file that does not exist yet: by its path). */
function inside(file: string, dir: string): boolean {
  const real = (path: string) => (existsSync(path) ? realpathSync(path) : resolve(path));
  const target = real(file);
  // A link to a pipe or socket (`/dev/stdin` -> `/proc/self/fd/0`) resolves to "pipe:[1234]", no path at all.
  if (!isAbsolute(target)) return false;
  const rel = relative(real(dir), target);
  return rel !== "" && rel !== ".." && !rel.startsWith(`..${sep}`) && !isAbsolute(rel);
}

function formatProblems(file: string, problems: ConfigProblem[], path = file): string {
  const lines = problems.map((p) => `  ${problemLine(path, p)}`);
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
        message: `no approval workflow named "${rule.approval}"${didYouMean(rule.approval, known)}${known.length ? `; defined: ${known.join(", ")}` : "; define it under approval:, or leave approval out to use the built-in default"}`,
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
  const pinWorkflow = config.pins.approval;
  if (pinWorkflow !== undefined && !(pinWorkflow in config.approval)) {
    problems.push({ path: "pins.approval", message: `no approval workflow named "${pinWorkflow}"${didYouMean(pinWorkflow, Object.keys(config.approval))}; define it under approval:, or leave it out to use the built-in default` });
  }
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

/**
 * `mach: x` in a rule is one mistake, not two: the unknown key already says `did you mean
 * "match"?`, so "a rule needs match" for the same mapping is left out.
 */
function withoutEchoes(issues: readonly v.BaseIssue<unknown>[]): v.BaseIssue<unknown>[] {
  const parent = (issue: v.BaseIssue<unknown>) => pathText(issue.path?.slice(0, -1) ?? []);
  const suggested = new Set(issues.filter((issue) => issue.type === "strict_object" && issue.expected === "never").map((issue) => `${parent(issue)}\u0000${/\(did you mean ("[^"]*")\?\)/.exec(issue.message)?.[1]}`));
  return issues.filter((issue) => !(issue.type === "strict_object" && issue.expected !== "never" && issue.input === undefined && suggested.has(`${parent(issue)}\u0000${issue.expected}`)));
}

function issuePath(issue: Pick<v.BaseIssue<unknown>, "path">): string {
  return pathText(issue.path ?? []);
}

function pathText(path: readonly v.IssuePathItem[]): string {
  if (path.length === 0) return "(root)";
  let out = "";
  for (const item of path) {
    const key = (item as { key: unknown }).key;
    out += typeof key === "number" ? `[${key}]` : out ? `.${String(key)}` : String(key);
  }
  return out;
}
