/**
 * A loopback stand-in for the governance service a shim talks to (`--governance-endpoint`), for
 * the failures the real one never shows on cue: a service that never gets ready, an evaluate that
 * never answers, a heartbeat that says "shut down". It speaks the wire types of
 * src/governance/api.ts; whatever a test does not script is answered as the real service would
 * answer a well-behaved session (forward everything, show every tool, keep running).
 */
import type { Server } from "bun";

export type FakeGovernanceScript = {
  /** Whether GET /healthz answers at all (false: the request is accepted and never answered). */
  ready?: boolean;
  /** Whether POST /governance/evaluate answers this call's body (false: it is never answered). */
  answers?: (body: EvaluateSeen) => boolean;
};

export type EvaluateSeen = { name?: string; arguments?: Record<string, unknown> };

export type FakeGovernance = AsyncDisposable & {
  url: string;
  secret: string;
  /** Every path asked, in order (`POST /governance/heartbeat`, …). */
  seen: string[];
  /** The answer heartbeats (and every other answer) carry from now on. */
  shutdown: boolean;
};

/** Started on 127.0.0.1, port 0. Requests it never answers are dropped when it is disposed. */
export function fakeGovernance(script: FakeGovernanceScript = {}): FakeGovernance {
  const secret = "fake-governance-secret";
  const state = { shutdown: false, seen: [] as string[] };
  const never = () => new Promise<Response>(() => {});
  const server: Server<undefined> = Bun.serve({
    hostname: "127.0.0.1",
    port: 0,
    // Hanging requests are the point: Bun's idle timeout must not answer them for us.
    idleTimeout: 0,
    async fetch(request) {
      const path = new URL(request.url).pathname;
      state.seen.push(`${request.method} ${path}`);
      if (request.headers.get("authorization") !== `Bearer ${secret}`) return Response.json({ error: "unauthorized", code: "unauthorized" }, { status: 401 });
      const body = request.method === "POST" ? ((await request.json()) as Record<string, unknown>) : {};
      switch (path) {
        case "/healthz":
          return script.ready === false ? never() : Response.json({ status: "ok", version: "fake", profile: "production" });
        case "/governance/evaluate":
          if (script.answers && !script.answers(body as EvaluateSeen)) return never();
          return Response.json({ decision: "forward", gate: "rules", rule_id: "fake-forward", policy_id: null, reason: "the fake service forwards", shutdown: state.shutdown });
        case "/governance/filter":
          return Response.json({ visible: body.names, shutdown: state.shutdown });
        case "/governance/heartbeat":
        case "/governance/events":
          return Response.json({ shutdown: state.shutdown });
        default:
          return Response.json({ error: "not found", code: "not_found" }, { status: 404 });
      }
    },
  });
  return {
    url: `http://127.0.0.1:${server.port}`,
    secret,
    seen: state.seen,
    get shutdown() {
      return state.shutdown;
    },
    set shutdown(value: boolean) {
      state.shutdown = value;
    },
    async [Symbol.asyncDispose]() {
      await server.stop(true);
    },
  };
}

/** A loopback port that was free a moment ago and has no listener now (for "nobody listens there"). */
export async function closedPort(): Promise<number> {
  const server = Bun.serve({ hostname: "127.0.0.1", port: 0, fetch: () => new Response() });
  const port = server.port as number;
  await server.stop(true);
  return port;
}
