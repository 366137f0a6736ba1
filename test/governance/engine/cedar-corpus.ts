/**
 * A seeded generator of Cedar policy sets and requests for the slicing equivalence test: scopes of
 * every form the index reads (and some it must not trust), conditions that hold, fail or error,
 * permits and forbids, policies with and without `@id`.
 */
import type { CedarRequest } from "../../../src/governance/engine/cedar.ts";

/** mulberry32: a small, fast PRNG; the same seed gives the same corpus on every run. */
export function random(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

type Random = () => number;
const pick = <T>(rng: Random, items: readonly T[]): T => items[Math.floor(rng() * items.length)] as T;

const USERS = ["alice", "bob", "carol"] as const;
/** `a` + `b/c` and `a/b` + `c` make the same resource id, `a/b/c`: the index must key on the id, not the parts. */
const SERVERS = ["s1", "s2", "a", "a/b"] as const;
const TOOLS = ["t1", "t2", "t3", "b/c", "c"] as const;
const METHODS = ["resources/read", "prompts/get", "tools/list"] as const;

const principals = [
  "principal",
  'principal == ThoughtGate::App::"alice"',
  'principal == ThoughtGate::App::"bob"',
  'principal in ThoughtGate::App::"alice"',
  "principal is ThoughtGate::App",
  'principal is ThoughtGate::App in ThoughtGate::App::"bob"',
  "principal is ThoughtGate::User",
  'principal == ThoughtGate::User::"alice"',
  'principal == App::"alice"',
];
const actions = [
  "action",
  'action == ThoughtGate::Action::"tools/call"',
  'action == ThoughtGate::Action::"mcp/method"',
  'action in ThoughtGate::Action::"tools/call"',
  'action in [ThoughtGate::Action::"tools/call", ThoughtGate::Action::"mcp/method"]',
  'action in [ThoughtGate::Action::"mcp/method"]',
  'action == ThoughtGate::Action::"other"',
  'action == Action::"tools/call"',
];

function resources(rng: Random): string {
  const tool = () => `${pick(rng, SERVERS)}/${pick(rng, TOOLS)}`;
  const method = () => `${pick(rng, SERVERS)}/${pick(rng, METHODS)}`;
  return pick(rng, [
    () => "resource",
    () => "resource",
    () => `resource == ThoughtGate::ToolCall::"${tool()}"`,
    () => `resource == ThoughtGate::ToolCall::"${tool()}"`,
    () => `resource in ThoughtGate::ToolCall::"${tool()}"`,
    () => `resource == ThoughtGate::McpMethod::"${method()}"`,
    () => `resource in ThoughtGate::McpMethod::"${method()}"`,
    () => "resource is ThoughtGate::ToolCall",
    () => "resource is ThoughtGate::McpMethod",
    () => `resource is ThoughtGate::ToolCall in ThoughtGate::ToolCall::"${tool()}"`,
    () => `resource is ThoughtGate::McpMethod in ThoughtGate::ToolCall::"${tool()}"`,
    // Types no request has: a parent the model might one day give resources, a type outside the namespace.
    () => `resource in ThoughtGate::Server::"${pick(rng, SERVERS)}"`,
    () => `resource == ToolCall::"${tool()}"`,
    () => `resource == ThoughtGate::ToolCall::"${method()}"`,
  ])();
}

/** Conditions: some hold, some do not, some error for some requests (a missing attribute, an unknown entity). */
function condition(rng: Random): string {
  return pick(rng, [
    () => `resource.name == "${pick(rng, TOOLS)}"`,
    () => `resource.server == "${pick(rng, SERVERS)}"`,
    () => `resource.arguments.limit > ${Math.floor(rng() * 10)}`,
    () => `resource has arguments && resource.arguments has limit && resource.arguments.limit <= ${Math.floor(rng() * 10)}`,
    () => `resource.arguments.path like "/srv/*"`,
    () => `resource.method == "${pick(rng, METHODS)}"`,
    () => `context.time.hour < ${Math.floor(rng() * 24)}`,
    () => `context.policy_id == "prod"`,
    () => "context.source_id == resource.server",
    () => `principal == ThoughtGate::App::"${pick(rng, USERS)}"`,
    () => `principal.team == "core"`,
    () => `action == ThoughtGate::Action::"mcp/method"`,
    () => `resource in ThoughtGate::Server::"${pick(rng, SERVERS)}"`,
    () => `if resource has name then resource.name like "t*" else false`,
    () => "true",
    () => "false",
  ])();
}

/** A policy file of 1 to `max` policies; about one in five has no `@id` (its id is then `<file>#<n>`). */
export function policySet(rng: Random, max: number): string {
  const count = 1 + Math.floor(rng() * max);
  const policies: string[] = [];
  for (let i = 0; i < count; i++) {
    const effect = rng() < 0.6 ? "permit" : "forbid";
    const clauses: string[] = [];
    const clauseCount = Math.floor(rng() * 3);
    for (let c = 0; c < clauseCount; c++) {
      const body = rng() < 0.3 ? `(${condition(rng)}) && (${condition(rng)})` : condition(rng);
      clauses.push(`${rng() < 0.7 ? "when" : "unless"} { ${body} }`);
    }
    const id = rng() < 0.8 ? `@id("p${i}")\n` : "";
    policies.push(`${id}${effect} (${pick(rng, principals)}, ${pick(rng, actions)}, ${resources(rng)})${clauses.map((c) => ` ${c}`).join("")};`);
  }
  return `${policies.join("\n")}\n`;
}

export function request(rng: Random): CedarRequest {
  const args: Record<string, unknown> = {};
  if (rng() < 0.6) args.limit = Math.floor(rng() * 12);
  if (rng() < 0.4) args.path = pick(rng, ["/srv/data", "/etc/passwd"]);
  return {
    user: pick(rng, USERS),
    serverId: pick(rng, SERVERS),
    method: rng() < 0.7 ? "tools/call" : pick(rng, METHODS),
    name: pick(rng, TOOLS),
    arguments: args,
    policyId: rng() < 0.5 ? "prod" : null,
    project: "/srv/project",
    cwd: "/srv/project",
    now: new Date(2026, 0, 5, Math.floor(rng() * 24)),
  };
}
