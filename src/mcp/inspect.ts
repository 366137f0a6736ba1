import type * as v from "valibot";
import { canonicalJson, sha256Hex } from "../core/canonical-json.ts";
import { messageOf, ThoughtGateError } from "../core/errors.ts";
import { RPC } from "../core/jsonrpc.ts";
import { McpClient, type Graces, DEFAULT_GRACES } from "./client.ts";
import { RpcError } from "./rpc-errors.ts";
import {
  check,
  PromptSchema,
  PromptsPageSchema,
  ResourceSchema,
  ResourcesPageSchema,
  ToolSchema,
  ToolsPageSchema,
  type InitializeResult,
} from "../core/mcp-schema.ts";

/** A server that keeps handing out new cursors is broken; stop rather than loop forever. */
const MAX_LIST_PAGES = 1_000;

export type Hint = boolean | null;

type ToolReport = {
  name: string;
  title: string | null;
  description: string | null;
  /** As the server declared them; null when it did not (MCP then assumes the cautious default). */
  annotations: { readOnlyHint: Hint; destructiveHint: Hint; idempotentHint: Hint; openWorldHint: Hint };
  /** SHA-256 of the canonical JSON of `definition`: changes whenever anything in the tool does. */
  definition_hash: string;
  definition: unknown;
};

type PromptReport = {
  name: string;
  title: string | null;
  description: string | null;
  arguments: Array<{ name: string; required: boolean; description: string | null }>;
  definition: unknown;
};

type ResourceReport = { uri: string; name: string; title: string | null; mimeType: string | null; description: string | null };

export type InspectReport = {
  server: { name: string; title: string | null; version: string; protocolVersion: string; instructions: string | null };
  tools: ToolReport[];
  prompts: PromptReport[];
  resources: ResourceReport[];
};

export type InspectOptions = {
  command: string[];
  /** For each answer from the server, initialize included. */
  timeoutMs: number;
  /** Variables the server's entry sets, over ours (`THOUGHTGATE_*` never reaches it). */
  env?: Record<string, string>;
  graces?: Graces;
};

/**
 * Start the server, initialize, list everything it offers (all pages), shut it down. A kind the
 * server has no capability for is not asked for and comes back empty.
 */
export async function inspectServer(options: InspectOptions): Promise<InspectReport> {
  const shown = options.command.map(shellWord).join(" ");
  const graces = options.graces ?? DEFAULT_GRACES;
  // Ctrl+C must not leave the server behind: it runs in its own process group and never sees it.
  // The handlers go in before the server starts, so no signal can find it running without them.
  const interruption: { signal: NodeJS.Signals | null } = { signal: null };
  let client: McpClient | null = null;
  const onSignal = (signal: NodeJS.Signals) => {
    interruption.signal = signal;
    void client?.close(graces);
  };
  process.on("SIGINT", onSignal);
  process.on("SIGTERM", onSignal);
  try {
    client = McpClient.start({ command: options.command, ...(options.env ? { env: { ...process.env, ...options.env } } : {}) });
    try {
      if (interruption.signal) throw interruptedError(interruption.signal);
      const init = await client.initialize({ timeoutMs: options.timeoutMs });
      return await listEverything(client, init, options.timeoutMs);
    } catch (error) {
      throw interruption.signal ? interruptedError(interruption.signal) : contextual(error, `MCP server ${shown}`);
    }
  } finally {
    process.off("SIGINT", onSignal);
    process.off("SIGTERM", onSignal);
    await client?.close(graces);
  }
}

async function listEverything(client: McpClient, init: InitializeResult, timeoutMs: number): Promise<InspectReport> {
  const { capabilities, serverInfo } = init;
  const tools = capabilities.tools ? await listAll(client, "tools/list", ToolsPageSchema, (page) => page.tools, timeoutMs) : [];
  const prompts = capabilities.prompts ? await listAll(client, "prompts/list", PromptsPageSchema, (page) => page.prompts, timeoutMs) : [];
  const resources = capabilities.resources
    ? await listAll(client, "resources/list", ResourcesPageSchema, (page) => page.resources, timeoutMs)
    : [];
  return {
    server: {
      name: serverInfo.name,
      title: serverInfo.title ?? null,
      version: serverInfo.version,
      protocolVersion: init.protocolVersion,
      instructions: init.instructions ?? null,
    },
    tools: tools.map((raw, i) => toolReport(raw, i)),
    prompts: prompts.map((raw, i) => promptReport(raw, i)),
    resources: resources.map((raw, i) => resourceReport(raw, i)),
  };
}

