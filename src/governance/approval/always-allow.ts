import { randomBytes } from "node:crypto";
import { closeSync, constants, existsSync, fchmodSync, fsyncSync, mkdirSync, openSync, realpathSync, renameSync, statSync, unlinkSync, writeSync } from "node:fs";
import { basename, dirname, join } from "node:path";
import { isDeepStrictEqual } from "node:util";
import { discoveryPaths } from "../../core/config/discover.ts";
import { readPolicyFile } from "../../core/config/read-file.ts";
import type { Rule } from "../../core/config/schema.ts";
import { bestEffort, messageOf } from "../../core/errors.ts";
import { INVISIBLE_CHARACTERS_SOURCE, showInvisible } from "../../core/visible-text.ts";
import { redactText } from "../../telemetry/redact.ts";
import { EMBEDDED_DEFAULT_YAML } from "../engine/default-policy.ts";
import type { EvaluateInput, ServerProgram } from "../verdict/decider.ts";
import { placeOf } from "../../core/project.ts";
import { GovernanceEngine, type PolicyEngine } from "../engine/engine.ts";
import type { PolicyInForce } from "../engine/policy.ts";
import { insertRule, type RuleText } from "./policy-edit.ts";
import { StrictestOf } from "../engine/strictest-of.ts";
import { ALWAYS_RULE_PREFIX, type AlwaysCall, type AlwaysHow, type AlwaysResult, type AlwaysWriter } from "../verdict/always-rule.ts";

export type AlwaysAllowContext = {
  /** The policy in force now. */
  policy(): PolicyInForce;
  /** Load the policy files again (the engine holder's reload); false when that failed. */
  reload(): Promise<boolean>;
  env: NodeJS.ProcessEnv;
  /** The working directory discovery uses (where the user's file is looked up from). */
  cwd: string;
  /** Where the decision came from, for the comment: `wrap session <run id>`, `thoughtgate serve (pid N)`. */
  origin: string;
  now(): Date;
};

export type { AlwaysCall, AlwaysHow, AlwaysResult, AlwaysWriter };

export function alwaysWriter(ctx: AlwaysAllowContext): AlwaysWriter {
  return {
    plan: (call) => {
      const planned = planRule(call, ctx);
      return planned.ok ? null : planned.reason;
    },
    write: (call, how) => alwaysAllow(call, how, ctx),
  };
}

const INVISIBLE = new RegExp(INVISIBLE_CHARACTERS_SOURCE, "u");

/**
 * "Always allow this tool on this server": a rule in the user's policy file,
 * `~/.config/thoughtgate/thoughtgate.yaml`, created from the embedded default when there is none,
 * kept to the session's project (`project:`) unless the person chose everywhere. The rule goes
 * right above the rule that asked, so every rule before it still decides first; for a Cedar rule
 * it keeps the Cedar check and drops only the question. A project's policy file is never written,
 * and an explicitly given one (`--thoughtgate-config`) is not the user's. Before the file is
 * replaced, the edited policy is loaded (with the project's policy, as in force) and must forward
 * this very call; then the running service reloads it.
 */
export function alwaysAllow(call: AlwaysCall, how: AlwaysHow, ctx: AlwaysAllowContext): Promise<AlwaysResult> {
  // One at a time: two clicks at once would each edit the same text, the second writing over the first's rule.
  const run = writing.then(() => addRule(call, how, ctx));
  writing = run.then(
    () => undefined,
    () => undefined,
  );
  return run;
}

let writing: Promise<void> = Promise.resolve();

type Planned = { ok: true; index: number; rules: Rule[]; input: EvaluateInput } | { ok: false; reason: string };

