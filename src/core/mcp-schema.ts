import * as v from "valibot";

/**
 * The MCP wire shapes ThoughtGate reads (MCP 2025-06-18 and later), one schema each, the type
 * inferred from it: the stdio client reads servers with them, and the governance service's wire
 * format carries a tool's annotations with the same schema. Objects are loose: a server may send
 * fields a later protocol version added, and a tool's definition hash must cover every field it sent.
 */

/** JSON-RPC 2.0 §5.1 error object. */
export const RpcErrorObjectSchema = v.object({
  code: v.pipe(v.number(), v.integer()),
  message: v.string(),
  data: v.optional(v.unknown()),
});
export type RpcErrorObject = v.InferOutput<typeof RpcErrorObjectSchema>;

const CapabilitySchema = v.optional(v.looseObject({}));

export const InitializeResultSchema = v.looseObject({
  protocolVersion: v.string(),
  capabilities: v.looseObject({ tools: CapabilitySchema, prompts: CapabilitySchema, resources: CapabilitySchema }),
  serverInfo: v.looseObject({ name: v.string(), version: v.string(), title: v.optional(v.string()) }),
  instructions: v.optional(v.string()),
});
export type InitializeResult = v.InferOutput<typeof InitializeResultSchema>;

/** MCP `ToolAnnotations`: hints a server gives about a tool; policy rules match on the four booleans. */
export const ToolAnnotationsSchema = v.looseObject({
  title: v.optional(v.string()),
  readOnlyHint: v.optional(v.boolean()),
  destructiveHint: v.optional(v.boolean()),
  idempotentHint: v.optional(v.boolean()),
  openWorldHint: v.optional(v.boolean()),
});
export type ToolAnnotations = v.InferOutput<typeof ToolAnnotationsSchema>;

export const ToolSchema = v.looseObject({
  name: v.string(),
  title: v.optional(v.string()),
  description: v.optional(v.string()),
  annotations: v.optional(ToolAnnotationsSchema),
});

export const PromptSchema = v.looseObject({
  name: v.string(),
  title: v.optional(v.string()),
  description: v.optional(v.string()),
  arguments: v.optional(
    v.array(v.looseObject({ name: v.string(), description: v.optional(v.string()), required: v.optional(v.boolean()) })),
  ),
});

export const ResourceSchema = v.looseObject({
  uri: v.string(),
  name: v.string(),
  title: v.optional(v.string()),
  description: v.optional(v.string()),
  mimeType: v.optional(v.string()),
});

/** One page of `tools/list`, `prompts/list` or `resources/list`; items stay raw until checked one by one. */
const nextCursor = v.optional(v.string());
export const ToolsPageSchema = v.looseObject({ tools: v.array(v.unknown()), nextCursor });
export const PromptsPageSchema = v.looseObject({ prompts: v.array(v.unknown()), nextCursor });
export const ResourcesPageSchema = v.looseObject({ resources: v.array(v.unknown()), nextCursor });

export type Checked<T> = { ok: true; value: T } | { ok: false; error: string };

/** Validate `value`; the error names the first offending field (`tools.3.name: Invalid type…`). */
export function check<S extends v.GenericSchema>(schema: S, value: unknown): Checked<v.InferOutput<S>> {
  const result = v.safeParse(schema, value);
  if (result.success) return { ok: true, value: result.output };
  const [issue] = result.issues;
  const path = v.getDotPath(issue);
  return { ok: false, error: `${path === null ? "" : `${path}: `}${issue.message}` };
}
