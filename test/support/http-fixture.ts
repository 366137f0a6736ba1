/**
 * A fixture that serves MCP (or OAuth) over HTTP on a free loopback port: started, its URL read
 * from the `listening URL` line it prints, and killed (and reaped) when the test is done.
 */
import type { Subprocess } from "bun";

export type HttpFixture = { url: string; proc: Subprocess<"ignore", "pipe", "pipe">; stderr: () => string; stop(): Promise<void> };

export async function startHttpFixture(command: string[], env: Record<string, string | undefined> = process.env): Promise<HttpFixture> {
  const proc = Bun.spawn(command, { stdin: "ignore", stdout: "pipe", stderr: "pipe", env });
  let stderr = "";
  void (async () => {
    const decoder = new TextDecoder();
    for await (const chunk of proc.stderr) stderr += decoder.decode(chunk, { stream: true });
  })();
  const reader = proc.stdout.getReader();
  let out = "";
  const decoder = new TextDecoder();
  while (!out.includes("\n")) {
    const { done, value } = await reader.read();
    if (done) throw new Error(`${command.join(" ")} exited before listening: ${stderr}`);
    out += decoder.decode(value, { stream: true });
  }
  reader.releaseLock();
  // Keep draining stdout so a chatty fixture never blocks on a full pipe.
  void proc.stdout.pipeTo(new WritableStream()).catch(() => undefined);
  const match = /^listening (\S+)/.exec(out);
  if (!match?.[1]) throw new Error(`${command.join(" ")} printed ${JSON.stringify(out)}, not "listening URL"`);
  return {
    url: match[1],
    proc,
    stderr: () => stderr,
    stop: async () => {
      proc.kill("SIGKILL");
      await proc.exited;
    },
  };
}
