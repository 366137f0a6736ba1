/**
 * An agent that writes raw bytes to `thoughtgate shim` and reads its stdout line by line, so
 * tests can send exactly the malformed input an attacker would and see exactly what comes back.
 */
import type { Subprocess } from "bun";
import { BINARY } from "./harness.ts";

export type Received = { jsonrpc?: string; id?: unknown; method?: string; result?: any; error?: { code: number; message: string; data?: any } };

export class RawAgent {
  readonly proc: Subprocess<"pipe", "pipe", "pipe">;
  private readonly lines: string[] = [];
  private readonly waiters: Array<() => void> = [];
  private stdoutDone = false;
  stderr = "";
  private readonly done: Promise<void>;

  /** `binary`: the thoughtgate to run (another install's, or a launcher); `cwd`: where it runs (a project's policy is found there). */
  constructor(shimArgs: string[], env: Record<string, string | undefined> = process.env, binary = BINARY, cwd?: string) {
    this.proc = Bun.spawn([binary, "shim", ...shimArgs], { stdin: "pipe", stdout: "pipe", stderr: "pipe", env, ...(cwd ? { cwd } : {}) });
    this.done = Promise.all([this.readStdout(), this.readStderr()]).then(() => {});
  }

  write(data: string | Uint8Array): void {
    this.proc.stdin.write(data);
    this.proc.stdin.flush();
  }

  send(message: unknown): void {
    this.write(`${JSON.stringify(message)}\n`);
  }

  /** The next line the shim wrote, parsed; fails after `timeoutMs`. */
  async next(timeoutMs = 20_000): Promise<Received> {
    const deadline = performance.now() + timeoutMs;
    while (this.lines.length === 0) {
      if (this.stdoutDone) throw new Error(`shim closed stdout; stderr:\n${this.stderr}`);
      if (performance.now() > deadline) throw new Error(`no output within ${timeoutMs} ms; stderr:\n${this.stderr}`);
      await new Promise<void>((resolve) => {
        this.waiters.push(resolve);
        setTimeout(resolve, 50);
      });
    }
    return JSON.parse(this.lines.shift() as string) as Received;
  }

  /** Read messages until one with this id arrives; returns it and everything before it. */
  async until(id: unknown, timeoutMs = 20_000): Promise<{ match: Received; before: Received[] }> {
    const before: Received[] = [];
    for (;;) {
      const message = await this.next(timeoutMs);
      if (message.id === id && message.method === undefined) return { match: message, before };
      before.push(message);
    }
  }

  async request(id: number | string, method: string, params?: unknown): Promise<Received> {
    this.send({ jsonrpc: "2.0", id, method, ...(params === undefined ? {} : { params }) });
    return (await this.until(id)).match;
  }

  /** Close stdin (agent EOF) and wait for the shim to exit; returns its exit code. */
  async close(): Promise<number> {
    this.proc.stdin.end();
    return this.exit();
  }

  async exit(): Promise<number> {
    const code = await this.proc.exited;
    await this.done;
    return code;
  }

  remaining(): Received[] {
    return this.lines.splice(0).map((line) => JSON.parse(line) as Received);
  }

  private async readStdout(): Promise<void> {
    let buffered = "";
    const decoder = new TextDecoder();
    for await (const chunk of this.proc.stdout) {
      buffered += decoder.decode(chunk, { stream: true });
      let newline = buffered.indexOf("\n");
      while (newline !== -1) {
        this.lines.push(buffered.slice(0, newline));
        buffered = buffered.slice(newline + 1);
        newline = buffered.indexOf("\n");
      }
      for (const wake of this.waiters.splice(0)) wake();
    }
    this.stdoutDone = true;
    for (const wake of this.waiters.splice(0)) wake();
  }

  private async readStderr(): Promise<void> {
    const decoder = new TextDecoder();
    for await (const chunk of this.proc.stderr) this.stderr += decoder.decode(chunk, { stream: true });
  }
}

export const b64 = (text: string | Uint8Array) => Buffer.from(text).toString("base64");
