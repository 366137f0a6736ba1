import { bestEffort } from "../core/errors.ts";
import { taggedLog } from "../core/log.ts";
import { exitCodeForSignal } from "../core/signals.ts";
import type { Unit } from "../stdio/framer.ts";
import type { ByteReader } from "../stdio/framed-reader.ts";
import { LineSink } from "../stdio/line-sink.ts";
import { ServerProcess, type Exit } from "../stdio/server-process.ts";
import { pump, type FlowSink } from "./pump.ts";
import type { Graces, ServerState, Upstream } from "./upstream.ts";

/** The MCP server as a child process on stdio: NDJSON both ways, staged shutdown. */
export class StdioUpstream implements Upstream {
  readonly url = undefined;
  private server: ServerProcess | null = null;
  private toServer: LineSink | null = null;
  private reader: ByteReader | null = null;
  private reading: Promise<void> = Promise.resolve();

  constructor(
    readonly command: string[],
    private readonly serverId: string,
    /** Variables the server must not get: those the shim's flags named for its own credentials. */
    private readonly withhold: readonly string[] = [],
    /** The server's environment: the one the agent gave the shim (the shim's own may be placed: core/user-environment.ts). */
    private readonly env: NodeJS.ProcessEnv = process.env,
  ) {}

  open(): { sink: FlowSink; state: ServerState } | { error: string } {
    const spawned = ServerProcess.spawn(this.command, this.env, { withhold: this.withhold });
    if (!(spawned instanceof ServerProcess)) return { error: spawned.error };
    this.server = spawned;
    const log = taggedLog(this.serverId);
    this.toServer = new LineSink(spawned.stdin, (reason) => log.debug(`server stdin closed: ${reason}`));
    log.debug(`started ${this.command.join(" ")} (pid ${spawned.pid})`);
    return { sink: this.toServer, state: { state: "running", pid: spawned.pid } };
  }

  async pump(route: (unit: Unit) => void, toAgent: FlowSink): Promise<string> {
    const server = this.server;
    if (!server) return new Promise<string>(() => {});
    const reader: ByteReader = server.stdout.getReader();
    this.reader = reader;
    // Each pump waits only on the sink it forwards to. Waiting on the other direction too deadlocks:
    // a server blocked writing its stdout stops reading its stdin, and neither side moves again.
    this.reading = pump(reader, route, toAgent, this.toServer, null, `${this.serverId} server`);
    await this.reading;
    const code = await server.exited;
    return `it exited (code ${server.hasExited ? code : "unknown"})`;
  }

  hurry(): void {
    this.server?.hurry();
  }

  async stop(graces: Graces): Promise<{ exitCode: number; state: ServerState }> {
    const server = this.server;
    if (!server) return { exitCode: 1, state: { state: "failed_to_start" } };
    const exit = await server.stop({ stdinCloseMs: graces.stdinCloseMs, sigtermMs: graces.sigtermMs });
    const state: ServerState = {
      state: exit.escalation === "none" ? "exited" : "terminated",
      pid: server.pid,
      exit_code: exit.exitCode,
      signal: exit.signal,
    };
    // A grandchild that left the group could still hold the server's stdout open.
    await Promise.race([this.reading, Bun.sleep(graces.sigtermMs)]);
    bestEffort(() => void this.reader?.cancel());
    return { exitCode: exitCodeOf(exit), state };
  }
}

/** 0 for a clean shutdown (one the shim asked for), else the server's own code (128+n for a signal it died of). */
function exitCodeOf(exit: Exit): number {
  if (exit.exitCode !== null) return exit.exitCode;
  if (exit.escalation !== "none") return 0;
  return exitCodeForSignal(exit.signal);
}
