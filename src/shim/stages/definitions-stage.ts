import type { Logger } from "../../core/log.ts";
import { targetName } from "../../governance/verdict/decider.ts";
import type { PinPolicy } from "../../governance/verdict/definition-acceptance.ts";
import type { Next, Stage } from "../../pipeline/stages.ts";
import type { DefinitionGuard } from "../definition-guard.ts";
import type { HeldDecisions } from "../held-decisions.ts";
import type { ListChanges } from "../list-changes.ts";
import { LISTS, type ListFilter } from "../list-filter.ts";
import type { Answer } from "./answer.ts";
import type { GovernedRequest } from "./governed-request.ts";

/** What the definitions gate on the way in works with. */
export type DefinitionGate = {
  guard: Pick<DefinitionGuard, "hasBlocked" | "pending" | "refresh">;
  /** The pin policy in force for this server (never rejects: governance that cannot say is read strictly). */
  pinPolicy: () => PinPolicy | Promise<PinPolicy>;
  held: Pick<HeldDecisions, "hold" | "release">;
  /** The agent is told a list changed when a definition it could not see was accepted elsewhere. */
  listChanges: Pick<ListChanges, "announce">;
  log: Pick<Logger, "warn">;
};

/**
 * definitions. On the way in (with `gate`): a call whose tool (prompt, resource template) changed
 * since it was pinned, or was flagged, is held while the pins are read again (someone may have
 * accepted it elsewhere: `thoughtgate pins accept`, and the agent is told its list changed); if it
 * still waits for a person (production, `pin: strict`), the change is set on the call for the
 * decide stage to ask about before the call itself is decided. Costs a map lookup while nothing
 * is blocked. On the way back: a list answer passes the visibility filter and the pin check
 * (list-filter.ts) before the agent sees it; when the filter takes it over (a decider or the pins
 * answer later), the answer is `delivered` and the router sends nothing itself.
 */
export function definitionsStage(lists: Pick<ListFilter, "deliver">, gate?: DefinitionGate): Stage<GovernedRequest, Answer> {
  return {
    name: "definitions",
    ...(gate ? { request: (call: GovernedRequest, next: Next<GovernedRequest>) => gateCall(gate, call, next) } : {}),
    response(answer, next) {
      if (answer.entry.method in LISTS && !answer.message.isError && lists.deliver(answer.entry, answer.message, answer.bytes)) answer.delivered = true;
      return next(answer);
    },
  };
}

function gateCall(gate: DefinitionGate, call: GovernedRequest, next: Next<GovernedRequest>): void | Promise<void> {
  const { guard, held } = gate;
  const { request, entry } = call;
  if (call.verdict || call.answered || !guard.hasBlocked || !guard.pending(request.method, targetName(request))) return next(call);
  held.hold(entry, call.control);
  return Promise.resolve(gate.pinPolicy()).then((policy) => {
    if (!held.release(entry)) return; // cancelled or the server went away
    const accepted = guard.refresh(policy);
    for (const kind of accepted) gate.listChanges.announce(new Set([kind]));
    const change = guard.pending(request.method, targetName(request));
    if (change && policy.mode === "strict" && !policy.enforce) {
      gate.log.warn(`WOULD_BLOCK ${request.method} ${targetName(request)}: its definition ${change.status === "changed" ? `changed since it was pinned (${change.changed.join(", ")})` : "was flagged"}; forwarded (development)`);
    }
    if (change && policy.mode === "strict" && policy.enforce) call.change = change;
    return next(call);
  });
}
