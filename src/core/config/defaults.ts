/* A policy's defaults that the engine needs too: kept apart from the schema, so a shim on the embedded default never loads valibot. */

/**
 * How long a call waits for a person by default: long enough to step away for a coffee, and
 * within what the agents' own limits on a tool call allow with no progress sent (README,
 * "How long an approval waits"): Claude Code 2.1.330 gives a stdio MCP call 30 minutes without a
 * response or progress (`CLAUDE_CODE_MCP_TOOL_IDLE_TIMEOUT`) under a hard limit of 10^8 ms
 * (`MCP_TOOL_TIMEOUT`); a modern agent's retry of an asked call is awaited as long (shim/retry-asks.ts).
 */
export const DEFAULT_APPROVAL_TIMEOUT_MS = 15 * 60_000;
