import { messageOf } from "../core/errors.ts";
import { CODEX_HOOK_KEY, codexHookArgs } from "./agent-hooks.ts";

/**
 * Whether Codex will run ThoughtGate's hook this session, asked of Codex itself: Codex skips a hook
 * it does not trust without a word, so wrap never assumes it. `codex app-server` (Codex's own JSON-RPC
 * interface, the one its hook review screen uses) lists every hook it loaded with its trust status,
 * given the same `-c` overrides the agent gets (ours and the user's own config flags).
 */
export type CodexHookTrust = { trusted: true } | { trusted: false; why: string };

/** How long Codex may take to answer before the trust is reported unknown. */
const ASK_TIMEOUT_MS = 15_000;

/** `enrolledKey`: the hook `enroll codex` keeps in Codex's hooks file (enrolled-hooks.ts), asked about instead of one given with `-c`. */
export async function codexHookTrust(command: readonly string[], binary: string, cwd: string, enrolledKey: string | null = null): Promise<CodexHookTrust> {
  const [program, ...rest] = command;
  if (program === undefined) return { trusted: false, why: "no Codex command" };
  let child: ReturnType<typeof Bun.spawn<"pipe", "pipe", "ignore">>;
  try {
    const ours = enrolledKey === null ? codexHookArgs(binary) : [];
    child = Bun.spawn([program, ...ours, ...configFlags(rest), "app-server"], { cwd, stdin: "pipe", stdout: "pipe", stderr: "ignore" });
  } catch (error) {
    return { trusted: false, why: `codex app-server could not start (${messageOf(error)})` };
  }
  const requests = [
    { id: 1, method: "initialize", params: { clientInfo: { name: "thoughtgate", version: "1" } } },
    { method: "initialized" },
    { id: 2, method: "hooks/list", params: { cwds: [cwd] } },
  ];
  const timer = setTimeout(() => child.kill(), ASK_TIMEOUT_MS);
  try {
    child.stdin.write(requests.map((request) => `${JSON.stringify(request)}\n`).join(""));
    await child.stdin.flush();
    const reply = await replyTo(2, child.stdout);
    if (reply === null) return { trusted: false, why: `codex app-server gave no hook list within ${ASK_TIMEOUT_MS / 1000} s` };
    return trustIn(reply, enrolledKey ?? CODEX_HOOK_KEY);
  } catch (error) {
    return { trusted: false, why: `codex app-server: ${messageOf(error)}` };
  } finally {
    clearTimeout(timer);
    child.kill();
    await child.exited;
  }
}

/** The user's own config flags (`-c`, `--config`, `--enable`, `--disable`, `-p`/`--profile`): they can change which hooks Codex runs. */
function configFlags(args: readonly string[]): string[] {
  const out: string[] = [];
  for (let i = 0; i < args.length; i++) {
    const word = args[i] as string;
    if (word === "--") break;
    if (["-c", "--config", "--enable", "--disable", "-p", "--profile"].includes(word) && args[i + 1] !== undefined) out.push(word, args[++i] as string);
    else if (/^(--config|--enable|--disable|--profile)=/.test(word)) out.push(word);
  }
  return out;
}

async function replyTo(id: number, stream: ReadableStream<Uint8Array>): Promise<Record<string, unknown> | null> {
  const decoder = new TextDecoder();
  let text = "";
  for await (const chunk of stream) {
    text += decoder.decode(chunk, { stream: true });
    let newline = text.indexOf("\n");
    while (newline >= 0) {
      const line = text.slice(0, newline);
      text = text.slice(newline + 1);
      newline = text.indexOf("\n");
      try {
        const message = JSON.parse(line) as Record<string, unknown>;
        if (message.id === id) return message;
      } catch {
        // Not a JSON-RPC line: Codex's own logging.
      }
    }
  }
  return null;
}

function trustIn(reply: Record<string, unknown>, key: string): CodexHookTrust {
  if (reply.error !== undefined) return { trusted: false, why: `Codex refused to list its hooks (${JSON.stringify(reply.error)})` };
  const data = (reply.result as { data?: Array<{ hooks?: Array<{ key?: string; trustStatus?: string; enabled?: boolean }> }> } | undefined)?.data ?? [];
  const ours = data.flatMap((entry) => entry.hooks ?? []).find((hook) => hook.key === key);
  if (ours === undefined) return { trusted: false, why: "Codex does not list ThoughtGate's hook (another PreToolUse hook given with -c takes its place?)" };
  if (ours.enabled === false) return { trusted: false, why: "Codex lists ThoughtGate's hook as disabled" };
  if (ours.trustStatus !== "trusted") return { trusted: false, why: `Codex lists ThoughtGate's hook as ${ours.trustStatus ?? "of unknown trust"}` };
  return { trusted: true };
}
