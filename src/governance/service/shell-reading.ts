/**
 * The service's bash parser (docs/governance.md, "Built-in tools"): an agent's shell call is read
 * here, from the line the agent gave, once per service with one parser kept warm, so a hook process
 * in the session never loads it. Loaded on the first shell call (that call waits for it; nothing
 * else does). A parser that cannot load, or fails on a line, is the service's failure: the call is
 * denied with why (evaluation.ts), never decided on a reading it did not make.
 */
import { messageOf } from "../../core/errors.ts";
import type { ShellReading } from "../verdict/agent-tools.ts";

export type ShellReader = {
  /** Whether `read` answers now: the parser is loaded, or failed to. */
  ready(): boolean;
  /** Resolves when `ready()`; starts the load on first call. Never rejects. */
  whenReady(): Promise<void>;
  /** The line's reading, or why the service cannot read lines. */
  read(line: string): ShellReading | { failed: string };
};

type LoadReader = () => Promise<(line: string) => ShellReading>;

const loadEmbedded: LoadReader = async () => (await import("../../shell/shell-commands.ts")).shellReader();

export function serviceShellReader(load: LoadReader = loadEmbedded): ShellReader {
  let reader: ((line: string) => ShellReading) | null = null;
  let failure: string | null = null;
  let loading: Promise<void> | null = null;
  return {
    ready: () => reader !== null || failure !== null,
    whenReady() {
      loading ??= load().then(
        (loaded) => void (reader = loaded),
        (error: unknown) => void (failure = `the governance service's bash parser did not load (${messageOf(error)})`),
      );
      return loading;
    },
    read(line) {
      if (failure !== null) return { failed: failure };
      if (reader === null) return { failed: "the governance service's bash parser is not loaded yet" };
      try {
        return reader(line);
      } catch (error) {
        return { failed: `the governance service's bash parser failed on this line (${messageOf(error)})` };
      }
    },
  };
}