/** Every item of a paginated list, following `nextCursor` (MCP 2025-06-18 pagination). */
async function listAll<S extends v.GenericSchema<unknown, { nextCursor?: string | undefined }>>(
  client: McpClient,
  method: string,
  schema: S,
  itemsOf: (page: v.InferOutput<S>) => unknown[],
  timeoutMs: number,
): Promise<unknown[]> {
  const items: unknown[] = [];
  const seen = new Set<string>();
  let cursor: string | undefined;
  for (let page = 0; page < MAX_LIST_PAGES; page++) {
    let raw: unknown;
    try {
      raw = await client.request(method, cursor === undefined ? {} : { cursor }, timeoutMs);
    } catch (error) {
      // Declared but not implemented: the same as not declared.
      if (error instanceof RpcError && error.rpc.code === RPC.methodNotFound) return items;
      throw error;
    }
    const checked = check(schema, raw);
    if (!checked.ok) throw new ThoughtGateError("PROTOCOL", `${method}: the result is not valid: ${checked.error}`);
    items.push(...itemsOf(checked.value));
    cursor = checked.value.nextCursor;
    if (cursor === undefined) return items;
    if (seen.has(cursor)) throw new ThoughtGateError("PROTOCOL", `${method}: the server returned cursor ${JSON.stringify(cursor)} twice`);
    seen.add(cursor);
  }
  throw new ThoughtGateError("PROTOCOL", `${method}: still more pages after ${MAX_LIST_PAGES}`);
}

function toolReport(raw: unknown, index: number): ToolReport {
  const tool = item(ToolSchema, raw, `tools.${index}`);
  const hints = tool.annotations ?? {};
  return {
    name: tool.name,
    title: tool.title ?? hints.title ?? null,
    description: tool.description ?? null,
    annotations: {
      readOnlyHint: hints.readOnlyHint ?? null,
      destructiveHint: hints.destructiveHint ?? null,
      idempotentHint: hints.idempotentHint ?? null,
      openWorldHint: hints.openWorldHint ?? null,
    },
    // The raw definition, not our parsed copy: every field the server sent counts.
    definition_hash: sha256Hex(canonicalJson(raw)),
    definition: raw,
  };
}

function promptReport(raw: unknown, index: number): PromptReport {
  const prompt = item(PromptSchema, raw, `prompts.${index}`);
  return {
    name: prompt.name,
    title: prompt.title ?? null,
    description: prompt.description ?? null,
    arguments: (prompt.arguments ?? []).map((arg) => ({ name: arg.name, required: arg.required ?? false, description: arg.description ?? null })),
    definition: raw,
  };
}

function resourceReport(raw: unknown, index: number): ResourceReport {
  const resource = item(ResourceSchema, raw, `resources.${index}`);
  return {
    uri: resource.uri,
    name: resource.name,
    title: resource.title ?? null,
    mimeType: resource.mimeType ?? null,
    description: resource.description ?? null,
  };
}

function item<S extends v.GenericSchema>(schema: S, raw: unknown, where: string): v.InferOutput<S> {
  const checked = check(schema, raw);
  if (!checked.ok) throw new ThoughtGateError("PROTOCOL", `${where}: ${checked.error}`);
  return checked.value;
}

function contextual(error: unknown, context: string): ThoughtGateError {
  if (error instanceof ThoughtGateError) return new ThoughtGateError(error.code, `${context}: ${error.message}`, { cause: error });
  return new ThoughtGateError("IO", `${context}: ${messageOf(error)}`, { cause: error });
}

/** How a user would type the word in a shell, for messages: `sh -c 'exit 7'`. */
function shellWord(word: string): string {
  return /^[\w@%+=:,./-]+$/.test(word) ? word : `'${word.replaceAll("'", `'\\''`)}'`;
}

function interruptedError(signal: NodeJS.Signals): ThoughtGateError {
  return new ThoughtGateError("IO", `interrupted by ${signal}; the server was shut down`);
}
