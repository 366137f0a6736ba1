import type { Unit } from "../stdio/framer.ts";
import type { FlowSink } from "./pump.ts";

/**
 * The server side of a shim: a stdio child (`stdio-upstream.ts`) or a remote server over
 * Streamable HTTP (`http-upstream.ts`). Either way the router gets the same `Unit`s and writes
 * to the same kind of sink (docs/architecture.md, "Where new things plug in").
 */
export type ServerState = {
  state: "running" | "failed_to_start" | "exited" | "terminated" | "closed";
  pid?: number;
  url?: string;
  exit_code?: number | null;
  signal?: string | null;
  detail?: string;
};

export type Graces = { stdinCloseMs: number; sigtermMs: number };

export interface Upstream {
  /** For `run_start`: the command line, or [] for a remote server. */
  readonly command: string[];
  /** For `run_start`: the remote server's URL without its query (which may carry a key); undefined for a child. */
  readonly url: string | undefined;
  /** Start the server: the sink the router writes to and the `server_state` to record, or why it could not start. */
  open(): { sink: FlowSink; state: ServerState } | { error: string };
  /**
   * Hand every unit from the server to `route` until the server side ends by itself (the child
   * exited and its output is read; the remote session ended). Resolves with why, for the
   * router to answer what is still pending.
   */
  pump(route: (unit: Unit) => void, toAgent: FlowSink): Promise<string>;
  /** The shim got a signal: shorten the shutdown. */
  hurry(): void;
  /** Stop the server: its exit code for the shim, and the `server_state` to record. */
  stop(graces: Graces): Promise<{ exitCode: number; state: ServerState }>;
}
