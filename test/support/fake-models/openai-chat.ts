/**
 * A fake OpenAI Chat Completions API (`POST …/chat/completions`, streamed or not) for opencode's
 * OpenAI-compatible providers (`"npm": "@ai-sdk/openai-compatible"`, `options.baseURL` =
 * `${fake.url}/v1`). A scripted call is one `tool_calls` entry (streamed as a chunk naming the
 * function, then one with its arguments, then `finish_reason: "tool_calls"`); its result comes
 * back as a `{"role": "tool", "tool_call_id": …}` message.
 */
import { isRecord, sseResponse, startFakeModel, textOf, type Conversation, type FakeModel, type FakeModelApi, type Script, type Turn } from "./fake-model.ts";

export function startFakeOpenAIChat(script: Script): FakeModel {
  return startFakeModel(chatApi, script);
}

let completionCount = 0;

const chatApi: FakeModelApi = {
  isModelRequest: (method, path) => method === "POST" && path.endsWith("/chat/completions"),
  callId: (index) => `call_fake_${index}`,
  read(body): Conversation {
    const offeredTools =
      isRecord(body) && Array.isArray(body.tools)
        ? body.tools
            .filter(isRecord)
            .map((tool) => (isRecord(tool.function) ? tool.function.name : undefined))
            .filter((name): name is string => typeof name === "string")
        : [];
    const results: Conversation["results"] = new Map();
    const messages = isRecord(body) && Array.isArray(body.messages) ? body.messages.filter(isRecord) : [];
    for (const message of messages) {
      if (message.role !== "tool" || typeof message.tool_call_id !== "string") continue;
      results.set(message.tool_call_id, { output: message.content, text: textOf(message.content), isError: undefined });
    }
    return { offeredTools, results };
  },
  respond(turn, body, model) {
    completionCount += 1;
    const id = `chatcmpl-fake-${completionCount}`;
    const created = Math.floor(Date.now() / 1000);
    const finishReason = turn.kind === "call" ? "tool_calls" : "stop";
    if (!(isRecord(body) && body.stream === true)) {
      return Response.json({
        id,
        object: "chat.completion",
        created,
        model,
        choices: [{ index: 0, message: { role: "assistant", ...whole(turn) }, finish_reason: finishReason }],
        usage: USAGE,
      });
    }
    const chunk = (delta: Record<string, unknown>, finish: string | null) => ({
      data: { id, object: "chat.completion.chunk", created, model, choices: [{ index: 0, delta, finish_reason: finish }] },
    });
    const deltas =
      turn.kind === "call"
        ? [
            chunk({ role: "assistant", content: null, tool_calls: [{ index: 0, id: turn.callId, type: "function", function: { name: turn.call.tool, arguments: "" } }] }, null),
            chunk({ tool_calls: [{ index: 0, function: { arguments: JSON.stringify(turn.call.arguments) } }] }, null),
          ]
        : [chunk({ role: "assistant", content: "" }, null), chunk({ content: turn.text }, null)];
    const usage = { data: { id, object: "chat.completion.chunk", created, model, choices: [], usage: USAGE } };
    return sseResponse([...deltas, chunk({}, finishReason), usage], "data: [DONE]\n\n");
  },
  other(method, path) {
    if (method === "GET" && path.endsWith("/models")) return Response.json({ object: "list", data: [] });
    return undefined;
  },
};

const USAGE = { prompt_tokens: 10, completion_tokens: 5, total_tokens: 15 };

function whole(turn: Turn): Record<string, unknown> {
  if (turn.kind === "text") return { content: turn.text };
  return { content: null, tool_calls: [{ id: turn.callId, type: "function", function: { name: turn.call.tool, arguments: JSON.stringify(turn.call.arguments) } }] };
}
