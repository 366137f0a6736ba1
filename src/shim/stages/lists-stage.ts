import { targetName } from "../../governance/verdict/decider.ts";
import type { PinPolicy } from "../../governance/verdict/definition-acceptance.ts";
import type { Stage } from "../../pipeline/stages.ts";
import type { DefinitionGuard } from "../definition-guard.ts";
import { ownRequestMeta } from "../era.ts";
import type { HeldDecisions } from "../held-decisions.ts";
import type { OwnRequests } from "../own-requests.ts";
import type { ToolCatalog } from "../tool-catalog.ts";
import type { GovernedRequest } from "./governed-request.ts";

/**
 * lists, on the way in: policies may depend on a tool's annotations (the embedded default does),
 * so a call for a tool the shim has not seen listed waits until the shim has read the whole list
 * itself (tool-catalog.ts), with the `_meta` a modern server requires, and checked what it read
 * against the pins like any list (a new session's first call included). The call is held
 * meanwhile (a cancel for it is honoured, and it goes no further), then goes on. A call already
 * decided, or carrying the answer to an ask, goes on at once; so does every call while the
 * catalog knows its tool.
 */
export function listsStage(options: {
  catalog: Pick<ToolCatalog, "needsRead" | "readAll">;
  definitions: Pick<DefinitionGuard, "check">;
  pinPolicy: () => PinPolicy | Promise<PinPolicy>;
  own: Pick<OwnRequests, "askServer">;
  held: Pick<HeldDecisions, "hold" | "release">;
}): Stage<GovernedRequest, never> {
  const { catalog, definitions, pinPolicy, own, held } = options;
  return {
    name: "lists",
    request(call, next) {
      const { request, entry } = call;
      if (call.verdict || call.answered || request.method !== "tools/call" || !catalog.needsRead(targetName(request))) return next(call);
      const meta = ownRequestMeta(call.era);
      held.hold(entry, call.control);
      return catalog
        .readAll((method, params) => own.askServer(method, meta ? { ...(params as object), _meta: meta } : params))
        .then(async (tools) => {
          if (tools) definitions.check("tool", tools, await pinPolicy());
          if (!held.release(entry)) return; // cancelled or the server went away
          return next(call);
        });
    },
  };
}
