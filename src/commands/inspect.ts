import { defineCommand } from "citty";
import { ThoughtGateError } from "../core/errors.ts";

// Placeholder replaced by the inspect implementation (src/mcp/client.ts).
export default defineCommand({
  meta: { name: "inspect", description: "List an MCP server's tools, prompts and resources" },
  run() {
    throw new ThoughtGateError("USAGE", "inspect is not built yet");
  },
});
