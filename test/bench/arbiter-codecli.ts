/**
 * The bench's codecli (docs/codecli-protocol.md): `bun arbiter-codecli.ts --warmup W --count N [marker]`. For each
 * step it prints a line of ordinary output, then a `tool.request` that waits for a decision, and
 * times from handing the request to its stdout to reading the matching `policy.decision` on its
 * stdin: the wait a codecli sees. Any decision but allow fails the run. At the end it prints
 * `samples [ms, …]` (the steps after the warm-up), which its decider passes through as output.
 */
export {};

function flag(name: string, fallback: number): number {
  const index = process.argv.indexOf(name);
  return index === -1 ? fallback : Number(process.argv[index + 1]);
}

const warmup = flag("--warmup", 100);
const count = flag("--count", 1_000);
const out = Bun.stdout.writer();
const reader = Bun.stdin.stream().getReader();
const decoder = new TextDecoder();
let buffered = "";

async function nextLine(): Promise<string> {
  for (;;) {
    const newline = buffered.indexOf("\n");
    if (newline !== -1) {
      const line = buffered.slice(0, newline);
      buffered = buffered.slice(newline + 1);
      return line;
    }
    const { value, done } = await reader.read();
    if (done) throw new Error("stdin ended before a decision");
    buffered += decoder.decode(value, { stream: true });
  }
}

async function flush(): Promise<void> {
  const flushed = out.flush();
  if (flushed instanceof Promise) await flushed;
}

const samples: number[] = [];
for (let step = 0; step < warmup + count; step++) {
  const id = `bench-${step}`;
  const request = `${JSON.stringify({ v: 1, type: "tool.request", ts: new Date().toISOString(), id, tool: "fs.read", action: "read", args: { path: "README.md" }, requires_policy: true })}\n`;
  out.write(`working on step ${step}\n`);
  const started = performance.now();
  out.write(request);
  await flush();
  for (;;) {
    const message = JSON.parse(await nextLine()) as { type?: string; id?: unknown; decision?: string };
    if (message.type !== "policy.decision" || message.id !== id) continue;
    if (message.decision !== "allow") {
      console.error(`arbiter-codecli: ${id} was not allowed: ${JSON.stringify(message)}`);
      process.exit(1);
    }
    break;
  }
  if (step >= warmup) samples.push(performance.now() - started);
}
out.write(`samples ${JSON.stringify(samples)}\n`);
await flush();
process.exit(0);
