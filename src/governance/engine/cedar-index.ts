import type { ActionConstraint, EntityUidJson, PrincipalConstraint, ResourceConstraint } from "@cedar-policy/cedar-wasm/web";
import type { Scope } from "./cedar-scope.ts";

/**
 * Which policies a request can match, read from each policy's scope (its principal, action and
 * resource constraints), so an evaluation runs only those (docs/benchmarks.md, "Cedar").
 *
 * A Cedar policy is satisfied only if its scope holds, and its scope is checked before its
 * conditions: a policy whose scope cannot hold for a request is neither satisfied nor in error for
 * it, so leaving it out changes neither the decision, nor the determining policies, nor the errors.
 *
 * What makes a scope decidable here is the request model (cedar.ts): the action is one of
 * `ACTION_IDS`, the resource's type follows from it, and no entity has a parent (the request's
 * only entity is the resource, with `parents: []`; the principal and the action are in no entity
 * store). So `in E` holds exactly when `== E` does. Anything not recognised below (a template slot,
 * a constraint form added by a later Cedar) is read as "can match anything": such a policy is
 * evaluated for every request, which is always correct.
 */

export const PRINCIPAL_TYPE = "ThoughtGate::App";
export const ACTION_TYPE = "ThoughtGate::Action";
export const ACTION_IDS = ["tools/call", "mcp/method"] as const;
export type ActionId = (typeof ACTION_IDS)[number];
export const RESOURCE_TYPE: Record<ActionId, string> = { "tools/call": "ThoughtGate::ToolCall", "mcp/method": "ThoughtGate::McpMethod" };

/**
 * The policies of one action, in three groups: those that can match any request (`any`), those
 * that can match only one principal (its id → policy ids), and those that can match only one
 * resource (its id → policy ids). A policy naming both a principal and a resource is in the
 * resource's group.
 */
type ActionSlices = { any: string[]; byPrincipal: Map<string, string[]>; byResource: Map<string, string[]> };
export type PolicyIndex = Record<ActionId, ActionSlices>;

/** A request's keys into an `ActionSlices`: `null` where the request names nothing a policy names. */
export type SliceKey = { action: ActionId; principal: string | null; resource: string | null };

/** What one constraint allows among the entities of one type: none, any, or only the one with this id. */
type Allowed = "none" | "any" | { id: string };

export function indexPolicies(policies: ReadonlyMap<string, Scope>): PolicyIndex {
  const index = {} as PolicyIndex;
  for (const action of ACTION_IDS) index[action] = { any: [], byPrincipal: new Map(), byResource: new Map() };
  for (const [id, policy] of policies) {
    for (const action of ACTION_IDS) {
      if (!actionAllows(policy.action, action)) continue;
      const resource = entityAllowed(policy.resource, RESOURCE_TYPE[action]);
      const principal = entityAllowed(policy.principal, PRINCIPAL_TYPE);
      if (resource === "none" || principal === "none") continue;
      const slices = index[action];
      if (resource !== "any") push(slices.byResource, resource.id, id);
      else if (principal !== "any") push(slices.byPrincipal, principal.id, id);
      else slices.any.push(id);
    }
  }
  return index;
}

export function sliceKey(index: PolicyIndex, action: ActionId, principal: string, resource: string): SliceKey {
  const slices = index[action];
  return {
    action,
    principal: slices.byPrincipal.has(principal) ? principal : null,
    resource: slices.byResource.has(resource) ? resource : null,
  };
}

/** The policies a request with this key can match: the ones for any request first, then the named ones. */
export function slicePolicies(index: PolicyIndex, key: SliceKey): { shared: string[]; specific: string[] } {
  const slices = index[key.action];
  const byPrincipal = key.principal === null ? [] : (slices.byPrincipal.get(key.principal) ?? []);
  const byResource = key.resource === null ? [] : (slices.byResource.get(key.resource) ?? []);
  return { shared: [...slices.any, ...byPrincipal], specific: byResource };
}

function push(map: Map<string, string[]>, key: string, id: string): void {
  const list = map.get(key);
  if (list) list.push(id);
  else map.set(key, [id]);
}

function actionAllows(constraint: ActionConstraint, action: ActionId): boolean {
  const named = (uid: EntityUidJson): boolean => {
    const { type, id } = plainUid(uid);
    return type === ACTION_TYPE && id === action;
  };
  switch (constraint.op) {
    case "All":
      return true;
    case "==":
      return "entity" in constraint ? named(constraint.entity) : true;
    case "in":
      if ("entity" in constraint) return named(constraint.entity);
      if ("entities" in constraint) return constraint.entities.some(named);
      return true;
    default:
      return true;
  }
}

/** A principal or resource constraint, for a request whose entity has type `type` and no parents. */
function entityAllowed(constraint: PrincipalConstraint | ResourceConstraint, type: string): Allowed {
  const named = (uid: EntityUidJson): Allowed => {
    const plain = plainUid(uid);
    return plain.type === type ? { id: plain.id } : "none";
  };
  switch (constraint.op) {
    case "All":
      return "any";
    // Without parents, `in E` is `== E`.
    case "==":
    case "in":
      return "entity" in constraint ? named(constraint.entity) : "any";
    case "is":
      if (constraint.entity_type !== type) return "none";
      if (constraint.in && "entity" in constraint.in) return named(constraint.in.entity);
      return "any";
    default:
      return "any";
  }
}

function plainUid(uid: EntityUidJson): { type: string; id: string } {
  return "__entity" in uid ? uid.__entity : uid;
}
