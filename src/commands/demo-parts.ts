import { defineCommand } from "citty";
import { runDemoAgent } from "../demo/demo-agent.ts";
import { runDemoServer } from "../demo/demo-server.ts";
import { usageError } from "../core/errors.ts";

/** Hidden: the demo's MCP server (`thoughtgate demo` starts it through a rewritten config). */
export const demoServer = defineCommand({
  meta: { name: "__demo-server", description: "The demo's MCP server (used by thoughtgate demo)", hidden: true },
  run: () => runDemoServer(),
});

/** Hidden: the demo's scripted agent. */
export const demoAgent = defineCommand({
  meta: { name: "__demo-agent", description: "The demo's scripted agent (used by thoughtgate demo)", hidden: true },
  args: { config: { type: "positional", description: "The agent's MCP config file", required: true } },
  async run({ args }) {
    if (!args.config) throw usageError("__demo-agent needs its MCP config path");
    return runDemoAgent(args.config, (line) => process.stdout.write(`${line}\n`));
  },
});
