/**
 * A fake Anthropic Messages API (`POST /v1/messages`, streamed or not) for Claude Code:
 * point ANTHROPIC_BASE_URL at `fake.url`. A scripted call is one `tool_use` block streamed as
 * content_block_start + input_json_delta; its result comes back as a `tool_result` block in the
 * next user message. `POST /v1/messages/count_tokens` is answered too.
 */
import { isRecord, sseResponse, startFakeModel, textOf, type Conversation, type FakeModel, type FakeModelApi, type Script, type Turn } from "./fake-model.ts";

export function startFakeAnthropic(script: Script): FakeModel {
  return startFakeModel(anthropicApi, script);
}

let messageCount = 0;

const anthropicApi: FakeModelApi = {
  isModelRequest: (method, path) => method === "POST" && path === "/v1/messages",
  callId: (index) => `toolu_fake_${index}`,
  read(body): Conversation {
    const offeredTools = isRecord(body) && Array.isArray(body.tools) ? body.tools.filter(isRecord).map((tool) => String(tool.name)) : [];
    const results: Conversation["results"] = new Map();
    const messages = isRecord(body) && Array.isArray(body.messages) ? body.messages.filter(isRecord) : [];
    for (const message of messages) {
      if (message.role !== "user" || !Array.isArray(message.content)) continue;
      for (const block of message.content.filter(isRecord)) {
        if (block.type !== "tool_result" || typeof block.tool_use_id !== "string") continue;
        results.set(block.tool_use_id, {
          output: block.content,
          text: textOf(block.content),
          isError: typeof block.is_error === "boolean" ? block.is_error : undefined,
        });
      }
    }
    return { offeredTools, results };
  },
  respond(turn, body, model) {
    messageCount += 1;
    const id = `msg_fake_${messageCount}`;
    const stream = isRecord(body) && body.stream === true;
    return stream ? streamed(id, model, turn) : Response.json(whole(id, model, turn));
  },
  other(method, path, body) {
    if (method === "POST" && path === "/v1/messages/count_tokens") {
      return Response.json({ input_tokens: Math.ceil(JSON.stringify(body).length / 4) });
    }
    return undefined;
  },
};

const USAGE = { input_tokens: 10, output_tokens: 5, cache_creation_input_tokens: 0, cache_read_input_tokens: 0 };

function whole(id: string, model: string, turn: Turn): Record<string, unknown> {
  const content =
    turn.kind === "call"
      ? [{ type: "tool_use", id: turn.callId, name: turn.call.tool, input: turn.call.arguments }]
      : [{ type: "text", text: turn.text }];
  return {
    id,
    type: "message",
    role: "assistant",
    model,
    content,
    stop_reason: turn.kind === "call" ? "tool_use" : "end_turn",
    stop_sequence: null,
    usage: USAGE,
  };
}

/** The event sequence of the streaming Messages API: one content block, then message_delta and message_stop. */
function streamed(id: string, model: string, turn: Turn): Response {
  const start = { type: "message_start", message: { ...whole(id, model, turn), content: [], stop_reason: null, usage: { ...USAGE, output_tokens: 1 } } };
  const block =
    turn.kind === "call"
      ? [
          { type: "content_block_start", index: 0, content_block: { type: "tool_use", id: turn.callId, name: turn.call.tool, input: {} } },
          { type: "content_block_delta", index: 0, delta: { type: "input_json_delta", partial_json: JSON.stringify(turn.call.arguments) } },
        ]
      : [
          { type: "content_block_start", index: 0, content_block: { type: "text", text: "" } },
          { type: "content_block_delta", index: 0, delta: { type: "text_delta", text: turn.text } },
        ];
  const events = [
    start,
    ...block,
    { type: "content_block_stop", index: 0 },
    { type: "message_delta", delta: { stop_reason: turn.kind === "call" ? "tool_use" : "end_turn", stop_sequence: null }, usage: { output_tokens: 5 } },
    { type: "message_stop" },
  ];
  return sseResponse(events.map((data) => ({ event: data.type, data })));
}
