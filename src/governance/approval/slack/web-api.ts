import * as v from "valibot";
import { messageOf } from "../../../core/errors.ts";
import { apiEnvelope } from "./wire.ts";

/** One Web API call may take this long; approvals have their own timeout, this keeps a call from hanging. */
const SLACK_CALL_TIMEOUT_MS = 10_000;
/** A 429 without a usable Retry-After waits this long (Slack always sends one; a proxy may not). */
const DEFAULT_RETRY_AFTER_MS = 30_000;
/** What is kept of a Retry-After: a misbehaving server must not stall approvals for days. */
const MAX_RETRY_AFTER_MS = 15 * 60_000;

/**
 * How a failure should be handled: `auth` (the token is refused: nothing will work until it is
 * replaced), `rate_limited` (wait `retryAfterMs`), `transient` (Slack or the network is down:
 * retrying may help), `permanent` (this request is wrong: a deleted channel, a missing scope).
 */
type FailureKind = "auth" | "rate_limited" | "transient" | "permanent";

export type SlackFailure = {
  /** Slack's `error` (`channel_not_found`), or ours: `unreachable`, `timeout`, `http_error`, `invalid_response`. */
  code: string;
  kind: FailureKind;
  /** For `rate_limited`: how long Slack asked us to wait. */
  retryAfterMs?: number;
  /** One line for the log (never a token). */
  detail: string;
};

export type SlackResult<T> = { ok: true; value: T } | { ok: false; failure: SlackFailure };

/** Errors that mean the token itself is refused (https://api.slack.com/web, "Errors"). */
const AUTH_ERRORS: ReadonlySet<string> = new Set([
  "not_authed",
  "invalid_auth",
  "token_revoked",
  "token_expired",
  "account_inactive",
  "user_removed_from_team",
  "team_disabled",
  "not_allowed_token_type",
]);
const TRANSIENT_ERRORS: ReadonlySet<string> = new Set(["internal_error", "fatal_error", "service_unavailable", "request_timeout"]);

function kindOf(code: string): FailureKind {
  if (AUTH_ERRORS.has(code)) return "auth";
  if (code === "ratelimited" || code === "rate_limited") return "rate_limited";
  if (TRANSIENT_ERRORS.has(code)) return "transient";
  return "permanent";
}

/**
 * Reads (`reactions.get`) and `apps.connections.open` take form-encoded bodies; the chat methods
 * take JSON. Slack accepts a token only in the Authorization header for JSON bodies (and always
 * for app-level tokens), so it is always sent there, never in a body or URL.
 */
export type Encoding = "json" | "form";

/** Slack's Web API at `baseUrl` (https://slack.com/api/ unless the config says otherwise). */
export class SlackWebApi {
  private readonly baseUrl: string;
  private readonly stopping = new AbortController();
  /** Per method: no call before this time (Date.now() ms), after a 429. */
  private readonly pausedUntil = new Map<string, number>();

  constructor(
    baseUrl: string,
    private readonly timeoutMs = SLACK_CALL_TIMEOUT_MS,
  ) {
    this.baseUrl = baseUrl.endsWith("/") ? baseUrl : `${baseUrl}/`;
  }

  /** Call `method` with `token`; the answer must be `ok: true` and match `schema`. Never throws. */
  async call<S extends v.GenericSchema>(method: string, token: string, args: Record<string, unknown>, schema: S, encoding: Encoding): Promise<SlackResult<v.InferOutput<S>>> {
    const paused = (this.pausedUntil.get(method) ?? 0) - Date.now();
    // Slack asked for a pause: calling anyway would only extend it.
    if (paused > 0) return failed("ratelimited", "rate_limited", `${method}: still waiting out Slack's Retry-After`, paused);
    let response: Response;
    try {
      response = await fetch(`${this.baseUrl}${method}`, {
        method: "POST",
        headers: { authorization: `Bearer ${token}`, "content-type": encoding === "json" ? "application/json; charset=utf-8" : "application/x-www-form-urlencoded" },
        body: encoding === "json" ? JSON.stringify(args) : formBody(args),
        signal: AbortSignal.any([AbortSignal.timeout(this.timeoutMs), this.stopping.signal]),
        redirect: "error",
      });
    } catch (error) {
      const timedOut = error instanceof DOMException && error.name === "TimeoutError";
      return failed(timedOut ? "timeout" : "unreachable", "transient", `${method}: ${timedOut ? `no answer within ${this.timeoutMs / 1000}s` : `cannot reach ${this.baseUrl}: ${messageOf(error)}`}`);
    }
    if (response.status === 429) {
      const retryAfterMs = retryAfter(response.headers.get("retry-after"));
      this.pausedUntil.set(method, Date.now() + retryAfterMs);
      await response.body?.cancel();
      return failed("ratelimited", "rate_limited", `${method}: rate limited by Slack (HTTP 429, Retry-After ${Math.ceil(retryAfterMs / 1000)}s)`, retryAfterMs);
    }
    let body: unknown;
    try {
      body = await response.json();
    } catch {
      const code = response.ok ? "invalid_response" : "http_error";
      return failed(code, response.status >= 500 || response.ok ? "transient" : "permanent", `${method}: HTTP ${response.status}, not a Slack answer`);
    }
    const envelope = v.safeParse(apiEnvelope, body);
    if (!envelope.success) return failed("invalid_response", "transient", `${method}: HTTP ${response.status}, an answer without "ok"`);
    if (!envelope.output.ok) {
      const code = envelope.output.error ?? "unknown_error";
      return failed(code, kindOf(code), `${method}: Slack answered ${code}`);
    }
    const parsed = v.safeParse(schema, body);
    if (!parsed.success) return failed("invalid_response", "transient", `${method}: unexpected answer (${parsed.issues[0]?.message ?? "invalid"})`);
    return { ok: true, value: parsed.output };
  }

  /** Abort every call in flight (the service is stopping). */
  close(): void {
    this.stopping.abort();
  }
}

function failed(code: string, kind: FailureKind, detail: string, retryAfterMs?: number): { ok: false; failure: SlackFailure } {
  return { ok: false, failure: { code, kind, detail, ...(retryAfterMs !== undefined ? { retryAfterMs } : {}) } };
}

/** Retry-After in seconds (RFC 9110 also allows an HTTP date, which Slack does not send). */
function retryAfter(header: string | null): number {
  const seconds = Number(header);
  if (header === null || header.trim() === "" || !Number.isFinite(seconds) || seconds < 0) {
    const date = header === null ? Number.NaN : Date.parse(header);
    return Number.isNaN(date) ? DEFAULT_RETRY_AFTER_MS : Math.min(MAX_RETRY_AFTER_MS, Math.max(0, date - Date.now()));
  }
  return Math.min(MAX_RETRY_AFTER_MS, Math.ceil(seconds * 1000));
}

/** `application/x-www-form-urlencoded`; objects and arrays as JSON strings (how Slack takes `blocks` in a form). */
function formBody(args: Record<string, unknown>): string {
  const form = new URLSearchParams();
  for (const [key, value] of Object.entries(args)) {
    if (value === undefined) continue;
    form.set(key, typeof value === "object" && value !== null ? JSON.stringify(value) : String(value));
  }
  return form.toString();
}
