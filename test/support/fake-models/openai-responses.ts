/**
 * A fake OpenAI Responses API (`POST …/responses`, streamed or not) for Codex, which speaks only
 * this API to a custom `model_providers` entry (`wire_api = "responses"`; point its `base_url`
 * at `${fake.url}/v1`). A scripted call is one `function_call` output item; its result comes
 * back as a `function_call_output` input item with the same `call_id`.
 */
import { isRecord, sseResponse, startFakeModel, textOf, type Conversation, type FakeModel, type FakeModelApi, type Script, type Turn } from "./fake-model.ts";

export function startFakeOpenAIResponses(script: Script): FakeModel {
  return startFakeModel(responsesApi, script);
}

let responseCount = 0;

const responsesApi: FakeModelApi = {
  isModelRequest: (method, path) => method === "POST" && path.endsWith("/responses"),
  callId: (index) => `call_fake_${index}`,
  read(body): Conversation {
    const results: Conversation["results"] = new Map();
    const input = isRecord(body) && Array.isArray(body.input) ? body.input.filter(isRecord) : [];
    for (const item of input) {
      if (item.type !== "function_call_output" || typeof item.call_id !== "string") continue;
      results.set(item.call_id, { output: item.output, text: textOf(item.output), isError: undefined });
    }
    return { offeredTools: toolNames(isRecord(body) ? body.tools : undefined), results };
  },
  respond(turn, body, model) {
    responseCount += 1;
    const id = `resp_fake_${responseCount}`;
    const item = outputItem(turn, responseCount, isRecord(body) ? body.tools : undefined);
    const response = { id, object: "response", created_at: Math.floor(Date.now() / 1000), status: "completed", model, output: [item], usage: USAGE };
    if (!(isRecord(body) && body.stream === true)) return Response.json(response);
    const inProgress = { ...response, status: "in_progress", output: [] };
    let sequence = 0;
    const event = (type: string, data: Record<string, unknown>) => ({ event: type, data: { type, sequence_number: sequence++, ...data } });
    const deltas =
      turn.kind === "text"
        ? [event("response.output_text.delta", { item_id: item.id, output_index: 0, content_index: 0, delta: turn.text })]
        : [event("response.function_call_arguments.delta", { item_id: item.id, output_index: 0, delta: item.arguments })];
    return sseResponse([
      event("response.created", { response: inProgress }),
      event("response.in_progress", { response: inProgress }),
      event("response.output_item.added", { output_index: 0, item: { ...item, status: "in_progress", ...(turn.kind === "text" ? { content: [] } : { arguments: "" }) } }),
      ...deltas,
      event("response.output_item.done", { output_index: 0, item }),
      event("response.completed", { response }),
    ]);
  },
  other(method, path) {
    if (method === "GET" && path.endsWith("/models")) return Response.json({ object: "list", data: [] });
    return undefined;
  },
};

const USAGE = {
  input_tokens: 10,
  input_tokens_details: { cached_tokens: 0 },
  output_tokens: 5,
  output_tokens_details: { reasoning_tokens: 0 },
  total_tokens: 15,
};

function outputItem(turn: Turn, count: number, tools: unknown): Record<string, unknown> & { id: string; arguments?: string } {
  if (turn.kind === "call") {
    const { namespace, name } = splitToolName(turn.call.tool, tools);
    return {
      type: "function_call",
      id: `fc_fake_${count}`,
      call_id: turn.callId,
      ...(namespace === undefined ? {} : { namespace }),
      name,
      arguments: JSON.stringify(turn.call.arguments),
      status: "completed",
    };
  }
  return { type: "message", id: `msg_fake_${count}`, role: "assistant", status: "completed", content: [{ type: "output_text", text: turn.text, annotations: [] }] };
}

/**
 * The tools offered, by name. A function inside a `{"type": "namespace"}` tool (how Codex offers
 * an MCP server's tools: namespace `mcp__<server>`, functions named after the tools) is listed
 * as `<namespace>__<function>`, e.g. `mcp__everything__echo`, the form Claude Code uses too.
 */
function offeredTools(tools: unknown): Array<{ qualified: string; namespace?: string; name: string }> {
  if (!Array.isArray(tools)) return [];
  return tools.filter(isRecord).flatMap((tool) => {
    if (typeof tool.name !== "string") return [];
    const namespace = tool.name;
    if (tool.type === "namespace" && Array.isArray(tool.tools)) {
      return tool.tools
        .filter(isRecord)
        .filter((inner) => typeof inner.name === "string")
        .map((inner) => ({ qualified: `${namespace}__${String(inner.name)}`, namespace, name: String(inner.name) }));
    }
    return [{ qualified: namespace, name: namespace }];
  });
}

function toolNames(tools: unknown): string[] {
  return offeredTools(tools).map((tool) => tool.qualified);
}

/** The namespace and function name a function_call item carries for a qualified tool name. */
function splitToolName(qualified: string, tools: unknown): { namespace?: string; name: string } {
  const offered = offeredTools(tools).find((tool) => tool.qualified === qualified);
  return offered === undefined ? { name: qualified } : { ...(offered.namespace === undefined || offered.namespace === offered.name ? {} : { namespace: offered.namespace }), name: offered.name };
}
