import type { Message } from "../core/jsonrpc.ts";

/**
 * The single decision point every governed agent→server message goes through. The governance
 * issue fills it with the 4-gate engine; until a policy is loaded the shim forwards everything and
 * says so (`policy: "none"` in `run_start`).
 */
export type Verdict =
  | { action: "forward"; gate: string | null; ruleId: string | null; reason: string }
  | {
      action: "deny";
      gate: string;
      ruleId: string | null;
      reason: string;
      /** The JSON-RPC error the agent receives. */
      error: { code: number; message: string; data?: unknown };
    };

export type Decider = {
  /** Shown in `run_start.policy`. */
  readonly policy: string;
  /**
   * A verdict now, or a promise of one (`pending`: e.g. waiting for a human). `signal` aborts when
   * the agent cancels the request (`notifications/cancelled`) or the shim shuts down.
   */
  decide(message: Extract<Message, { kind: "request" }>, signal: AbortSignal): Verdict | Promise<Verdict>;
};

/** DESIGN decision 5: only these methods cost a decision; everything else is forwarded and audited. */
export const GOVERNED_METHODS: ReadonlySet<string> = new Set([
  "tools/call",
  "resources/read",
  "resources/subscribe",
  "prompts/get",
]);

const FORWARD_ALL: Verdict = { action: "forward", gate: null, ruleId: null, reason: "no policy loaded" };

export const forwardAll: Decider = {
  policy: "none",
  decide: () => FORWARD_ALL,
};
