/**
 * The floor for the shim's overhead: `byte-relay -- CMD [ARGS...]` spawns CMD and copies bytes
 * stdin → CMD's stdin and CMD's stdout → stdout, parsing nothing. run.ts compiles it to a
 * standalone binary like `thoughtgate`, and it reads and writes through the same Bun APIs the
 * shim uses (a stdin stream reader, `FileSink` writers flushed once per chunk), so what the shim
 * costs beyond it is what it does with the bytes.
 */
import type { FileSink } from "bun";

const separator = process.argv.indexOf("--");
const command = separator === -1 ? [] : process.argv.slice(separator + 1);
if (command.length === 0) {
  console.error("usage: byte-relay -- CMD [ARGS...]");
  process.exit(2);
}

const server = Bun.spawn(command, { stdin: "pipe", stdout: "pipe", stderr: "inherit" });

async function copy(from: ReadableStream<Uint8Array>, to: FileSink): Promise<void> {
  const reader = from.getReader();
  for (;;) {
    const { value, done } = await reader.read();
    if (done) break;
    to.write(value);
    const flushed = to.flush();
    // Backpressure: a slow reader on the far side slows this direction down.
    if (flushed instanceof Promise) await flushed;
  }
  await to.end();
}

// Agent EOF closes the server's stdin; the server then exits and its stdout ends.
void copy(Bun.stdin.stream(), server.stdin).catch((error: unknown) => console.error(`byte-relay: stdin: ${String(error)}`));
await copy(server.stdout, Bun.stdout.writer());
process.exit(await server.exited);
