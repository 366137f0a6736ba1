import type { ToolAnnotations } from "./mcp-schema.ts";

// Kept apart from mcp-schema.ts: the engine needs these on every call, and a shim without a
// policy file must not load valibot for them (types are erased; values are not).

/** The hints a rule's `annotations` filter may name. */
export type AnnotationHint = "readOnlyHint" | "destructiveHint" | "idempotentHint" | "openWorldHint";

/**
 * A tool's hints with the MCP defaults filled in for what it did not say (MCP `ToolAnnotations`):
 * not read-only, destructive (meaningful only when not read-only, so a read-only tool is not
 * destructive unless it says so), not idempotent, open-world. A tool whose annotations are unknown
 * (not listed, or the list could not be read) gets exactly these: never treated as benign.
 */
export function effectiveHints(annotations: ToolAnnotations | undefined): Record<AnnotationHint, boolean> {
  const readOnly = annotations?.readOnlyHint ?? false;
  return {
    readOnlyHint: readOnly,
    destructiveHint: annotations?.destructiveHint ?? !readOnly,
    idempotentHint: annotations?.idempotentHint ?? false,
    openWorldHint: annotations?.openWorldHint ?? true,
  };
}
