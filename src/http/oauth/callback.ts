import { randomBytes } from "node:crypto";

/**
 * The loopback redirect of an OAuth authorization code flow (RFC 8252 §7.3): a listener on
 * 127.0.0.1, a free port, one path; the first answer whose `state` matches ends it. The issuer
 * check of RFC 9207 §2.4 is made here, before the code goes anywhere: a response naming another
 * issuer is dropped without acting on it, an error included.
 */
type CallbackResult = { ok: true; code: string } | { ok: false; detail: string };

export type Callback = { redirectUri: string; state: string; result: Promise<CallbackResult>; close(): void };

const PAGE = (text: string) =>
  new Response(`<!doctype html><meta charset="utf-8"><title>ThoughtGate</title><p>${text}</p>`, {
    headers: { "content-type": "text/html; charset=utf-8", "cache-control": "no-store", "referrer-policy": "no-referrer" },
  });

export function startCallback(expected: { issuer: string; issRequired: boolean }, timeoutMs: number): Callback {
  const state = randomBytes(24).toString("base64url");
  let settle: (result: CallbackResult) => void = () => {};
  const result = new Promise<CallbackResult>((resolve) => {
    settle = resolve;
  });
  const server = Bun.serve({
    hostname: "127.0.0.1",
    port: 0,
    fetch(request) {
      const url = new URL(request.url);
      if (url.pathname !== "/callback" || request.method !== "GET") return new Response("not found", { status: 404 });
      const params = url.searchParams;
      if (params.get("state") !== state) return new Response("unexpected state", { status: 400 });
      const iss = params.get("iss");
      if (iss !== null ? iss !== expected.issuer : expected.issRequired) {
        settle({ ok: false, detail: `the authorization response came from ${iss === null ? "an unnamed issuer" : JSON.stringify(iss)}, not ${expected.issuer}: ignored` });
        return PAGE("ThoughtGate did not accept this answer. You can close this tab.");
      }
      const error = params.get("error");
      if (error !== null) {
        const description = params.get("error_description");
        settle({ ok: false, detail: `the authorization server answered ${error}${description ? `: ${description.slice(0, 200)}` : ""}` });
        return PAGE("Authorization was not granted. You can close this tab.");
      }
      const code = params.get("code");
      if (code === null || code === "") return new Response("no code", { status: 400 });
      settle({ ok: true, code });
      return PAGE("ThoughtGate is authorized. You can close this tab.");
    },
  });
  const timer = setTimeout(() => settle({ ok: false, detail: `no answer from the browser within ${Math.round(timeoutMs / 1000)} s` }), timeoutMs);
  const close = () => {
    clearTimeout(timer);
    server.stop(true);
  };
  void result.then(() => setTimeout(close, 100));
  return { redirectUri: `http://127.0.0.1:${server.port}/callback`, state, result, close };
}
