import type { AuthorizationAnswer, CedarValueJson, DetailedError, StatefulAuthorizationCall } from "@cedar-policy/cedar-wasm/web";
import { basename } from "node:path";
import { readPolicyFile } from "../../core/config/read-file.ts";
import { ThoughtGateError } from "../../core/errors.ts";
import { ACTION_TYPE, indexPolicies, PRINCIPAL_TYPE, RESOURCE_TYPE, sliceKey, type ActionId, type PolicyIndex } from "./cedar-index.ts";
import { readScope, type Scope } from "./cedar-scope.ts";
import { SliceSets } from "./cedar-slices.ts";
import { loadCedar } from "./cedar-wasm.ts";

// The engine embedded in the binary. cedar-wasm's `nodejs` build would read its wasm from the build
// machine's node_modules at run time and fail with ENOENT on every other machine (cedar-wasm.ts).
const cedar = loadCedar();

/**
 * The Cedar gate (docs/governance.md, "Cedar", namespace `ThoughtGate`):
 *   principal  ThoughtGate::App::"<user>"
 *   action     ThoughtGate::Action::"tools/call" | ThoughtGate::Action::"mcp/method"
 *   resource   ThoughtGate::ToolCall::"<server>/<tool>" {name, server, arguments}
 *              ThoughtGate::McpMethod::"<server>/<method>" {method, server, name}
 *   context    {policy_id, source_id, time: {hour, day_of_week, timestamp}}
 * No entity has a parent: cedar-index.ts relies on it to evaluate only the policies whose scope can
 * match a request (their slice), which decides exactly as the whole set does (the equivalence test
 * in test/governance/engine/cedar-slicing.test.ts) at a cost that does not grow with policies scoped to
 * other tools. Slices are parsed once, on first use: parsing per call costs ~8× more
 * (docs/benchmarks.md).
 */
export type CedarRequest = {
  user: string;
  serverId: string;
  method: string;
  name: string;
  arguments: unknown;
  policyId: string | null;
  now?: Date;
};

export type CedarVerdict =
  | { decision: "allow" | "deny"; policies: string[] }
  | { decision: "error"; reason: string };

/**
 * Cedar's answer itself: the decision, the determining policies (the satisfied forbids of a deny,
 * the satisfied permits of an allow), and the policies that failed to evaluate, each sorted by id.
 * `failure`: the request could not be evaluated at all.
 */
export type CedarAnswer =
  | { type: "answer"; decision: "allow" | "deny"; determining: string[]; errors: { policyId: string; message: string }[] }
  | { type: "failure"; reason: string };

export type CedarSources = { policies: string[]; schema?: string };

export class CedarPolicies {
  private constructor(
    private readonly sets: SliceSets,
    private readonly index: PolicyIndex,
    readonly policyIds: string[],
    readonly files: CedarSources,
  ) {}

  /**
   * Parse (and, with a schema, validate) the policy files. Any problem throws a CONFIG error.
   * `mergedCopies`: how many policy copies the merged slices may hold (cedar-slices.ts).
   */
  static load(files: CedarSources, options: { mergedCopies?: number } = {}): CedarPolicies {
    const texts = new Map<string, string>();
    const scopes = new Map<string, Scope>();
    for (const file of files.policies) {
      const text = readText(file, "policy");
      const parts = cedar.policySetTextToParts(text);
      if (parts.type === "failure") throw configError(file, parts.errors);
      if (parts.policy_templates.length > 0) throw new ThoughtGateError("CONFIG", `${file}: policy templates are not supported`);
      parts.policies.forEach((policy, i) => {
        const id = /@id\(\s*"((?:[^"\\]|\\.)*)"\s*\)/.exec(policy)?.[1] ?? `${basename(file)}#${i}`;
        if (texts.has(id)) throw new ThoughtGateError("CONFIG", `${file}: duplicate policy id "${id}"`);
        texts.set(id, policy);
        scopes.set(id, scopeOf(file, policy));
      });
    }
    if (files.schema) {
      const schema = readText(files.schema, "schema");
      const answer = cedar.validate({ schema, policies: { staticPolicies: Object.fromEntries(texts) }, validationSettings: { mode: "strict" } });
      if (answer.type === "failure") throw configError(files.schema, answer.errors);
      if (answer.validationErrors.length > 0) {
        const lines = answer.validationErrors.map((e) => `  policy ${e.policyId}: ${e.error.message}`);
        throw new ThoughtGateError("CONFIG", `Cedar policies do not match the schema ${files.schema}:\n${lines.join("\n")}`);
      }
    }
    const index = indexPolicies(scopes);
    let sets: SliceSets;
    try {
      sets = new SliceSets(texts, index, options.mergedCopies);
    } catch (error) {
      throw new ThoughtGateError("CONFIG", `${files.policies.join(", ")}: ${(error as Error).message}`);
    }
    return new CedarPolicies(sets, index, [...texts.keys()], files);
  }

  /** `over`: as `authorize`'s; only the bench asks for `"full"`. */
  evaluate(request: CedarRequest, over: "sliced" | "full" = "sliced"): CedarVerdict {
    const answer = this.authorize(request, over);
    if (answer.type === "failure") return { decision: "error", reason: answer.reason };
    // A policy that errored (e.g. a missing attribute) could have been a forbid: fail closed.
    if (answer.errors.length > 0 && answer.decision === "allow") {
      return { decision: "error", reason: answer.errors.map((e) => `${e.policyId}: ${e.message}`).join("; ") };
    }
    return { decision: answer.decision, policies: answer.determining };
  }

  /**
   * Cedar's answer for the request, from the request's slice (`"sliced"`) or from every policy
   * (`"full"`: what the slices are proven against, and the bench's baseline).
   */
  authorize(request: CedarRequest, over: "sliced" | "full" = "sliced"): CedarAnswer {
    const action: ActionId = request.method === "tools/call" ? "tools/call" : "mcp/method";
    const resource = { type: RESOURCE_TYPE[action], id: `${request.serverId}/${action === "tools/call" ? request.name : request.method}` };
    const attrs: Record<string, CedarValueJson> =
      action === "tools/call"
        ? { name: request.name, server: request.serverId, arguments: toCedarRecord(request.arguments) }
        : { method: request.method, server: request.serverId, name: request.name };
    const now = request.now ?? new Date();
    const call: StatefulAuthorizationCall = {
      principal: { type: PRINCIPAL_TYPE, id: request.user },
      action: { type: ACTION_TYPE, id: action },
      resource,
      context: {
        policy_id: request.policyId ?? "",
        source_id: request.serverId,
        time: { hour: now.getHours(), day_of_week: now.getDay(), timestamp: Math.floor(now.getTime() / 1000) },
      },
      // No parents: the slices assume none (cedar-index.ts).
      entities: [{ uid: resource, attrs, parents: [] }],
      preparsedPolicySetId: "",
      validateRequest: false,
    };
    try {
      const sets = over === "full" ? [this.sets.full()] : this.sets.setsFor(sliceKey(this.index, action, request.user, resource.id));
      const answers: AuthorizationAnswer[] = [];
      for (const set of sets) {
        call.preparsedPolicySetId = set;
        answers.push(cedar.statefulIsAuthorized(call));
      }
      return combine(answers);
    } catch (error) {
      return { type: "failure", reason: `Cedar evaluation failed: ${(error as Error).message}` };
    }
  }
}

