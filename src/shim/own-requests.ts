import type { JsonRpcId, JsonRpcResponse } from "../core/jsonrpc.ts";
import type { AskOptions, AskPurpose, ElicitOutcome } from "../governance/verdict/decider.ts";
import type { Sink } from "../stdio/line-sink.ts";
import { answeringHooks } from "../governance/verdict/agent-prompt-hooks.ts";
import { approvalForm, outcomeOf } from "./approval-form.ts";

/** Claude Code's name in `clientInfo` (2.1.330). */
const CLAUDE_CODE_CLIENT = "claude-code";

/** The shim's own requests to the server (its tools/list) give up after this long. */
const SHIM_REQUEST_TIMEOUT_MS = 10_000;


/**
 * Requests the shim sends on its own behalf: to the server (reading its tool list, ids
 * `thoughtgate-<uuid>`) and to the agent (approval elicitations, ids `thoughtgate-approval-<uuid>`).
 * Their answers are consumed here and never forwarded; the ids are random, so no peer can have used
 * or guess them.
 */
export class OwnRequests {
  private readonly toServerPending = new Map<JsonRpcId, (response: JsonRpcResponse) => void>();
  private readonly toAgentPending = new Map<JsonRpcId, (response: JsonRpcResponse) => void>();

  constructor(
    private readonly toAgent: Sink,
    private readonly toServer: () => Sink | null,
  ) {}

  /** A response from the server: true when it answered one of ours (and was consumed). */
  takeServerAnswer(message: JsonRpcResponse): boolean {
    return take(this.toServerPending, message);
  }

  /** A response from the agent: true when it answered one of ours (and was consumed). */
  takeAgentAnswer(message: JsonRpcResponse): boolean {
    return take(this.toAgentPending, message);
  }

  /** One request to the server from the shim itself; null if it does not answer in time or is gone. */
  askServer(method: string, params: unknown): Promise<JsonRpcResponse | null> {
    const server = this.toServer();
    if (!server) return Promise.resolve(null);
    const id = `thoughtgate-${crypto.randomUUID()}`;
    return new Promise((resolve) => {
      const timer = setTimeout(() => {
        this.toServerPending.delete(id);
        resolve(null);
      }, SHIM_REQUEST_TIMEOUT_MS);
      this.toServerPending.set(id, (response) => {
        clearTimeout(timer);
        resolve(response);
      });
      server.sendText(JSON.stringify({ jsonrpc: "2.0", id, method, params }));
    });
  }

  /**
   * Ask the agent's user with an `elicitation/create` request (legacy era; a modern agent is asked
   * through `input_required` instead, see input-asks.ts).
   */
  /** The protocol version the agent's `initialize` asked for (the form's shape depends on it). */
  agentProtocolVersion: string | null = null;
  /** Whether the agent declared the `elicitation` capability (form mode) in its `initialize`, and no project hook answers its forms. */
  agentCanElicit = false;
  private answeringFiles: string[] | null = null;

  /**
   * The project's Claude settings files whose `Elicitation` hook could answer a form put to this
   * client in the person's place (governance/verdict/agent-prompt-hooks.ts): only Claude Code runs
   * them. Read once, from the shim's working directory (where the agent started it). Non-empty:
   * the shim puts the agent no form, and the person is asked on ThoughtGate's other channels.
   */
  formsAnsweredBy(client: unknown): string[] {
    if (client !== CLAUDE_CODE_CLIENT) return [];
    this.answeringFiles ??= answeringHooks(process.cwd()).Elicitation;
    return this.answeringFiles;
  }

  readonly elicit = (message: string, signal: AbortSignal, purpose: AskPurpose = "call", options: AskOptions = {}): Promise<ElicitOutcome> =>
    new Promise<ElicitOutcome>((resolve, reject) => {
      if (signal.aborted) {
        reject(new Error("approval aborted"));
        return;
      }
      const id = `thoughtgate-approval-${crypto.randomUUID()}`;
      const onAbort = () => {
        this.toAgentPending.delete(id);
        this.toAgent.sendText(
          JSON.stringify({ jsonrpc: "2.0", method: "notifications/cancelled", params: { requestId: id, reason: "approval no longer needed" } }),
        );
        reject(new Error("approval aborted"));
      };
      signal.addEventListener("abort", onAbort, { once: true });
      const askedAt = performance.now();
      this.toAgentPending.set(id, (response) => {
        signal.removeEventListener("abort", onAbort);
        // An error answer (the agent cannot elicit after all) is no answer, like cancel.
        resolve(response.isError ? { kind: "unanswered" } : (outcomeOf(response.body.result, performance.now() - askedAt, options) ?? { kind: "unanswered" }));
      });
      this.toAgent.sendText(JSON.stringify({ jsonrpc: "2.0", id, method: "elicitation/create", params: { message, requestedSchema: approvalForm(this.agentProtocolVersion, purpose, options) } }));
    });
}

function take(pending: Map<JsonRpcId, (response: JsonRpcResponse) => void>, message: JsonRpcResponse): boolean {
  if (message.id === null) return false;
  const resolve = pending.get(message.id);
  if (!resolve) return false;
  pending.delete(message.id);
  resolve(message);
  return true;
}
