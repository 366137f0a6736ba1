import { defineCommand } from "citty";
import { mkdtempSync, readFileSync, realpathSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { playPerson } from "../demo/demo-person.ts";
import { runWrap } from "../wrap/run-wrap.ts";
import { commonArgs, rejectUnknownFlags } from "./_shared.ts";

/** Where to go from the demo: check this machine, govern a real agent, read the policy in force. */
const NEXT_COMMANDS: ReadonlyArray<readonly [string, string]> = [
  ["thoughtgate doctor", "check this machine: agents, policy, approval channels"],
  ["thoughtgate wrap -- claude", "govern your own agent (or codex, opencode, gemini …)"],
  ["thoughtgate validate-config --explain", "read the policy in force, rule by rule"],
];

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
    say("demo: running `thoughtgate wrap --agent-type custom --config-path <that file> -- thoughtgate __demo-agent <that file>` with the embedded default policy");
    say("demo: the agent asks twice to delete the notes: once in its own form (as Claude Code does), once where it cannot ask (as `claude -p`), where the call waits for you on the approvals page and `thoughtgate approve`\n");
    const person = playPerson({ binary: self, say });
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
        // Its scripted person runs `thoughtgate approve` with no terminal (demo-person.ts).
        cliRequireTerminal: false,
        say,
      });
      person.stop();
      const answered = await person.answered;
      const restored = readFileSync(config, "utf8") === original;
      say(`\ndemo: the agent's config is ${restored ? "back, byte for byte" : "NOT as it was (this is a bug)"}`);
      if (!answered) say("demo: the approval on the command line did not happen (see above)");
      const width = Math.max(...NEXT_COMMANDS.map(([command]) => command.length));
      say(`\nnext:\n${NEXT_COMMANDS.map(([command, what]) => `  ${command.padEnd(width)}  ${what}`).join("\n")}`);
      return restored && answered ? code : 1;
    } finally {
      person.stop();
      rmSync(dir, { recursive: true, force: true });
    }
  },
});
