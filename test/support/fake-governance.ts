/**
 * A loopback stand-in for the governance service a shim talks to (`--governance-endpoint`), for
 * the failures the real one never shows on cue: a service that never gets ready, an evaluate that
 * never answers, a heartbeat that says "shut down", a channel that closes. Shims reach it over its
 * channel (`/governance/channel`, a WebSocket) as they reach the real one; HTTP answers alike. It speaks the wire types of
 * src/governance/wire/api.ts; whatever a test does not script is answered as the real service would
 * answer a well-behaved session (forward everything, show every tool, keep running).
 */
import type { Server, ServerWebSocket } from "bun";

export type FakeGovernanceScript = {
  /** Whether the service gets ready at all (false: GET /healthz and the channel's upgrade are accepted and never answered). */
  ready?: boolean;
  /** Whether POST /governance/evaluate answers this call's body (false: it is never answered). */
  answers?: (body: EvaluateSeen) => boolean;
  /** Runs before each answer (a slow service: the test awaits what it likes). */
  beforeAnswer?: (path: string, body: Record<string, unknown>) => Promise<void> | void;
};

export type EvaluateSeen = { name?: string; arguments?: Record<string, unknown> };

export type FakeGovernance = AsyncDisposable & {
  url: string;
  secret: string;
  /** Every call, in order, over HTTP or the channel (`GET /governance/channel`, `POST /governance/heartbeat`, …). */
  seen: string[];
  /** The bodies of POST /governance/events, in order. */
  reports: Array<Record<string, unknown>>;
  /** The answer heartbeats (and every other answer) carry from now on. */
  shutdown: boolean;
  /** Send `{push: "shutdown"}` on every open channel, as the real service does when wrap stops. */
  pushShutdown(): void;
  /** Close every open channel, as a service that died would. */
  dropChannels(): void;
};

type Answer = { status: number; body: unknown } | null;

/** Started on 127.0.0.1, port 0. Requests it never answers are dropped when it is disposed. */
export function fakeGovernance(script: FakeGovernanceScript = {}): FakeGovernance {
  const secret = "fake-governance-secret";
  const state = { shutdown: false, seen: [] as string[], reports: [] as Array<Record<string, unknown>> };
  const sockets = new Set<ServerWebSocket<undefined>>();
  const never = () => new Promise<Response>(() => {});

  async function answer(path: string, body: Record<string, unknown>): Promise<Answer> {
    await script.beforeAnswer?.(path, body);
    switch (path) {
      case "/governance/evaluate":
        if (script.answers && !script.answers(body as EvaluateSeen)) return null;
        return { status: 200, body: { decision: "forward", gate: "rules", rule_id: "fake-forward", policy_id: null, reason: "the fake service forwards", shutdown: state.shutdown } };
      case "/governance/filter":
        return { status: 200, body: { visible: body.names, shutdown: state.shutdown } };
      case "/governance/events":
        state.reports.push(body);
        return { status: 200, body: { shutdown: state.shutdown } };
      case "/governance/heartbeat":
        return { status: 200, body: { shutdown: state.shutdown } };
      default:
        return { status: 404, body: { error: "not found", code: "not_found" } };
    }
  }

  const server: Server<undefined> = Bun.serve({
    hostname: "127.0.0.1",
    port: 0,
    // Hanging requests are the point: Bun's idle timeout must not answer them for us.
    idleTimeout: 0,
    async fetch(request, server) {
      const path = new URL(request.url).pathname;
      state.seen.push(`${request.method} ${path}`);
      if (request.headers.get("authorization") !== `Bearer ${secret}`) return Response.json({ error: "unauthorized", code: "unauthorized" }, { status: 401 });
      if (path === "/healthz") return script.ready === false ? never() : Response.json({ status: "ok", version: "fake", profile: "production" });
      if (path === "/governance/channel") {
        if (script.ready === false) return never();
        return server.upgrade(request, { data: undefined }) ? undefined : new Response("expected a WebSocket upgrade", { status: 400 });
      }
      const body = request.method === "POST" ? ((await request.json()) as Record<string, unknown>) : {};
      const given = await answer(path, body);
      return given ? Response.json(given.body, { status: given.status }) : never();
    },
    websocket: {
      idleTimeout: 0,
      open: (ws) => void sockets.add(ws),
      close: (ws) => void sockets.delete(ws),
      // A frame holds one or more messages, a line each; each is answered on its own, when it is.
      message(ws, message) {
        for (const line of String(message).split("\n")) {
          const { id, method, path, body } = JSON.parse(line) as { id: number; method: string; path: string; body?: Record<string, unknown> };
          state.seen.push(`${method} ${path}`);
          void answer(path, body ?? {}).then((given) => {
            if (given) ws.send(JSON.stringify({ id, status: given.status, body: given.body }));
          });
        }
      },
    },
  });
  return {
    url: `http://127.0.0.1:${server.port}`,
    secret,
    seen: state.seen,
    reports: state.reports,
    get shutdown() {
      return state.shutdown;
    },
    set shutdown(value: boolean) {
      state.shutdown = value;
    },
    pushShutdown() {
      for (const ws of sockets) ws.send(JSON.stringify({ push: "shutdown" }));
    },
    dropChannels() {
      for (const ws of sockets) ws.close(1011, "the fake service went away");
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