/** The checks made before anything is written: the policy is the user's, the names are plain, the user's policy is what asks. */
function planRule(call: Omit<AlwaysCall, "id">, ctx: AlwaysAllowContext): Planned {
  // One line, whatever the names hold: it is shown on the page and logged.
  const refuse = (reason: string): Planned => ({ ok: false, reason: refusal(call, reason) });
  const { base, restriction } = ctx.policy();
  if (base.origin === "flag" || base.origin === "env") {
    return refuse(`the policy in force is ${base.file}, given ${base.origin === "flag" ? "with --thoughtgate-config" : "by $THOUGHTGATE_CONFIG"}, not your policy file; add a rule there`);
  }
  // The rule names the program the person saw served this tool: without it, any server a
  // repository gives the same id would be allowed too.
  if (!call.server) return refuse("its shim did not say what runs the server, so a rule could not name it");
  for (const [what, value] of [["server id", call.serverId], ["name", call.name]] as const) {
    if (/[*?]/.test(value)) return refuse(`its ${what} holds * or ?, which a rule would read as a pattern matching other names`);
    if (INVISIBLE.test(value)) return refuse(`its ${what} holds invisible or control characters`);
  }
  // Checked where the call was made (its project): a rule kept to that project must decide it.
  const input: EvaluateInput = {
    serverId: call.serverId,
    server: call.server,
    method: call.method,
    name: call.name,
    arguments: call.arguments,
    ...(call.annotations ? { annotations: call.annotations } : {}),
    ...(call.project !== undefined ? { place: placeOf(call.project, call.project) } : {}),
  };
  const asked = base.engine.evaluate(input);
  if (asked.kind !== "approve") {
    return refuse(restriction ? `the approval is asked by the project's policy ${restriction.file}, which ThoughtGate never edits` : "the policy in force no longer asks about this call");
  }
  const rules = base.engine.config.governance.rules;
  const index = asked.ruleId === "defaults" ? rules.length : rules.findIndex((rule, i) => (rule.id ?? `rules[${i}]`) === asked.ruleId);
  if (index < 0) return refuse(`rule ${asked.ruleId} is not in your policy file`);
  return { ok: true, index, rules, input };
}

function refusal(call: Pick<AlwaysCall, "serverId" | "name">, reason: string): string {
  return showInvisible(redactText(`cannot always allow ${call.serverId}.${call.name}: ${reason}`));
}

async function addRule(call: AlwaysCall, how: AlwaysHow, ctx: AlwaysAllowContext): Promise<AlwaysResult> {
  const refuse = (reason: string): AlwaysResult => ({ ok: false, reason: refusal(call, reason) });
  const planned = planRule(call, ctx);
  if (!planned.ok) return planned;
  const { index, rules, input } = planned;
  const { base, restriction } = ctx.policy();
  const project = how.alwaysScope === "project" ? call.project : undefined;
  if (how.alwaysScope === "project" && project === undefined) return refuse("the session's project is not known; choose everywhere");

  const file = base.file ?? discoveryPaths(ctx.env, ctx.cwd).user;
  let current: string;
  try {
    current = base.file ? readPolicyFile(base.file) : unchangedDefault(file, ctx);
  } catch (error) {
    return refuse(messageOf(error));
  }
  if (!call.server) return refuse("its shim did not say what runs the server, so a rule could not name it");
  const rule = ruleFor(call, call.server, rules[index], rules, project);
  const where = project === undefined ? "" : ` in ${project}`;
  const comment = `Added ${ctx.now().toISOString()} by "always allow" ${how.by} (${ctx.origin}, task ${call.id}): ${call.serverId}.${call.name} runs without asking${where} when the program under "server" serves it.`;
  const edited = insertRule(current, index, rule, comment);
  if (!edited.ok) return refuse(`${file}: ${edited.reason}`);

  const target = existsSync(file) ? realpathSync(file) : file;
  const temp = join(dirname(target), `.${basename(target)}.thoughtgate-${process.pid}-${randomBytes(4).toString("hex")}.tmp`);
  try {
    mkdirSync(dirname(target), { recursive: true, mode: 0o700 });
    writeNew(temp, edited.text, existsSync(target) ? statSync(target).mode & 0o777 : 0o600);
    const loaded = await loadAsUser(temp, ctx.env);
    if (!sameRulesBut(loaded.config.governance.rules, rules, index)) return refuse(`${file} changed while the rule was being added; try again`);
    const engine: PolicyEngine = restriction ? new StrictestOf(loaded, restriction.engine) : loaded;
    const after = engine.evaluate(input);
    if (after.kind !== "forward") return refuse(`even with the rule, ${after.kind === "deny" ? after.block.reason : after.reason}`);
    renameSync(temp, target);
  } catch (error) {
    return refuse(messageOf(error));
  } finally {
    bestEffort(() => existsSync(temp) && unlinkSync(temp));
  }
  const reloaded = await ctx.reload();
  const note = `always allowed${where}: rule ${rule.id} added to ${file}${reloaded ? "" : " (the running service could not reload it; it applies from the next start)"}`;
  return { ok: true, file, ruleId: rule.id, note };
}

