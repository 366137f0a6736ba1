import { bestEffort } from "../core/errors.ts";
import type { Unit } from "../stdio/framer.ts";
import type { ByteReader } from "../stdio/framed-reader.ts";
import { LineSink } from "../stdio/line-sink.ts";
import { pump, type DecisionSlots, type FlowSink } from "./pump.ts";

/** The agent side of a shim: what `shim --listen` replaces (the agent on our stdin and stdout). */
export interface AgentSide {
  readonly sink: FlowSink;
  /** Read the agent until it is gone (EOF, or the HTTP session ended); every unit goes to `route`. */
  pump(route: (unit: Unit) => void, toServer: FlowSink | null, decisions: DecisionSlots): Promise<void>;
  /** Stop taking new messages from the agent (a signal, governance asked to stop). */
  stopReading(): void;
  /** Everything is said: flush what the agent has not read and close. */
  close(): Promise<void>;
}

/** The agent on stdio: NDJSON on our stdin and stdout (docs/architecture.md, decision 1). */
export class StdioAgent implements AgentSide {
  readonly sink: LineSink;
  private reader: ByteReader | null = null;

  constructor(
    private readonly label: string,
    onGone: (reason: string) => void,
  ) {
    this.sink = new LineSink(Bun.stdout.writer(), onGone);
  }

  pump(route: (unit: Unit) => void, toServer: FlowSink | null, decisions: DecisionSlots): Promise<void> {
    const reader: ByteReader = Bun.stdin.stream().getReader();
    this.reader = reader;
    return pump(reader, route, toServer, this.sink, decisions, `${this.label} agent`);
  }

  stopReading(): void {
    bestEffort(() => void this.reader?.cancel());
  }

  async close(): Promise<void> {
    await this.sink.backpressure();
    this.sink.close();
  }
}
