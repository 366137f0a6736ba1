import type { ThoughtGateConfig } from "../../core/config/schema.ts";

/**
 * The embedded default policy, used when no thoughtgate.yaml exists (a first run): tools the
 * server marks read-only are forwarded, tools it marks destructive need a human's approval, the
 * rest are forwarded and audited. Annotations come from the server's own tools/list.
 */
export const EMBEDDED_DEFAULT: ThoughtGateConfig = {
  schema: 1,
  sources: [],
  governance: {
    defaults: { action: "forward" },
    rules: [
      { id: "default-read-only", match: "*", method: "tools/call", annotations: { readOnlyHint: true }, action: "forward" },
      { id: "default-destructive", match: "*", method: "tools/call", annotations: { destructiveHint: true }, action: "approve" },
    ],
  },
  approval: {},
  pins: { mode: "strict", block_severity: "high" },
};

export const EMBEDDED_DEFAULT_YAML = `schema: 1
governance:
  defaults: { action: forward }
  rules:
    - { id: default-read-only, match: "*", annotations: { readOnlyHint: true }, action: forward }
    - { id: default-destructive, match: "*", annotations: { destructiveHint: true }, action: approve }
`;
