/**
 * The baseline for the arbiter's decision latency: `echo-decider -- CMD [ARGS...]` runs CMD and
 * does the least any decider must do: split its stdout into lines, pass ordinary lines through,
 * and answer each `tool.request` with a `policy.decision` allow on its stdin at once, with no
 * engine, no schema and no audit. run.ts compiles it to a standalone binary like `thoughtgate`,
 * and it uses the same Bun APIs (a stream reader, `FileSink` writers flushed per chunk), so what
 * `thoughtgate arbiter` adds beyond it is the governance.
 */
export {};

const separator = process.argv.indexOf("--");
const command = separator === -1 ? [] : process.argv.slice(separator + 1);
if (command.length === 0) {
  console.error("usage: echo-decider -- CMD [ARGS...]");
  process.exit(2);
}

const child = Bun.spawn(command, { stdin: "pipe", stdout: "pipe", stderr: "inherit" });
const stdout = Bun.stdout.writer();
const reader = child.stdout.getReader();
const decoder = new TextDecoder();
let partial = "";
for (;;) {
  const { value, done } = await reader.read();
  if (done) break;
  const lines = (partial + decoder.decode(value, { stream: true })).split("\n");
  partial = lines.pop() ?? "";
  let output = "";
  for (const line of lines) {
    if (!line.includes('"type":"tool.request"')) {
      output += `${line}\n`;
      continue;
    }
    const request = JSON.parse(line) as { id: unknown };
    const decision = { v: 1, type: "policy.decision", ts: new Date().toISOString(), run_id: "echo", id: request.id, decision: "allow", reason: "echo", rule_id: null };
    child.stdin.write(`${JSON.stringify(decision)}\n`);
    child.stdin.flush();
  }
  if (output) {
    stdout.write(output);
    const flushed = stdout.flush();
    if (flushed instanceof Promise) await flushed;
  }
}
if (partial) stdout.write(partial);
await stdout.flush();
void child.stdin.end();
process.exit(await child.exited);
