/**
 * A baseline of the hook figures (hook.ts), compiled by the bench like our binary: a Claude Code
 * PreToolUse hook that does nothing but read its input and allow the call. What a hook written
 * for Bun costs per call before it decides anything.
 */
const input = await Bun.stdin.text();
if (input.length === 0) process.exit(2);
process.stdout.write(`${JSON.stringify({ hookSpecificOutput: { hookEventName: "PreToolUse", permissionDecision: "allow" } })}\n`);
process.exit(0);

export {};
