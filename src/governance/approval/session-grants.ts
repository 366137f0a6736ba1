import { canonicalJson } from "../../core/canonical-json.ts";
import { redactText } from "../../telemetry/redact.ts";
import type { ServerProgram } from "../verdict/decider.ts";
import { SESSION_GRANT_PREFIX, type GrantView } from "../wire/api.ts";
import { AGENT_SOURCE } from "../verdict/agent-tools.ts";

/**
 * "Allow for this session": a person approved one call and said the same tool on the same server
 * may run with any arguments until the session ends. The grants live in the governance service's
 * memory only, so they end with it (a `wrap` session, or a `serve` process) and are never written
 * anywhere a later session could find them. A grant only ever stands in for a person's approval:
 * the service consults it where the policy asks for approval, after every deny of the gates.
 *
 * A grant covers the calls of the shim that asked (its channel to the service), never another's:
 * anything holding the session secret can play a shim and ask in any server's name, and what a
 * person allows for that shim's call must not let the real server's shim through (docs/security.md,
 * Only a person approves). A shim's grants end with its channel.
 */
export type Grant = {
  id: string;
  serverId: string;
  /** What ran the server the person approved: another program under the same id is not covered. */
  server?: ServerProgram;
  method: string;
  name: string;
  /**
   * An agent's own tool (source `agent`): the rule that asked, so a grant covers only the calls that
   * rule asks about (an edit in the project, not every edit anywhere); null for an MCP tool's grant.
   */
  ruleId: string | null;
  /** The task whose "allow for this session" created it (for a yes in the agent's own prompt: the call's request id). */
  taskId: string;
  /** The channel that decided that task (web, cli, elicitation, desktop, …). */
  grantedBy: string;
  /** The shim whose calls it covers (its channel, as the task's `openedBy`). */
  holder: string;
  createdAt: number;
  uses: number;
};

/**
 * Who a grant covers: the shim channel that asked, except for an agent's own tools (source `agent`,
 * verdict/agent-tools.ts). Each of those calls comes from a hook process of its own, one channel
 * per call, so a grant kept to the channel would end with the call it was made for; the agent's
 * hooks share one holder for the session instead, and "allow for this session" of its `write`
 * covers its later writes (docs/governance.md, "Built-in tools").
 */
export function grantHolder(serverId: string, caller: string): string {
  return serverId === AGENT_SOURCE ? AGENT_HOOKS_HOLDER : caller;
}

/** The one holder of the grants made for an agent's own tools. */
const AGENT_HOOKS_HOLDER = "agent-hooks";

/** At most this many grants: each is one person's decision, so a session never gets near it. */
const MAX_GRANTS = 1_000;

export class SessionGrants {
  private readonly grants = new Map<string, Grant>();
  private closed = false;

  /**
   * Record a grant for the call's server, method and name (the first grant for a tool stays; a
   * second "allow for this session" of the same tool changes nothing). Null once the session has
   * ended or the store is full: the approval itself still counts, for that one call.
   */
  grant(call: { serverId: string; method: string; name: string; server?: ServerProgram | undefined; ruleId?: string | null }, taskId: string, grantedBy: string, now: number, holder: string): Grant | null {
    if (this.closed) return null;
    const ruleId = grantRule(call.serverId, call.ruleId ?? null);
    const key = keyOf(holder, call.serverId, call.method, call.name, call.server, ruleId);
    const known = this.grants.get(key);
    if (known) return known;
    if (this.grants.size >= MAX_GRANTS) return null;
    const grant: Grant = { id: `grant-${taskId}`, serverId: call.serverId, ...(call.server ? { server: call.server } : {}), method: call.method, name: call.name, ruleId, taskId, grantedBy, holder, createdAt: now, uses: 0 };
    this.grants.set(key, grant);
    return grant;
  }

  /** The grant that covers this call of `holder`'s (to this very server program; an agent's tool asked by this rule), counting the use; undefined when there is none. */
  use(serverId: string, method: string, name: string, holder: string, server?: ServerProgram, ruleId: string | null = null): Grant | undefined {
    const grant = this.grants.get(keyOf(holder, serverId, method, name, server, grantRule(serverId, ruleId)));
    if (grant) grant.uses += 1;
    return grant;
  }

  /** A shim's channel closed: its grants go with it (a new connection asks again). */
  dropHolder(holder: string): void {
    for (const [key, grant] of this.grants) if (grant.holder === holder) this.grants.delete(key);
  }

  /** Take one back (the approvals page's "revoke"): later calls are asked about again. */
  revoke(id: string): Grant | undefined {
    for (const [key, grant] of this.grants) {
      if (grant.id !== id) continue;
      this.grants.delete(key);
      return grant;
    }
    return undefined;
  }

  list(): Grant[] {
    return [...this.grants.values()].sort((a, b) => a.createdAt - b.createdAt);
  }

  /** The session is over: every grant goes, and none can be made. */
  close(): void {
    this.closed = true;
    this.grants.clear();
  }

  toView(grant: Grant): GrantView {
    return {
      grant_id: grant.id,
      server_id: grant.serverId,
      method: grant.method,
      // What people are shown: credentials redacted, as in a task view.
      name: redactText(grant.name),
      task_id: grant.taskId,
      granted_by: grant.grantedBy,
      created_at: new Date(grant.createdAt).toISOString(),
      uses: grant.uses,
    };
  }
}

/** The holder, and exact server (id and program), method, name and (an agent's tool) rule: no globs, so a grant never covers another tool, server, shim or rule. */
function keyOf(holder: string, serverId: string, method: string, name: string, server: ServerProgram | undefined, ruleId: string | null): string {
  return canonicalJson([holder, serverId, server ?? null, method, name, ruleId]);
}

/** The rule a grant is kept to: an agent's own tool's, none for an MCP tool (its grant covers the tool). */
function grantRule(serverId: string, ruleId: string | null): string | null {
  return serverId === AGENT_SOURCE ? ruleId : null;
}

/** What a call a grant let through says it was approved by: `session_grant:<task id>`. */
export function grantApprover(grant: Pick<Grant, "taskId">): string {
  return `${SESSION_GRANT_PREFIX}${grant.taskId}`;
}

export { SESSION_GRANT_PREFIX };
