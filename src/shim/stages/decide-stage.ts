import type { JsonRpcRequest } from "../../core/jsonrpc.ts";
import { callRef, targetName, type DecisionContext, type Decider, type ServerProgram, type Verdict } from "../../governance/verdict/decider.ts";
import { definitionRefusal, type DefinitionChange } from "../../governance/verdict/definition-acceptance.ts";
import { decisionFailed } from "../../pipeline/decision-failed.ts";
import type { Next, Stage } from "../../pipeline/stages.ts";
import type { CallAudit } from "../call-audit.ts";
import type { DefinitionGuard } from "../definition-guard.ts";
import { declaresFormElicitation, LEGACY, META_CLIENT_INFO, metaOf, type RequestEra } from "../era.ts";
import type { HeldDecisions } from "../held-decisions.ts";
import type { Ask } from "../input-asks.ts";
import type { ListChanges } from "../list-changes.ts";
import type { OwnRequests } from "../own-requests.ts";
import type { RetryAsks } from "../retry-asks.ts";
import type { ToolCatalog } from "../tool-catalog.ts";
import type { GovernedRequest } from "./governed-request.ts";

export type DecideOptions = {
  serverId: string;
  /** What runs the server: part of what a decision is about (an "always allow" rule names it). */
  server: ServerProgram;
  decider: Pick<Decider, "decide">;
  catalog: Pick<ToolCatalog, "annotationsOf" | "annotationSourceOf">;
  held: Pick<HeldDecisions, "hold" | "release">;
  audit: Pick<CallAudit, "decision">;
  /** The modern era's asks: `input_required` and its retry (retry-asks.ts). */
  asks: Pick<RetryAsks, "elicit" | "openFor" | "changeAsked" | "settle" | "answered" | "decided">;
  /** The legacy era's ask: `elicitation/create` to an agent whose `initialize` declared form elicitation. */
  own: Pick<OwnRequests, "elicit" | "agentCanElicit" | "formsAnsweredBy">;
  definitions: Pick<DefinitionGuard, "accept">;
  /** A person accepted a definition: the agent is told its list changed. */
  listChanges: Pick<ListChanges, "announce">;
};

/**
 * decide: the decider's verdict on a governed request (its gates, a person's approval through
 * either era's ask), set as `verdict` for the stages after it. A decider that throws or rejects
 * fails closed (docs/architecture.md, decision 3); a verdict an earlier stage set is kept. A
 * verdict given at once keeps the run synchronous; one that is not holds this request alone
 * (docs/architecture.md, decision 6), and a cancel meanwhile ends it here.
 *
 * A changed definition (set by the definitions stage) is asked about first: accepted, it becomes
 * the pin, the agent is told its list changed, and the call itself is decided; refused, the call
 * is refused with the definitions gate's error. A modern agent asked through `input_required`
 * has its answer at once, and the call ends here: it continues in the agent's retry, which
 * carries the answer (parse) and waits here for the decision. `subscriptions/listen` is decided
 * per resource subscription, as a `resources/subscribe` would be; one refusal refuses it all.
 */
