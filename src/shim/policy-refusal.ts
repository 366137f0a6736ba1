/**
 * A shim whose policy cannot be loaded still answers. Closing the pipe would leave the agent
 * showing only "failed" (Claude Code: `✘ failed  CONNECTION_CLOSED`) with the reason buried in
 * its own log files; instead every request the agent sends, `initialize` first, gets one JSON-RPC
 * error naming the file, the problem and the fix, which agents show next to the server. The MCP
 * server itself is never started: nothing is forwarded without a policy (docs/architecture.md,
 * decision 3). Notifications and responses get nothing, as JSON-RPC has them.
 */
import { LineSplitter } from "../stdio/line-splitter.ts";
import { GOVERNANCE_ERROR } from "../governance/verdict/errors.ts";

/** What the person does about it. */
const POLICY_FIX = "correct it (`thoughtgate validate-config` lists every problem with its line), then restart the agent or reconnect the server";

type PolicyRefusal = { serverId: string; problem: string };

/** The one-line message and the error's data, from a policy loading error's text (`file: N problems\n  file:l:c: …`). */
export function refusalError(refusal: PolicyRefusal): { code: number; message: string; data: Record<string, unknown> } {
  const [head = "", ...details] = refusal.problem.split("\n").map((line) => line.trim()).filter((line) => line !== "");
  const counted = /^(.*): (\d+ problems?)$/.exec(head);
  const file = counted?.[1];
  // The file is named once, in front; each problem by its line and column.
  const placed = (line: string) => {
    const at = file ? /^(.*):(\d+):(\d+): (.*)$/.exec(line) : null;
    return at && at[1] === file ? `line ${at[2]}, column ${at[3]}: ${at[4]}` : line;
  };
  const first = details[0];
  const more = details.length > 1 ? ` (and ${details.length - 1} more)` : "";
  const problem = counted && first ? `${placed(first)}${more}` : [head, ...details].join("; ");
  const what = counted ? `its policy ${file} has ${counted[2]}` : "its policy cannot be loaded";
  const reason = counted ? `the policy ${file} has ${counted[2]}; ${problem}` : problem;
  // The fix comes before the problem's text: agents cut a long message (Claude Code's `mcp list` at about 500 characters).
  return {
    code: GOVERNANCE_ERROR.serviceUnavailable,
    message: `ThoughtGate did not start server ${refusal.serverId}: ${what}; ${POLICY_FIX}. ${counted ? "First" : "The problem"}: ${problem}`,
    data: { gate: "governance", server_id: refusal.serverId, ...(file ? { file } : {}), reason, problems: details.length > 0 ? details : [head], fix: POLICY_FIX },
  };
}

/** Answer each request on `input` with the refusal until the agent closes it. */
export async function answerWithRefusal(refusal: PolicyRefusal, input: ReadableStream<Uint8Array>, write: (line: string) => void): Promise<void> {
  const error = refusalError(refusal);
  const splitter = new LineSplitter();
  const answer = (bytes: Uint8Array) => {
    let message: unknown;
    try {
      message = JSON.parse(new TextDecoder("utf-8", { fatal: true }).decode(bytes));
    } catch {
      return;
    }
    if (message === null || typeof message !== "object" || Array.isArray(message)) return;
    const { id, method } = message as { id?: unknown; method?: unknown };
    if (typeof method !== "string" || (typeof id !== "string" && typeof id !== "number")) return;
    write(`${JSON.stringify({ jsonrpc: "2.0", id, error })}\n`);
  };
  for await (const chunk of input) {
    for (const line of splitter.push(chunk)) if (line.kind === "line") answer(line.bytes);
  }
}
