import { randomBytes } from "node:crypto";
import * as v from "valibot";
import type { Answer, errorResponse } from "../wire/api.ts";

/**
 * What stands between the governance service's routes and the network: JSON answers, body
 * parsing with the wire schemas, the secret checks, the Host and origin checks, and the headers
 * of the approvals page. Nothing here knows about decisions.
 */
export type ErrorCode = v.InferOutput<typeof errorResponse>["code"];

export function answer(body: unknown, status = 200): Answer {
  return { status, body };
}

export function refusal(status: number, code: ErrorCode, error: string): Answer {
  return { status, body: { error, code } };
}

export function json(body: unknown, status = 200): Response {
  return Response.json(body, { status, headers: { "cache-control": "no-store", "x-content-type-options": "nosniff" } });
}

export function toResponse(given: Answer): Response {
  return json(given.body, given.status);
}

export function failure(status: number, code: ErrorCode, error: string): Response {
  return toResponse(refusal(status, code, error));
}

type Parsed<T> = { ok: true; value: T } | { ok: false; answer: Answer };

/** Check a body with its wire schema; any problem is a 400 with one line saying what. `undefined`: no body. */
export function parseValue<S extends v.GenericSchema>(raw: unknown, schema: S, whenEmpty?: v.InferInput<S>): Parsed<v.InferOutput<S>> {
  const result = v.safeParse(schema, raw === undefined && whenEmpty !== undefined ? whenEmpty : raw);
  if (result.success) return { ok: true, value: result.output };
  const problems = result.issues.map((issue) => `${v.getDotPath(issue) ?? "(body)"}: ${issue.message}`);
  return { ok: false, answer: refusal(400, "bad_request", `invalid request body: ${problems.join("; ")}`) };
}

/** An HTTP request's JSON body (`undefined` when empty), or the 400 that says it is not JSON. */
export async function readJson(request: Request): Promise<{ ok: true; raw: unknown } | { ok: false; answer: Answer }> {
  const text = await request.text();
  if (text.trim() === "") return { ok: true, raw: undefined };
  try {
    return { ok: true, raw: JSON.parse(text) };
  } catch {
    return { ok: false, answer: refusal(400, "bad_request", "request body is not valid JSON") };
  }
}

/** Read and check an HTTP request's JSON body with its wire schema. */
export async function parseBody<S extends v.GenericSchema>(request: Request, schema: S, whenEmpty?: v.InferInput<S>): Promise<{ ok: true; value: v.InferOutput<S> } | { ok: false; response: Response }> {
  const read = await readJson(request);
  const parsed = read.ok ? parseValue(read.raw, schema, whenEmpty) : read;
  return parsed.ok ? parsed : { ok: false, response: toResponse(parsed.answer) };
}

export function bearer(request: Request): string {
  const header = request.headers.get("authorization") ?? "";
  return header.startsWith("Bearer ") ? header.slice("Bearer ".length) : "";
}

/** Browsers say where a request comes from; only our own page (or no browser at all) may POST. */
export function isCrossOrigin(request: Request): boolean {
  const site = request.headers.get("sec-fetch-site");
  if (site !== null && site !== "same-origin" && site !== "none") return true;
  const origin = request.headers.get("origin");
  return origin !== null && origin !== `http://${request.headers.get("host")}`;
}

/**
 * The Host check, before anything else reads the request. No Host at all (HTTP/1.0, or an empty
 * header) is a malformed request: 400 (RFC 9112 §3.2 asks the same of HTTP/1.1). A Host that is not
 * ours is refused: a page on another site whose name resolves to 127.0.0.1 (DNS rebinding) still
 * sends its own name.
 */
export function hostProblem(request: Request, allowed: ReadonlySet<string>): Response | null {
  const host = request.headers.get("host");
  if (host === null || host.trim() === "") return failure(400, "bad_request", "the request has no Host header");
  return allowed.has(host) ? null : failure(403, "forbidden", "unexpected Host header");
}

/** The request's path; without a Host the URL Bun hands over is relative, so it is resolved against a placeholder. */
export function pathOf(request: Request): string {
  try {
    return new URL(request.url, "http://host.invalid").pathname;
  } catch {
    return "(unparsable URL)";
  }
}

/** The Host values a loopback service answers to; DNS rebinding sends a foreign site's name. */
export function loopbackHosts(host: string, port: number): Set<string> {
  return new Set([`${host}:${port}`, `127.0.0.1:${port}`, `localhost:${port}`, `[::1]:${port}`]);
}

export function pageHeaders(nonce: string): Record<string, string> {
  return {
    "content-type": "text/html; charset=utf-8",
    "cache-control": "no-store",
    "content-security-policy": `default-src 'self'; script-src 'nonce-${nonce}'; style-src 'nonce-${nonce}'; img-src data:; base-uri 'none'; form-action 'none'; frame-ancestors 'none'`,
    "x-frame-options": "DENY",
    "x-content-type-options": "nosniff",
    "referrer-policy": "no-referrer",
  };
}

export function newNonce(): string {
  return randomBytes(16).toString("base64");
}
