import type { AuthorizationAnswer, CedarValueJson, DetailedError, StatefulAuthorizationCall } from "@cedar-policy/cedar-wasm/web";
import { basename } from "node:path";
import { readPolicyFile } from "../../core/config/read-file.ts";
import { ThoughtGateError } from "../../core/errors.ts";
import { ACTION_TYPE, indexPolicies, PRINCIPAL_TYPE, RESOURCE_TYPE, sliceKey, type ActionId, type PolicyIndex } from "./cedar-index.ts";
import { readScope, type Scope } from "./cedar-scope.ts";
import { SliceSets } from "./cedar-slices.ts";
import { located, validatePolicies, type PolicySource } from "./cedar-schema.ts";
import { loadCedar } from "./cedar-wasm.ts";

// The engine embedded in the binary. cedar-wasm's `nodejs` build would read its wasm from the build
// machine's node_modules at run time and fail with ENOENT on every other machine (cedar-wasm.ts).
const cedar = loadCedar();

/**
 * The Cedar gate (docs/governance.md, "Cedar", namespace `ThoughtGate`):
 *   principal  ThoughtGate::App::"<user>"
 *   action     ThoughtGate::Action::"tools/call" | ThoughtGate::Action::"mcp/method"
 *   resource   ThoughtGate::ToolCall::"<server>/<tool>" {name, server, method, arguments}
 *              ThoughtGate::McpMethod::"<server>/<method>" {name, server, method, arguments}
 *   context    {policy_id, source_id, project, cwd, time: {hour, day_of_week, timestamp}}
 * Every policy is validated against that schema at load (cedar-schema.ts).
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
  /** The session's project root and the calling shim's working directory (src/core/project.ts). */
  project: string;
  cwd: string;
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
   * Parse the policy files and validate them against ThoughtGate's Cedar schema (cedar-schema.ts,
   * with the `schema` file's argument types). Any problem throws a CONFIG error naming
   * file:line:column. `mergedCopies`: how many policy copies the merged slices may hold (cedar-slices.ts).
   */
  static load(files: CedarSources, options: { mergedCopies?: number } = {}): CedarPolicies {
    const read = readPolicies(files);
    validatePolicies(read.texts, read.sources, files.schema ? { file: files.schema, text: readText(files.schema, "schema") } : null);
    return CedarPolicies.build(files, read, options);
  }

  /**
   * Parse without validating: every policy Cedar parses, the ones its validator would refuse
   * included. Only for the slicing equivalence test (test/governance/engine/cedar-slicing.test.ts),
   * whose corpus holds such policies on purpose; everything that decides calls uses `load`.
   */
  static parse(files: CedarSources, options: { mergedCopies?: number } = {}): CedarPolicies {
    return CedarPolicies.build(files, readPolicies(files), options);
  }

  private static build(files: CedarSources, read: ReadPolicies, options: { mergedCopies?: number }): CedarPolicies {
    const index = indexPolicies(read.scopes);
    let sets: SliceSets;
    try {
      sets = new SliceSets(read.texts, index, options.mergedCopies);
    } catch (error) {
      throw new ThoughtGateError("CONFIG", `${files.policies.join(", ")}: ${(error as Error).message}`);
    }
    return new CedarPolicies(sets, index, [...read.texts.keys()], files);
  }

  /** `over`: as `authorize`'s; only the bench asks for `"full"`. */
  evaluate(request: CedarRequest, over: "sliced" | "full" = "sliced"): CedarVerdict {
    const answer = this.authorize(request, over);
    if (answer.type === "failure") return { decision: "error", reason: answer.reason };
    const failed = answer.errors.map((e) => `policy ${e.policyId} failed to evaluate: ${e.message}`).join("; ");
    // A policy that errored (e.g. a missing attribute) could have been a forbid: fail closed.
    if (answer.errors.length > 0 && answer.decision === "allow") return { decision: "error", reason: failed };
    // A deny no forbid decided may be one a permit would have made an allow, had it not failed: say so.
    if (answer.errors.length > 0 && answer.determining.length === 0) return { decision: "error", reason: `no Cedar policy permits it, and ${failed}` };
    return { decision: answer.decision, policies: answer.determining };
  }

  /**
   * Cedar's answer for the request, from the request's slice (`"sliced"`) or from every policy
   * (`"full"`: what the slices are proven against, and the bench's baseline).
   */
  authorize(request: CedarRequest, over: "sliced" | "full" = "sliced"): CedarAnswer {
    const action: ActionId = request.method === "tools/call" ? "tools/call" : "mcp/method";
    const resource = { type: RESOURCE_TYPE[action], id: `${request.serverId}/${action === "tools/call" ? request.name : request.method}` };
    // Both entity types have the same attributes (cedar-schema.ts), so a policy may read any of them whatever its action.
    const attrs: Record<string, CedarValueJson> = { name: request.name, server: request.serverId, method: request.method, arguments: toCedarRecord(request.arguments) };
    const now = request.now ?? new Date();
    const call: StatefulAuthorizationCall = {
      principal: { type: PRINCIPAL_TYPE, id: request.user },
      action: { type: ACTION_TYPE, id: action },
      resource,
      context: {
        policy_id: request.policyId ?? "",
        source_id: request.serverId,
        project: request.project,
        cwd: request.cwd,
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

type ReadPolicies = { texts: Map<string, string>; scopes: Map<string, Scope>; sources: Map<string, PolicySource> };

/** Each policy of the files: its text, its scope and where it is (a syntax error: file:line:column). */
function readPolicies(files: CedarSources): ReadPolicies {
  const texts = new Map<string, string>();
  const scopes = new Map<string, Scope>();
  const sources = new Map<string, PolicySource>();
  for (const file of files.policies) {
    const text = readText(file, "policy");
    const parts = cedar.policySetTextToParts(text);
    if (parts.type === "failure") throw new ThoughtGateError("CONFIG", parts.errors.map((e) => located({ file, text }, e)).join("\n"));
    if (parts.policy_templates.length > 0) throw new ThoughtGateError("CONFIG", `${file}: policy templates are not supported`);
    let cursor = 0;
    parts.policies.forEach((policy, i) => {
      // Each part is the file's own text of the policy (comments between policies dropped).
      const start = text.indexOf(policy, cursor);
      cursor = start < 0 ? cursor : start + policy.length;
      const id = /@id\(\s*"((?:[^"\\]|\\.)*)"\s*\)/.exec(policy)?.[1] ?? `${basename(file)}#${i}`;
      if (texts.has(id)) throw new ThoughtGateError("CONFIG", `${located({ file, text }, { message: `duplicate policy id "${id}"`, help: null, code: null, url: null, severity: null }, Math.max(start, 0))}`);
      texts.set(id, policy);
      sources.set(id, { file, text, start: Math.max(start, 0) });
      scopes.set(id, scopeOf(file, policy));
    });
  }
  return { texts, scopes, sources };
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