export function decideStage(options: DecideOptions): Stage<GovernedRequest, never> {
  const { serverId, server, decider, catalog, held, audit, asks, own } = options;

  const contextFor = (call: Pick<GovernedRequest, "entry" | "request" | "control">, era: RequestEra, canAsk: boolean, change?: DefinitionChange): DecisionContext => {
    const { entry, request, control } = call;
    let elicit: DecisionContext["elicit"] = null;
    if (!canAsk) elicit = null;
    else if (era.era === "legacy") elicit = own.agentCanElicit ? own.elicit : null;
    // Modern: this request's own capabilities decide, never an earlier request's (MCP 2026-07-28).
    else if (declaresFormElicitation(era.capabilities) && own.formsAnsweredBy(clientName(call.request)).length === 0) elicit = asks.elicit(call, change);
    return {
      definitionChange: change,
      awaitingApproval: (reason) => {
        audit.decision(entry, { action: "pending", reason }, request);
        entry.trace?.waiting();
      },
      span: entry.trace?.deciding,
      get signal() {
        return control.signal;
      },
      serverId,
      server,
      annotations: request.method === "tools/call" ? catalog.annotationsOf(targetName(request)) : undefined,
      annotationSource: request.method === "tools/call" ? catalog.annotationSourceOf(targetName(request)) : undefined,
      elicit,
    };
  };

  /** The verdict reached: the stages after see it (and a modern call let through keeps it for the server's own rounds). */
  const decided = (call: GovernedRequest, next: Next<GovernedRequest>): void | Promise<void> => {
    const { verdict } = call;
    if (verdict?.action === "forward" && call.era.era === "modern") asks.decided(call.entry, call.request, verdict);
    return next(call);
  };

  /** A decision's outcome: for a definition, its acceptance or refusal; for the call, its verdict. */
  const proceed = (call: GovernedRequest, verdict: Verdict, change: DefinitionChange | undefined, next: Next<GovernedRequest>): void | Promise<void> => {
    if (!change) {
      call.verdict = verdict;
      return decided(call, next);
    }
    if (verdict.action === "forward") {
      options.definitions.accept(change, verdict.approvedBy ?? "unknown");
      options.listChanges.announce(new Set([change.kind]));
      return decide(call, undefined, next);
    }
    // Refused, whichever channel said no: the definitions gate's error.
    const taskId = (verdict.error.data as { task_id?: unknown } | undefined)?.task_id;
    call.verdict = verdict.gate === "definitions" ? verdict : definitionRefusal(change, callRef(call.request, serverId), verdict.reason, typeof taskId === "string" ? taskId : undefined);
    return decided(call, next);
  };

  const decide = (call: GovernedRequest, change: DefinitionChange | undefined, next: Next<GovernedRequest>): void | Promise<void> => {
    const { entry } = call;
    let verdict: Verdict | Promise<Verdict>;
    try {
      verdict = decider.decide(call.request, contextFor(call, call.era, true, change));
    } catch (error) {
      verdict = decisionFailed(error);
    }
    if (!(verdict instanceof Promise)) return proceed(call, verdict, change, next);
    // Not decided yet (a service round trip, or a person): this request alone waits. The audit's
    // `pending` decision comes from the decider. A modern agent asked by `input_required` has had
    // its answer already: the decision goes to the retry that carries the person's answer.
    if (!asks.openFor(entry)) held.hold(entry, call.control);
    return verdict.catch(decisionFailed).then((settled) => {
      const ask = asks.openFor(entry);
      if (ask) {
        held.release(entry);
        asks.settle(ask, settled);
        return;
      }
      if (!held.release(entry)) return; // cancelled or the server went away
      return proceed(call, settled, change, next);
    });
  };

  /** The retry that carries the agent's answer to our question: it goes on under that ask's decision. */
  const continueAsked = (call: GovernedRequest, ask: Ask, outcome: NonNullable<GovernedRequest["answered"]>["outcome"], next: Next<GovernedRequest>): void | Promise<void> => {
    const change = asks.changeAsked(ask);
    const verdict = asks.answered(ask, outcome, call);
    if (!(verdict instanceof Promise)) return proceed(call, verdict, change, next);
    return verdict.then((settled) => (settled === null ? undefined : proceed(call, settled, change, next)));
  };

  const decideListen = (call: GovernedRequest, uris: string[], next: Next<GovernedRequest>): Promise<void> => {
    const { entry, request } = call;
    const verdicts = uris.map((uri) => {
      const each: JsonRpcRequest = { kind: "request", id: request.id, method: "resources/subscribe", params: { uri }, body: { jsonrpc: "2.0", id: request.id, method: "resources/subscribe", params: { uri } } };
      // No ask on it: the protocol allows `input_required` only on calls, reads and prompts.
      try {
        return decider.decide(each, contextFor({ ...call, request: each }, LEGACY, false));
      } catch (error) {
        return decisionFailed(error);
      }
    });
    held.hold(entry, call.control);
    return Promise.all(verdicts.map((v) => Promise.resolve(v).catch(decisionFailed))).then((all) => {
      if (!held.release(entry)) return;
      const refused = all.find((v) => v.action === "deny");
      call.verdict = refused ?? { action: "forward", gate: all[0]?.gate ?? null, ruleId: all[0]?.ruleId ?? null, reason: `every resource subscription allowed (${uris.length})` };
      return decided(call, next);
    });
  };

  return {
    name: "decide",
    request(call, next) {
      if (call.verdict) return decided(call, next);
      if (call.answered) return continueAsked(call, call.answered.ask, call.answered.outcome, next);
      if (call.subscriptions) return decideListen(call, call.subscriptions as string[], next);
      return decide(call, call.change, next);
    },
  };
}

/** The client's name a modern request carries in its `_meta`. */
function clientName(request: JsonRpcRequest): unknown {
  const info = metaOf(request.params)?.[META_CLIENT_INFO];
  return info !== null && typeof info === "object" ? (info as { name?: unknown }).name : undefined;
}
