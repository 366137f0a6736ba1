import { writeSync } from "node:fs";
import { defineCommand } from "citty";
import { messageOf, usageError } from "../core/errors.ts";
import { HOOK_AGENTS, parseHookInput, renderAnswer, renderFailure, type HookAgent, type HookAnswer, type Rendered } from "../hook/agent-formats.ts";
import { builtinCall } from "../hook/builtin-call.ts";
import { decideBuiltinCall, recordRan } from "../hook/hook-decision.ts";
import { mcpToolAnswer } from "../hook/mcp-tool.ts";
import { announcesByNameAlone, governedMcpAnswer, isOwnTool, otherTool } from "../hook/own-tool-names.ts";
import { findSession } from "../governance/deciders/find-session.ts";
import { answeringHooks } from "../governance/verdict/agent-prompt-hooks.ts";
import { defaultEventsPath, optionalDuration, profileArg, resolveProfile } from "./_shared.ts";

/**
 * How long the hook may take before it blocks the call itself: below the timeout ThoughtGate
 * installs with the hook (src/wrap/agent-hooks.ts), so an agent never times the hook out (which
 * some agents take as "go ahead").
 */
const HOOK_DEADLINE_MS = 570_000;

const args = {
  agent: { type: "positional", required: true, description: `The agent whose hook calls it: ${HOOK_AGENTS.join(", ")}`, valueHint: "AGENT" },
  timeout: { type: "string", description: "Block the call when no decision came in this long (default 570s, under the 600 s the installed hook allows)", valueHint: "DURATION" },
  ...profileArg,
} as const;

export default defineCommand({
  meta: {
    name: "hook",
    description: "Decide one of an agent's own tool calls (its shell, reads, edits, writes, fetches), called by the agent's hook system",
  },
  args,
  async run({ args: parsed }) {
    const agent = parsed.agent as string;
    if (!(HOOK_AGENTS as readonly string[]).includes(agent)) throw usageError(`unknown agent ${JSON.stringify(agent)}: expected one of ${HOOK_AGENTS.join(", ")}`);
    const deadlineMs = optionalDuration(parsed.timeout, "--timeout") ?? HOOK_DEADLINE_MS;
    const profile = resolveProfile(parsed.profile);
    // A crash must block the call too: any exit but the blocking one lets the agent go ahead.
    process.prependListener("uncaughtException", (error) => {
      write(renderFailure(`it crashed (${messageOf(error)}); run \`thoughtgate doctor\``));
      process.exit(2);
    });
    const signal = AbortSignal.timeout(deadlineMs);
    const rendered = await Promise.race([
      answer(agent as HookAgent, profile, signal),
      new Promise<Rendered>((resolve) => signal.addEventListener("abort", () => resolve(renderFailure(`no decision within ${Math.round(deadlineMs / 1000)} s (a person may still be asked: \`thoughtgate approvals\`)`)))),
    ]);
    write(rendered);
    return rendered.exitCode;
  },
});

async function answer(agent: HookAgent, profile: ReturnType<typeof resolveProfile>, signal: AbortSignal): Promise<Rendered> {
  try {
    const input = parseHookInput(await Bun.stdin.text(), process.cwd());
    if (!input.ok) return renderFailure(`${input.why}; is this hook installed for ${agent}? (\`thoughtgate doctor\`)`);
    if (input.call.event === "PostToolUse") {
      // After the call ran: recorded, nothing to answer (the call is done). Its start holds its
      // arguments: the shell line is not read again.
      const ran = builtinCall(input.call);
      if (ran !== null && input.call.toolUseId !== null) await recordRan(ran, input.call.toolUseId, input.call.durationMs, input.call.agentMode);
      return renderAnswer(agent, { kind: "none" });
    }
    let call;
    if (announcesByNameAlone(agent)) {
      // opencode's plugin and Copilot CLI's hook announce every tool, MCP servers' too, by a name alone (hook/own-tool-names.ts).
      const mcp = governedMcpAnswer(agent, input.call.toolName, await findSession());
      if (mcp !== null) return renderAnswer(agent, mcp);
      call = isOwnTool(agent, input.call.toolName) ? builtinCall(input.call) : otherTool(input.call);
    } else call = builtinCall(input.call);
    if (call === null) return renderAnswer(agent, mcpToolAnswer(input.call.toolName, await findSession()));
    const verdict = await decideBuiltinCall(call, {
      agent,
      cwd: input.call.cwd,
      signal,
      profile,
      standaloneEvents: (runId) => defaultEventsPath({ runId, serverId: "agent" }),
      // Not where the project's settings could answer that prompt in the person's place (agent-prompt-hooks.ts).
      agentCanPrompt: agent === "claude-code" && answeringHooks(input.call.cwd).PermissionRequest.length === 0,
      agentMode: input.call.agentMode,
    }, input.call.toolUseId);
    // No decision could be made (the decider threw or gave up): blocked, saying why, as any failure of the hook's.
    if (verdict.failed && verdict.action === "deny") return renderFailure(`${verdict.error.message}; run \`thoughtgate doctor\``);
    const said: HookAnswer =
      verdict.askedInAgent !== null
        ? { kind: "ask", reason: verdict.askedInAgent }
        : verdict.action === "forward"
          ? { kind: "allow", reason: `ThoughtGate: ${verdict.reason}` }
          : { kind: "deny", reason: `ThoughtGate denied this ${call.name} call: ${verdict.reason}` };
    return renderAnswer(agent, said);
  } catch (error) {
    return renderFailure(`${messageOf(error)}; run \`thoughtgate doctor\``);
  }
}

/**
 * The answer, written to the file descriptors themselves: `process.stdout` and `process.stderr`
 * are streams made on first use, which would add their making to every call the agent waits on
 * (docs/benchmarks.md, "An agent's own tool calls"). A few hundred bytes into a fresh pipe.
 */
function write(rendered: Rendered): void {
  if (rendered.stdout !== "") writeSync(1, rendered.stdout);
  if (rendered.stderr !== "") writeSync(2, rendered.stderr);
}
