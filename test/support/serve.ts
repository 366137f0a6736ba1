/**
 * `thoughtgate serve` (the compiled binary) for e2e tests: starts it, reads what it printed (the
 * endpoint, the shims' secret, the CLI key and the approvals page with its page key), and talks to
 * it as a shim would.
 */
import type { Subprocess } from "bun";
import { requireBinary, waitFor } from "./harness.ts";

export type EvaluateBody = {
  server_id?: string;
  /** What runs the server, as a shim says it (default: `node <server_id>-server.js`, one program per id). */
  server?: { command: string[]; url: string | null };
  name: string;
  arguments?: unknown;
  method?: string;
  channels?: string[];
  annotations?: Record<string, unknown>;
};

/** The program a shim reports for a server id when a test names none. */
export function programOf(serverId: string): { command: string[]; url: null } {
  return { command: ["node", `${serverId}-server.js`], url: null };
}

export class ServeProcess {
  readonly proc: Subprocess<"ignore", "pipe", "pipe">;
  stderr = "";
  endpoint = "";
  secret = "";
  /** The CLI key (`thoughtgate tasks|approve|deny`). */
  key = "";
  /** The page key, from the fragment of `approvalsUrl`. */
  pageKey = "";
  approvalsUrl = "";
  private readonly reading: Promise<void>;

  private constructor(args: string[], env: Record<string, string | undefined>, cwd: string | undefined) {
    this.proc = Bun.spawn([requireBinary(), "serve", "--governance-port", "0", ...args], {
      stdin: "ignore",
      stdout: "pipe",
      stderr: "pipe",
      env: { ...process.env, ...env },
      ...(cwd ? { cwd } : {}),
    });
    this.reading = this.readStderr();
  }

  /** Start and wait until it printed its endpoint and secrets (or exited). */
  static async start(args: string[] = [], options: { env?: Record<string, string | undefined>; cwd?: string } = {}): Promise<ServeProcess> {
    const serve = new ServeProcess(args, options.env ?? {}, options.cwd);
    let exited = false;
    void serve.proc.exited.then(() => {
      exited = true;
    });
    await waitFor(() => exited || serve.stderr.includes("Ctrl-C stops"), "serve to print its endpoint");
    if (exited) throw new Error(`serve exited with ${serve.proc.exitCode}:\n${serve.stderr}`);
    serve.endpoint = /THOUGHTGATE_GOVERNANCE_ENDPOINT=(\S+)/.exec(serve.stderr)?.[1] ?? "";
    serve.secret = /THOUGHTGATE_GOVERNANCE_SECRET=([0-9a-f]{64})/.exec(serve.stderr)?.[1] ?? "";
    serve.key = /THOUGHTGATE_APPROVAL_KEY=([0-9a-f]{64})/.exec(serve.stderr)?.[1] ?? "";
    serve.approvalsUrl = /(http:\/\/127\.0\.0\.1:\d+\/approvals#key=[0-9a-f]{64})/.exec(serve.stderr)?.[1] ?? "";
    serve.pageKey = serve.approvalsUrl.slice(-64);
    return serve;
  }

  /** The environment `thoughtgate tasks|approve|deny` needs. */
  get cliEnv(): Record<string, string> {
    return { THOUGHTGATE_GOVERNANCE_ENDPOINT: this.endpoint, THOUGHTGATE_APPROVAL_KEY: this.key };
  }

  /** POST /governance/evaluate as a shim. */
  async evaluate(body: EvaluateBody): Promise<Record<string, any>> {
    const serverId = body.server_id ?? "gh";
    const response = await fetch(`${this.endpoint}/governance/evaluate`, {
      method: "POST",
      headers: { authorization: `Bearer ${this.secret}`, "content-type": "application/json" },
      body: JSON.stringify({ server_id: serverId, server: programOf(serverId), direction: "agent_to_server", method: "tools/call", arguments: {}, message_type: "request", profile: "production", ...body }),
    });
    if (response.status !== 200) throw new Error(`evaluate answered ${response.status}: ${await response.text()}`);
    return (await response.json()) as Record<string, any>;
  }

  /** A task as people see it (the page key): a shim reads only the tasks it asked about itself. */
  async task(id: string): Promise<Record<string, any>> {
    const response = await fetch(`${this.endpoint}/approvals/api/tasks/${id}`, { headers: { authorization: `Bearer ${this.pageKey}` } });
    return ((await response.json()) as { task: Record<string, any> }).task;
  }

  /** POST /approvals/api/tasks/{id} as a person, with the page key or the CLI key; the digest is the task's. */
  async decideWithKey(id: string, key: "page" | "cli", body: Record<string, unknown>): Promise<{ status: number; body: unknown }> {
    const digest = (await this.task(id)).digest;
    const response = await fetch(`${this.endpoint}/approvals/api/tasks/${id}`, {
      method: "POST",
      headers: { authorization: `Bearer ${key === "page" ? this.pageKey : this.key}`, "content-type": "application/json" },
      body: JSON.stringify({ digest, ...body }),
    });
    return { status: response.status, body: await response.json() };
  }

  async stop(): Promise<number> {
    if (this.proc.exitCode === null) this.proc.kill("SIGTERM");
    const code = await this.proc.exited;
    await this.reading;
    return code;
  }

  async [Symbol.asyncDispose](): Promise<void> {
    await this.stop();
  }

  private async readStderr(): Promise<void> {
    const decoder = new TextDecoder();
    for await (const chunk of this.proc.stderr) this.stderr += decoder.decode(chunk, { stream: true });
  }
}

/** Run the compiled binary to completion. */
export async function runBinary(args: string[], options: { env?: Record<string, string | undefined>; cwd?: string } = {}) {
  await using proc = Bun.spawn([requireBinary(), ...args], {
    stdin: "ignore",
    stdout: "pipe",
    stderr: "pipe",
    env: { ...process.env, ...options.env },
    ...(options.cwd ? { cwd: options.cwd } : {}),
  });
  const [stdout, stderr, exitCode] = await Promise.all([new Response(proc.stdout).text(), new Response(proc.stderr).text(), proc.exited]);
  return { exitCode, stdout, stderr };
}
