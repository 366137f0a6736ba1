import { defineCommand } from "citty";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { realpathSync } from "node:fs";
import { runWrap } from "../wrap/session.ts";
import { commonArgs, rejectUnknownFlags } from "./_shared.ts";

export default defineCommand({
  meta: { name: "demo", description: "See ThoughtGate govern an agent, with nothing else installed: a scripted agent and a notes server through a real wrap" },
  args: { ...commonArgs },
  async run({ rawArgs }) {
    rejectUnknownFlags(rawArgs, { ...commonArgs });
    const self = realpathSync(process.execPath);
    const dir = mkdtempSync(join(tmpdir(), "thoughtgate-demo-"));
    const config = join(dir, "mcp.json");
    const original = `{\n  // the demo agent's MCP servers\n  "mcpServers": {\n    "notes": { "command": ${JSON.stringify(self)}, "args": ["__demo-server"] }\n  }\n}\n`;
    writeFileSync(config, original);
    const say = (text: string) => process.stderr.write(`${text}\n`);
    say(`demo: an agent config at ${config} with one MCP server, "notes" (tools: read_notes read-only, add_note, delete_notes destructive)`);
    say("demo: running `thoughtgate wrap --agent-type custom --config-path <that file> -- thoughtgate __demo-agent <that file>` with the embedded default policy\n");
    try {
      const code = await runWrap({
        command: [self, "__demo-agent", config],
        agentType: "custom",
        configPath: config,
        profile: "production",
        governancePort: 0,
        restore: true,
        dryRun: false,
        showDecisions: true,
        say,
      });
      const restored = readFileSync(config, "utf8") === original;
      say(`\ndemo: the agent's config is ${restored ? "back, byte for byte" : "NOT as it was (this is a bug)"}`);
      return restored ? code : 1;
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  },
});
