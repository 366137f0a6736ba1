/**
 * The part every fake model API shares: a loopback `Bun.serve` on port 0 that records every
 * request, and a script that plays one conversation: call each scripted tool in turn, one per
 * model turn, and once every call has its result, answer with final text. The script is decided
 * from the conversation the agent sends back (which scripted call ids already have results), so
 * a retried request gets the same answer and side requests (titles, summaries: no scripted tool
 * offered) get plain text. The wire formats live in anthropic.ts, openai-responses.ts and
 * openai-chat.ts.
 */
import type { Server } from "bun";

export type ScriptedCall = {
  /** The tool name exactly as the agent offers it to the model, e.g. `mcp__everything__echo`. */
  tool: string;
  arguments: Record<string, unknown>;
};

export type Script = {
  calls: ScriptedCall[];
  /** The last answer, after every call has a result (default: "Done."). */
  finalText?: string;
  /** The answer to a request that does not offer the next scripted tool (default: "OK."). */
  otherText?: string;
};

export type RecordedRequest = {
  method: string;
  /** Path and query, e.g. `/v1/messages?beta=true`. */
  path: string;
  headers: Record<string, string>;
  /** The parsed JSON body, the raw text when it is not JSON, null when there is none. */
  body: unknown;
};

export type ToolResult = {
  /** The call id the fake model issued. */
  callId: string;
  tool: string;
  arguments: Record<string, unknown>;
  /** The result as the agent sent it, in the API's own shape (string or content blocks). */
  output: unknown;
  /** Every text in `output`, joined with newlines: what a test usually asserts on. */
  text: string;
  /** Whether the agent flagged the result as an error (Anthropic `is_error`; undefined where the API has no flag). */
  isError: boolean | undefined;
  /** Index into `requests` of the request that first carried it. */
  requestIndex: number;
};

/** What a request told the fake: the tools it offered and the results of scripted calls it carries. */
export type Conversation = {
  offeredTools: string[];
  /** Results found in the request, by call id (any call id; the fake keeps those it issued). */
  results: Map<string, { output: unknown; text: string; isError: boolean | undefined }>;
};

/** What the fake should answer: one tool call, or text. */
export type Turn = { kind: "call"; callId: string; call: ScriptedCall } | { kind: "text"; text: string };

export type FakeModelApi = {
  /** Whether this request is a model turn the script answers (e.g. POST /v1/messages). */
  isModelRequest(method: string, path: string): boolean;
  read(body: unknown): Conversation;
  /** The response to a model request (`path`: its URL path, for an API that streams by path). */
  respond(turn: Turn, body: unknown, model: string, path: string): Response;
  /** Answers for other endpoints the agent calls (token counting, model lists); undefined → 404. */
  other?(method: string, path: string, body: unknown): Response | undefined;
  /** The call id for scripted call `index`: deterministic, so a retried turn issues the same id. */
  callId(index: number): string;
};

export type FakeModel = AsyncDisposable & {
  /** `http://127.0.0.1:<port>`, no trailing slash. */
  url: string;
  requests: RecordedRequest[];
  /** Results of scripted calls, in the order they first arrived. */
  toolResults: ToolResult[];
  /** Model requests that did not offer the next scripted tool, with the tools they did offer. */
  unscripted: Array<{ requestIndex: number; offeredTools: string[] }>;
  /** Every model request answered: which request, the tools it offered, and the answer. */
  turns: Array<{ requestIndex: number; offeredTools: string[]; turn: Turn }>;
  stop(): Promise<void>;
};

export function startFakeModel(api: FakeModelApi, script: Script): FakeModel {
  const requests: RecordedRequest[] = [];
  const toolResults: ToolResult[] = [];
  const unscripted: FakeModel["unscripted"] = [];
  const turns: FakeModel["turns"] = [];

  function nextTurn(conversation: Conversation, requestIndex: number): Turn {
    // Record every scripted call the conversation carries a result for, once.
    let answered = 0;
    script.calls.forEach((call, index) => {
      const callId = api.callId(index);
      const result = conversation.results.get(callId);
      if (result === undefined) return;
      answered = Math.max(answered, index + 1);
      if (!toolResults.some((known) => known.callId === callId)) {
        toolResults.push({ callId, tool: call.tool, arguments: call.arguments, ...result, requestIndex });
      }
    });
    const next = script.calls[answered];
    if (next === undefined) return { kind: "text", text: script.finalText ?? "Done." };
    if (conversation.offeredTools.includes(next.tool)) return { kind: "call", callId: api.callId(answered), call: next };
    unscripted.push({ requestIndex, offeredTools: conversation.offeredTools });
    return { kind: "text", text: script.otherText ?? "OK." };
  }

  const server: Server<undefined> = Bun.serve({
    hostname: "127.0.0.1",
    port: 0,
    // Agents keep streaming connections open between turns; never time them out under a test.
    idleTimeout: 0,
    async fetch(request) {
      const url = new URL(request.url);
      const path = `${url.pathname}${url.search}`;
      const text = await request.text();
      const body = parseBody(text);
      const headers: Record<string, string> = {};
      request.headers.forEach((value, key) => {
        headers[key] = value;
      });
      const requestIndex = requests.push({ method: request.method, path, headers, body }) - 1;
      if (api.isModelRequest(request.method, url.pathname)) {
        const conversation = api.read(body);
        const turn = nextTurn(conversation, requestIndex);
        turns.push({ requestIndex, offeredTools: conversation.offeredTools, turn });
        const model = isRecord(body) && typeof body.model === "string" ? body.model : "fake-model";
        return api.respond(turn, body, model, url.pathname);
      }
      return api.other?.(request.method, url.pathname, body) ?? Response.json({ error: { type: "not_found", message: `no fake for ${request.method} ${path}` } }, { status: 404 });
    },
  });

  const stop = async () => {
    await server.stop(true);
  };
  return {
    url: `http://127.0.0.1:${server.port}`,
    requests,
    toolResults,
    unscripted,
    turns,
    stop,
    [Symbol.asyncDispose]: stop,
  };
}

function parseBody(text: string): unknown {
  if (text.length === 0) return null;
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return text;
  }
}

export function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

/** Every `text` string in a result (a string, a list of content blocks, or nested blocks), joined. */
export function textOf(output: unknown): string {
  if (typeof output === "string") return output;
  if (Array.isArray(output)) return output.map(textOf).filter((text) => text.length > 0).join("\n");
  if (isRecord(output)) {
    if (typeof output.text === "string") return output.text;
    if ("content" in output) return textOf(output.content);
  }
  return "";
}

/** Server-sent events: `event:` line (when named) and one `data:` line of JSON per event. */
export function sseResponse(events: Array<{ event?: string; data: unknown }>, trailer = ""): Response {
  const text = events.map(({ event, data }) => `${event === undefined ? "" : `event: ${event}\n`}data: ${JSON.stringify(data)}\n\n`).join("") + trailer;
  return new Response(text, { headers: { "content-type": "text/event-stream", "cache-control": "no-cache" } });
}
