import type { Server } from "bun";
import { PERSON_HEADER } from "../wire/api.ts";
import { descendsFrom, findPeer, inForegroundOfTerminal } from "../../core/peer-process.ts";

/**
 * Whether the process behind a person's request may be a person (docs/security.md, "Only a person
 * approves"; docs/architecture.md, decision 7). A key only says the caller could read it: the CLI
 * key sits in a 0600 file any process of the user's can read, the agent's own shell included. So
 * what a key may do is also held to who is asking, as far as the service can see it:
 *
 * - never a process the governed agent runs (for `wrap`: the agent, its shell tool, its MCP servers
 *   and everything they start and keep as children);
 * - for the CLI (`approve`, `deny`, the task list `tasks` prints, and the page link `approvals`/`tasks`
 *   print): a process in the
 *   foreground of a controlling terminal, that says a person confirmed there (`thoughtgate-person:
 *   terminal`), unless the user's own policy says `cli.require_terminal: false`;
 * - never another user's process.
 *
 * What the service sees is read from Linux `/proc` (core/peer-process.ts); elsewhere only the CLI's word
 * (the header) is checked, and docs/security.md says so.
 */
export type PersonAct =
  /** `thoughtgate approve|deny` (CLI key). */
  | "cli-decision"
  /** `thoughtgate approvals|tasks` asking for the page's link, which carries the page key (CLI key). */
  | "page-link"
  /**
   * `thoughtgate tasks` reading the tasks (CLI key): what is waiting and on what (digests, redacted
   * arguments), held to what deciding is held to, so an agent cannot watch for its own calls' tasks.
   */
  | "task-list"
  /** A decision from the approvals page (page key). */
  | "page-decision"
  /** The page redeeming a one-time link `approvals --open` opened (no key: the code is the credential). */
  | "open-link";

/** null: allowed; else the one line that says why not. */
export type PersonCheck = (request: Request, server: Server<unknown>, act: PersonAct) => string | null;


const FROM_PAGE_OR_TERMINAL = "approve on the approvals page or with thoughtgate approve in your own terminal";

/** `agent`: the governed agent's pid once it runs (`wrap`), null where there is none (`serve`). */
export function processPersonCheck(options: { requireTerminal: () => boolean; agent: () => number | null }): PersonCheck {
  return (request, server, act) => {
    const cli = act === "cli-decision" || act === "page-link" || act === "task-list";
    const terminal = cli && options.requireTerminal();
    const what = act === "page-link" ? "the approvals link" : act === "open-link" ? "the approvals page's link" : act === "task-list" ? "the task list" : "a decision";
    if (terminal && request.headers.get(PERSON_HEADER) !== "terminal") {
      return `${what} needs a person at a terminal, and this command has none (an agent's shell tool has none): ${FROM_PAGE_OR_TERMINAL}, or set cli.require_terminal: false in your own policy`;
    }
    if (process.platform !== "linux") return null;
    const address = server.requestIP(request);
    const peer = address && server.port !== undefined ? findPeer(address.port, server.port) : null;
    if (!peer || peer.pids.length === 0) return `refused ${what}: the service could not tell which process sent it`;
    if (process.getuid && peer.uid !== process.getuid()) return `refused ${what}: it came from another user's process`;
    const agent = options.agent();
    if (agent !== null && peer.pids.some((pid) => descendsFrom(pid, agent))) {
      return `refused ${what}: it came from a process the governed agent runs (only a person decides): ${FROM_PAGE_OR_TERMINAL}`;
    }
    if (terminal && !peer.pids.every(inForegroundOfTerminal)) {
      return `refused ${what}: it came from a process with no terminal of its own in the foreground: ${FROM_PAGE_OR_TERMINAL}, or set cli.require_terminal: false in your own policy`;
    }
    return null;
  };
}
