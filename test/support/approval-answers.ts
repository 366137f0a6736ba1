/**
 * How a fake agent (the MCP SDK client) answers the shim's approval form, an `elicitation/create`
 * request: a person's yes or no, never, or what an agent that cannot show the form answers
 * (docs/governance.md, "An answer from no one is no answer": `cancel`, an error, or a decline faster
 * than anyone can read the question).
 */
import type { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { ElicitRequestSchema, McpError } from "@modelcontextprotocol/sdk/types.js";

export type FormAnswer = "approve" | "approve-at-once" | "reject" | "never" | "cancel" | "error" | "decline-at-once" | "decline-after-reading";

/** The answers that are no one's: each is no answer, never a person's yes or no. */
export const NO_ONE_ANSWERS = ["decline-at-once", "approve-at-once", "cancel", "error"] as const;

/** Longer than any answer may take and still be no one's (300 ms, docs/governance.md): a person read the form. */
export const READING_MS = 500;

/**
 * A person reading the question before answering it. The delay is the thing under test, not a
 * wait for something: an answer faster than 300 ms is no one's (an agent answering its own form).
 */
export function personReads(): Promise<void> {
  return Bun.sleep(READING_MS);
}

/** Answer every approval form on `client` with `answer`; the messages asked go into `prompts`. */
export function answerForms(client: Client, answer: FormAnswer, prompts: string[]): void {
  client.setRequestHandler(ElicitRequestSchema, async (request) => {
    prompts.push(String(request.params.message));
    switch (answer) {
      case "approve":
        await personReads();
        return { action: "accept", content: { decision: "once" } };
      case "reject":
        await personReads();
        return { action: "accept", content: { decision: "deny" } };
      case "approve-at-once":
        return { action: "accept", content: { decision: "once" } };
      case "never":
        return new Promise(() => {});
      case "cancel":
        return { action: "cancel" };
      case "error":
        throw new McpError(-32603, "this agent cannot show forms in this mode");
      case "decline-at-once":
        return { action: "decline" };
      case "decline-after-reading":
        await personReads();
        return { action: "decline" };
    }
  });
}
