import type { Stage } from "../../pipeline/stages.ts";
import { LISTS, type ListFilter } from "../list-filter.ts";
import type { Answer } from "./answer.ts";

/**
 * definitions on the way back: a list answer passes the visibility filter and the pin check
 * (list-filter.ts) before the agent sees it; when the filter takes it over (a decider or the pins
 * answer later), the answer is `delivered` and the router sends nothing itself.
 */
export function definitionsStage(lists: Pick<ListFilter, "deliver">): Stage<Answer> {
  return {
    name: "definitions",
    response(answer, next) {
      if (answer.entry.method in LISTS && !answer.message.isError && lists.deliver(answer.entry, answer.message, answer.bytes)) answer.delivered = true;
      return next();
    },
  };
}