/** No user file was in force: start from the embedded default, which applied until now, unless one has appeared meanwhile. */
function unchangedDefault(file: string, ctx: AlwaysAllowContext): string {
  if (existsSync(file)) throw new Error(`${file} appeared while the embedded default policy was in force; try again in a moment`);
  return `# ThoughtGate policy (docs/governance.md). Created ${ctx.now().toISOString()} by "always allow"
# (${ctx.origin}) from the embedded default policy, which applied until then.
${EMBEDDED_DEFAULT_YAML}`;
}

/**
 * Forward this tool on this server (its id and its program; in `project`, when given: the rule's
 * `project:` key, which the engine matches against the session's project); a Cedar rule's check
 * stays (only its question goes).
 */
function ruleFor(call: AlwaysCall, server: ServerProgram, asking: Rule | undefined, rules: Rule[], project: string | undefined): RuleText {
  const slug = (text: string) => text.replace(/[^A-Za-z0-9_.-]/g, "_").slice(0, 40);
  const stem = `${ALWAYS_RULE_PREFIX}${slug(call.serverId)}-${slug(call.name)}`;
  const taken = new Set(rules.map((rule, i) => rule.id ?? `rules[${i}]`));
  let id = stem;
  for (let n = 2; taken.has(id); n++) id = `${stem}-${n}`;
  const common = { id, match: call.name, method: call.method, source: call.serverId, server: server.url !== null ? { url: server.url } : { command: server.command }, ...(project !== undefined ? { project } : {}) };
  if (asking?.action === "policy") return { ...common, action: "policy", ...(asking.policy_id ? { policy_id: asking.policy_id } : {}) };
  return { ...common, action: "forward" };
}

async function loadAsUser(file: string, env: NodeJS.ProcessEnv): Promise<GovernanceEngine> {
  const { loadConfigFile } = await import("../../core/config/load.ts");
  const loaded = loadConfigFile({ file, origin: "user" }, env);
  return GovernanceEngine.fromConfig(loaded.config, loaded.file);
}

/** The rules now are the ones in force with exactly one more at `index`: the file did not change under us. */
function sameRulesBut(now: Rule[], before: Rule[], index: number): boolean {
  return now.length === before.length + 1 && isDeepStrictEqual([...now.slice(0, index), ...now.slice(index + 1)], before);
}

/** A new file (O_EXCL, never through a link) with `mode`, written and flushed; the caller renames it into place. */
function writeNew(path: string, text: string, mode: number): void {
  const fd = openSync(path, constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL | constants.O_NOFOLLOW, 0o600);
  try {
    // The file keeps its mode (a new one is 0600); set after the open, which the umask filtered.
    fchmodSync(fd, mode);
    const bytes = Buffer.from(text, "utf8");
    let offset = 0;
    while (offset < bytes.length) offset += writeSync(fd, bytes, offset);
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
}