/**
 * One answer from the answers of disjoint parts of a policy set, by Cedar's rule: any satisfied
 * forbid denies and determines; else any satisfied permit allows and determines; else deny. A
 * part that denied with determining policies had satisfied forbids; one that allowed had none.
 */
function combine(answers: AuthorizationAnswer[]): CedarAnswer {
  const forbids: string[] = [];
  const permits: string[] = [];
  const errors: { policyId: string; message: string }[] = [];
  for (const answer of answers) {
    if (answer.type === "failure") return { type: "failure", reason: answer.errors.map((e) => e.message).join("; ") };
    const { decision, diagnostics } = answer.response;
    (decision === "deny" ? forbids : permits).push(...diagnostics.reason);
    for (const e of diagnostics.errors) errors.push({ policyId: e.policyId, message: e.error.message });
  }
  // Cedar lists them in hash order; sorted, a denial names the same policies every time.
  errors.sort((a, b) => compare(a.policyId, b.policyId));
  if (forbids.length > 0) return { type: "answer", decision: "deny", determining: forbids.sort(compare), errors };
  return { type: "answer", decision: permits.length > 0 ? "allow" : "deny", determining: permits.sort(compare), errors };
}

function compare(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

/** The policy's scope, read from its text or, when that is not plain, from Cedar's own JSON of it. */
function scopeOf(file: string, policy: string): Scope {
  const scope = readScope(policy);
  if (scope) return scope;
  const json = cedar.policyToJson(policy);
  if (json.type === "failure") throw configError(file, json.errors);
  return json.json;
}

/** Bounded like thoughtgate.yaml itself: a policy path can name a device or a huge file. */
function readText(file: string, what: string): string {
  return readPolicyFile(file, `Cedar ${what}`);
}

function configError(file: string, errors: DetailedError[]): ThoughtGateError {
  return new ThoughtGateError("CONFIG", `${file}: ${errors.map((e) => e.message).join("; ")}`);
}

/**
 * Tool arguments as a Cedar record. Cedar has no null and no floats, and a JSON object with an
 * `__entity` or `__extn` key would be read as an entity reference or an extension call: an
 * attacker-controlled argument must never turn into one, so such keys get a `_` prefix.
 */
export function toCedarRecord(value: unknown): { [key: string]: CedarValueJson } {
  const converted = toCedar(value);
  return converted !== null && typeof converted === "object" && !Array.isArray(converted) ? (converted as { [key: string]: CedarValueJson }) : {};
}

function toCedar(value: unknown): CedarValueJson {
  if (value === null || value === undefined) return null;
  if (typeof value === "boolean" || typeof value === "string") return value;
  if (typeof value === "number") return Number.isSafeInteger(value) ? value : String(value);
  if (Array.isArray(value)) return value.map(toCedar).filter((item) => item !== null);
  if (typeof value === "object") {
    const record: { [key: string]: CedarValueJson } = {};
    for (const [key, item] of Object.entries(value)) {
      const converted = toCedar(item);
      if (converted !== null) record[key.startsWith("__") ? `_${key}` : key] = converted;
    }
    return record;
  }
  return String(value);
}
