import type { ThoughtGateConfig } from "../../core/config/schema.ts";

/**
 * The embedded default policy, used when no thoughtgate.yaml exists (a first run). From the tool's
 * annotations (the server's own, from its tools/list, or ThoughtGate's catalog hint for a server
 * that declares none: definitions/annotation-catalog.ts):
 * - read-only tools are forwarded;
 * - tools that may destroy something need a person's approval, and so does a tool that declares
 *   nothing (MCP's defaults count it as not read-only, destructive and open-world);
 * - tools that only add, and reach the open world (a GitHub issue, a Slack message: what others
 *   see, and where data leaves the machine), need approval too;
 * - the rest (additive tools on this machine only, such as creating a directory) are forwarded
 *   and audited.
 * Codex's own `exec` mode draws the same line (README: read-only, or non-destructive and
 * closed-world, go without asking).
 */
export const EMBEDDED_DEFAULT: ThoughtGateConfig = {
  schema: 1,
  sources: [],
  governance: {
    defaults: { action: "forward" },
    rules: [
      { id: "default-read-only", match: "*", method: "tools/call", annotations: { readOnlyHint: true }, action: "forward" },
      { id: "default-destructive", match: "*", method: "tools/call", annotations: { destructiveHint: true }, action: "approve" },
      { id: "default-open-world", match: "*", method: "tools/call", annotations: { openWorldHint: true }, action: "approve" },
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
    - { id: default-open-world, match: "*", annotations: { openWorldHint: true }, action: approve }
`;

/** What the embedded default does, in one line: for banners and `validate-config --explain`. */
export const EMBEDDED_DEFAULT_WORDS =
  "read-only tools forwarded; tools that may destroy, tools that write to the open world, and tools that declare nothing (unless ThoughtGate's annotation catalog knows their exact definition) need approval; additive tools on this machine forwarded";
