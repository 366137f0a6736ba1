import type { AuthorizationAnswer, CedarValueJson, DetailedError } from "@cedar-policy/cedar-wasm/web";
import { basename } from "node:path";
import { readPolicyFile } from "../core/config/read-file.ts";
import { ThoughtGateError } from "../core/errors.ts";
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
 * Policies are parsed once per load (`preparsePolicySet`): evaluating the text every call costs
 * ~8× more (docs/benchmarks.md).
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

export type CedarSources = { policies: string[]; schema?: string };

let generation = 0;

export class CedarPolicies {
  private constructor(
    private readonly setId: string,
    readonly policyIds: string[],
    readonly files: CedarSources,
  ) {}

  /** Parse (and, with a schema, validate) the policy files. Any problem throws a CONFIG error. */
  static load(files: CedarSources): CedarPolicies {
    const policies: Record<string, string> = {};
    for (const file of files.policies) {
      const text = readText(file, "policy");
      const parts = cedar.policySetTextToParts(text);
      if (parts.type === "failure") throw configError(file, parts.errors);
      if (parts.policy_templates.length > 0) throw new ThoughtGateError("CONFIG", `${file}: policy templates are not supported`);
      parts.policies.forEach((policy, i) => {
        const id = /@id\(\s*"((?:[^"\\]|\\.)*)"\s*\)/.exec(policy)?.[1] ?? `${basename(file)}#${i}`;
        if (id in policies) throw new ThoughtGateError("CONFIG", `${file}: duplicate policy id "${id}"`);
        policies[id] = policy;
      });
    }
    if (files.schema) {
      const schema = readText(files.schema, "schema");
      const answer = cedar.validate({ schema, policies: { staticPolicies: policies }, validationSettings: { mode: "strict" } });
      if (answer.type === "failure") throw configError(files.schema, answer.errors);
      if (answer.validationErrors.length > 0) {
        const lines = answer.validationErrors.map((e) => `  policy ${e.policyId}: ${e.error.message}`);
        throw new ThoughtGateError("CONFIG", `Cedar policies do not match the schema ${files.schema}:\n${lines.join("\n")}`);
      }
    }
    generation += 1;
    const setId = `thoughtgate-${generation}`;
    const preparsed = cedar.preparsePolicySet(setId, { staticPolicies: policies });
    if (preparsed.type === "failure") throw configError(files.policies.join(", "), preparsed.errors);
    return new CedarPolicies(setId, Object.keys(policies), files);
  }

  evaluate(request: CedarRequest): CedarVerdict {
    const toolCall = request.method === "tools/call";
    const resource = toolCall
      ? { type: "ThoughtGate::ToolCall", id: `${request.serverId}/${request.name}` }
      : { type: "ThoughtGate::McpMethod", id: `${request.serverId}/${request.method}` };
    const attrs: Record<string, CedarValueJson> = toolCall
      ? { name: request.name, server: request.serverId, arguments: toCedarRecord(request.arguments) }
      : { method: request.method, server: request.serverId, name: request.name };
    const now = request.now ?? new Date();
    let answer: AuthorizationAnswer;
    try {
      answer = cedar.statefulIsAuthorized({
        principal: { type: "ThoughtGate::App", id: request.user },
        action: { type: "ThoughtGate::Action", id: toolCall ? "tools/call" : "mcp/method" },
        resource,
        context: {
          policy_id: request.policyId ?? "",
          source_id: request.serverId,
          time: { hour: now.getHours(), day_of_week: now.getDay(), timestamp: Math.floor(now.getTime() / 1000) },
        },
        entities: [{ uid: resource, attrs, parents: [] }],
        preparsedPolicySetId: this.setId,
        validateRequest: false,
      });
    } catch (error) {
      return { decision: "error", reason: `Cedar evaluation failed: ${(error as Error).message}` };
    }
    if (answer.type === "failure") return { decision: "error", reason: answer.errors.map((e) => e.message).join("; ") };
    const { decision, diagnostics } = answer.response;
    // A policy that errored (e.g. a missing attribute) could have been a forbid: fail closed.
    if (diagnostics.errors.length > 0 && decision === "allow") {
      return { decision: "error", reason: diagnostics.errors.map((e) => `${e.policyId}: ${e.error.message}`).join("; ") };
    }
    return { decision, policies: diagnostics.reason };
  }
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
