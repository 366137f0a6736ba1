/**
 * The parse floor: `parse-relay -- CMD [ARGS...]` relays like `byte-relay.ts` (same reads, one
 * write and flush per chunk, backpressure on the destination), but first splits every chunk into
 * lines and checks each the way any proxy that reads the messages must: strict UTF-8 decoding and
 * `JSON.parse`, in both directions. It forwards each chunk as received and refuses nothing (a
 * line that fails stops the relay: the bench sends none). What the shim costs beyond this relay
 * is what it does besides reading every message.
 */
import type { FileSink } from "bun";

const separator = process.argv.indexOf("--");
const command = separator === -1 ? [] : process.argv.slice(separator + 1);
if (command.length === 0) {
  console.error("usage: parse-relay -- CMD [ARGS...]");
  process.exit(2);
}

const NEWLINE = 0x0a;
const strictUtf8 = new TextDecoder("utf-8", { fatal: true });
const server = Bun.spawn(command, { stdin: "pipe", stdout: "pipe", stderr: "inherit" });

/** Every complete line of `chunk` (after `partial`, the start of a line from earlier chunks) parsed; returns the new partial. */
function parseLines(partial: Uint8Array, chunk: Uint8Array): Uint8Array {
  let start = 0;
  let pending: Uint8Array = partial;
  for (let newline = chunk.indexOf(NEWLINE); newline !== -1; newline = chunk.indexOf(NEWLINE, start)) {
    let line = chunk.subarray(start, newline);
    if (pending.length > 0) {
      line = Buffer.concat([pending, line]);
      pending = new Uint8Array(0);
    }
    JSON.parse(strictUtf8.decode(line));
    start = newline + 1;
  }
  if (start === chunk.length) return pending;
  // Copied: the stream may reuse the chunk's memory for the next read.
  return Buffer.concat([pending, chunk.subarray(start)]);
}

async function copy(from: ReadableStream<Uint8Array>, to: FileSink): Promise<void> {
  const reader = from.getReader();
  let partial: Uint8Array = new Uint8Array(0);
  for (;;) {
    const { value, done } = await reader.read();
    if (done) break;
    partial = parseLines(partial, value);
    to.write(value);
    const flushed = to.flush();
    if (flushed instanceof Promise) await flushed;
  }
  await to.end();
}

void copy(Bun.stdin.stream(), server.stdin).catch((error: unknown) => {
  console.error(`parse-relay: stdin: ${String(error)}`);
  process.exit(1);
});
await copy(server.stdout, Bun.stdout.writer()).catch((error: unknown) => {
  console.error(`parse-relay: server output: ${String(error)}`);
  process.exit(1);
});
process.exit(await server.exited);
