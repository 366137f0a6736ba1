import { ThoughtGateError } from "../core/errors.ts";
import type { RpcErrorObject } from "../core/mcp-schema.ts";

/**
 * What a request to a server can fail with, besides its own `ThoughtGateError("PROTOCOL")` for a
 * response we could not accept. Each keeps the `ThoughtGateError` code the CLI boundary maps to an
 * exit code, and carries the details a caller branches on.
 */

/**
 * The server answered with a JSON-RPC error. Also what a server-request handler throws to choose
 * the error it answers with (anything else it throws becomes -32603).
 */
export class RpcError extends ThoughtGateError {
  constructor(
    readonly rpc: RpcErrorObject,
    readonly method?: string,
  ) {
    super("PROTOCOL", `${method === undefined ? "" : `${method}: `}${rpc.message} (JSON-RPC error ${rpc.code})`);
    this.name = "RpcError";
  }
}

/** No response arrived in time. The request is forgotten: a late response is dropped. */
export class RequestTimeoutError extends ThoughtGateError {
  constructor(
    readonly method: string,
    readonly timeoutMs: number,
  ) {
    super("TIMEOUT", `${method}: no response within ${timeoutMs} ms`);
    this.name = "RequestTimeoutError";
  }
}

/**
 * The connection ended before a response came: the server exited (or closed its stdout), or we
 * closed the client. `exitStatus` is the server's, shell-style (128+n when a signal ended it), when
 * it had exited by then.
 */
export class ConnectionClosedError extends ThoughtGateError {
  constructor(
    readonly reason: "exited" | "closed",
    readonly method: string | undefined,
    readonly exitStatus: number | null = null,
  ) {
    super("IO", connectionClosedMessage(reason, method, exitStatus));
    this.name = "ConnectionClosedError";
  }
}

function connectionClosedMessage(reason: "exited" | "closed", method: string | undefined, exitStatus: number | null): string {
  const gone = exitStatus === null ? "the server closed its stdout" : `the server exited with status ${exitStatus}`;
  const what = reason === "closed" ? "the connection to the server was closed" : gone;
  return method === undefined ? what : `${what} before answering ${method}`;
}
