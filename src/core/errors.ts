/**
 * Typed errors and the exit-code table. Leaf code throws a `ThoughtGateError`; only the
 * error boundary in `src/cli.ts` turns it into a message and an exit code.
 *
 * | exit | meaning                                                                   |
 * |------|---------------------------------------------------------------------------|
 * | 0    | success                                                                   |
 * | 1    | ThoughtGate error: configuration, I/O, governance service unavailable     |
 * | 2    | usage error: unknown command, bad or missing flag, an ambiguous target    |
 * | N    | `shim` passes the MCP server's exit code through; `wrap`, `arbiter` the agent's |
 *
 * README.md's "Exit codes" is the user's copy; test/e2e/exit-codes.test.ts holds the binary to it.
 */
export const EXIT = { ok: 0, error: 1, usage: 2 } as const;

export type ErrorCode =
  | "USAGE"
  | "CONFIG"
  | "SPAWN_FAILED"
  | "IO"
  | "GOVERNANCE_UNAVAILABLE"
  | "TIMEOUT"
  | "PROTOCOL"
  /** An approval task that is unknown, already decided, or not the call it claims to be. */
  | "TASK"
  /** A config (or the wrap journal) is locked by another live wrap: `… is being wrapped by pid N …`. */
  | "LOCKED";

export class ThoughtGateError extends Error {
  constructor(
    readonly code: ErrorCode,
    message: string,
    options?: { cause?: unknown },
  ) {
    super(message, options);
    this.name = "ThoughtGateError";
  }

  get exitCode(): number {
    return this.code === "USAGE" ? EXIT.usage : EXIT.error;
  }
}

export function usageError(message: string): ThoughtGateError {
  return new ThoughtGateError("USAGE", message);
}

/** The message of anything thrown, without a stack. */
export function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

/**
 * Run a best-effort cleanup step whose failure must not mask the outcome that triggered it
 * (closing an already-closed pipe, signalling an exited process group). Returns whether it succeeded.
 */
export function bestEffort(step: () => unknown): boolean {
  try {
    step();
    return true;
  } catch {
    return false;
  }
}
