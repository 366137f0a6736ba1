/**
 * A fake Gemini API (`POST /v1beta/models/<model>:streamGenerateContent?alt=sse` and
 * `:generateContent`) for Gemini CLI: point GOOGLE_GEMINI_BASE_URL at `fake.url` (with any
 * GEMINI_API_KEY). A scripted call is one `functionCall` part of a model turn; its result comes back
 * as a `functionResponse` part in the next user turn. `:countTokens` is answered too.
 */
import { isRecord, sseResponse, startFakeModel, textOf, type Conversation, type FakeModel, type FakeModelApi, type Script, type Turn } from "./fake-model.ts";

export function startFakeGemini(script: Script): FakeModel {
  return startFakeModel(geminiApi, script);
}

const geminiApi: FakeModelApi = {
  isModelRequest: (method, path) => method === "POST" && /:(stream)?[gG]enerateContent$/.test(path),
  callId: (index) => `call_fake_${index}`,
  read(body): Conversation {
    const tools = isRecord(body) && Array.isArray(body.tools) ? body.tools.filter(isRecord) : [];
    const offeredTools = tools.flatMap((tool) => (Array.isArray(tool.functionDeclarations) ? tool.functionDeclarations.filter(isRecord).map((fn) => String(fn.name)) : []));
    const results: Conversation["results"] = new Map();
    const contents = isRecord(body) && Array.isArray(body.contents) ? body.contents.filter(isRecord) : [];
    for (const content of contents) {
      for (const part of Array.isArray(content.parts) ? content.parts.filter(isRecord) : []) {
        const response = part.functionResponse;
        if (!isRecord(response) || typeof response.id !== "string") continue;
        results.set(response.id, { output: response.response, text: responseText(response.response), isError: undefined });
      }
    }
    return { offeredTools, results };
  },
  respond(turn, _body, model, path) {
    const chunk = candidate(turn, /models\/([^:]+):/.exec(path)?.[1] ?? model);
    // The path says whether the agent streams (`:streamGenerateContent?alt=sse`); the body does not.
    return path.endsWith(":streamGenerateContent") ? sseResponse([{ data: chunk }]) : Response.json(chunk);
  },
  other(method, path) {
    if (method === "POST" && path.endsWith(":countTokens")) return Response.json({ totalTokens: 10 });
    return undefined;
  },
};

function candidate(turn: Turn, model: string): Record<string, unknown> {
  const part = turn.kind === "call" ? { functionCall: { id: turn.callId, name: turn.call.tool, args: turn.call.arguments } } : { text: turn.text };
  return {
    candidates: [{ content: { role: "model", parts: [part] }, finishReason: "STOP", index: 0 }],
    usageMetadata: { promptTokenCount: 10, candidatesTokenCount: 5, totalTokenCount: 15 },
    modelVersion: model,
  };
}

/** Gemini CLI sends an MCP result as `{output: …}` or `{error: …}`, or the content blocks themselves. */
function responseText(response: unknown): string {
  if (isRecord(response) && "output" in response) return textOf(response.output);
  if (isRecord(response) && "error" in response) return textOf(response.error);
  return textOf(response);
}
