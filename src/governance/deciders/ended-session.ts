/**
 * The decider of a shim started in a wrap session that is over: its wrap was killed (`kill -9`, a
 * crash) while the agent it launched kept running, or `THOUGHTGATE_SESSION` names no session. The
 * session may have had its own policy, so the shim must not govern on its own: every governed call
 * and every list the visibility gate filters fails at once, with one line saying what to do
 * (docs/architecture.md, decision 3). Lifecycle, pings and everything ungoverned still pass, so the
 * agent sees a working server that refuses, not one that hangs.
 */
import type { JsonRpcRequest } from "../../core/jsonrpc.ts";
import { callRef, type Decider, type Verdict } from "../verdict/decider.ts";
import { deniedVerdict } from "../verdict/deny-error.ts";
import { GOVERNANCE_ERROR } from "../verdict/errors.ts";
import type { SessionLookup } from "./find-session.ts";

/** What a person does about it: the agent is the session's; a new run of it is governed again. */
export const ENDED_SESSION_FIX = "restart the agent (alone, or under thoughtgate wrap) to govern its servers again; `thoughtgate unwrap` restores its config";

/** Production or not: nothing is left whose policy could be applied, so nothing is forwarded as development would. */
export function endedSessionDecider(ended: Extract<SessionLookup, { kind: "ended" }>, serverId: string): Decider {
  const reason = `${ended.why}: ${ENDED_SESSION_FIX}`;
  return {
    policy: `ended session ${ended.id}`,
    decide(request: JsonRpcRequest): Verdict {
      return deniedVerdict({ gate: "governance", code: GOVERNANCE_ERROR.serviceUnavailable, ruleId: null, policyId: null, reason }, callRef(request, serverId));
    },
    filterList(): string[] {
      throw new Error(reason);
    },
  };
}
