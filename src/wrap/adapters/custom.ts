import { customPath } from "./config-dirs.ts";
import { readMapFile, type Adapter } from "./shared.ts";
import { ThoughtGateError } from "../../core/errors.ts";

/** Any other agent: `--config-path P`, servers in `mcpServers`, values taken literally. */
export const custom: Adapter = {
  agent: "custom",
  label: "custom agent",
  discover(ctx, options) {
    const path = customPath(ctx, options);
    if (!path) throw new ThoughtGateError("USAGE", "--agent-type custom needs --config-path: the file that lists the agent's MCP servers");
    return [readMapFile("custom", path, "custom", "mcpServers", "none", ctx)];
  },
};
