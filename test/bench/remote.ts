/**
 * The HTTP upstream path: `bun test/bench/bench-server.ts --http` (answers every request with one
 * JSON body at once), reached directly over Streamable HTTP by the bench (a keep-alive `fetch` per
 * request, with the headers the shim sends) and through `thoughtgate shim --url` on stdio. The
 * difference is what the shim adds: reading the agent's line, the gates, the POST, validating
 * the answer and writing it back. Sequential round trips in interleaved blocks, as for stdio.
 */
import { join } from "node:path";
import { BINARY } from "../support/harness.ts";
import { BenchClient } from "./bench-client.ts";
import { ECHO_CALL, INITIALIZE, PLAN, type ConfigName } from "./plan.ts";
import { progress } from "./report.ts";

export async function measureRemote(marker: string, env: Record<string, string>): Promise<Map<ConfigName, number[]>> {
  const server = Bun.spawn([process.execPath, join(import.meta.dir, "bench-server.ts"), "--http", marker], { stdin: "ignore", stdout: "pipe", stderr: "inherit", env });
  try {
    const url = await listeningUrl(server.stdout);
    await using stack = new AsyncDisposableStack();
    const shim = stack.use(BenchClient.spawn([BINARY, "shim", "--server-id", "bench", "--events", "none", "--url", url], env));
    await shim.roundTrip(INITIALIZE);
    let nextId = 1;
    const direct = async (): Promise<number> => {
      const body = JSON.stringify({ jsonrpc: "2.0", id: nextId++, method: ECHO_CALL.method, params: ECHO_CALL.params });
      const started = performance.now();
      const response = await fetch(url, { method: "POST", body, headers: { "content-type": "application/json", accept: "application/json, text/event-stream", "mcp-protocol-version": "2025-06-18" } });
      const answer = (await response.json()) as { result?: unknown };
      const elapsed = performance.now() - started;
      if (answer.result === undefined) throw new Error(`direct HTTP: no result (HTTP ${response.status})`);
      return elapsed;
    };
    progress(`remote (shim --url): ${PLAN.warmup} warm-up tools/call each, then ${PLAN.iterations} round trips per configuration`);
    for (let i = 0; i < PLAN.warmup; i++) {
      await direct();
      await shim.roundTrip(ECHO_CALL);
    }
    const figures = { direct: [] as number[], shim: [] as number[] };
    const perBlock = Math.ceil(PLAN.iterations / PLAN.blocks);
    for (let block = 0; block < PLAN.blocks; block++) {
      for (let i = 0; i < perBlock; i++) figures.direct.push(await direct());
      for (let i = 0; i < perBlock; i++) figures.shim.push(await shim.roundTrip(ECHO_CALL));
    }
    const code = await shim.close();
    if (code !== 0) throw new Error(`shim --url exited with code ${code}`);
    return new Map<ConfigName, number[]>([
      ["direct", figures.direct],
      ["shim --url", figures.shim],
    ]);
  } finally {
    server.kill("SIGKILL");
    await server.exited;
  }
}

async function listeningUrl(stdout: ReadableStream<Uint8Array>): Promise<string> {
  const reader = stdout.getReader();
  let text = "";
  while (!text.includes("\n")) {
    const { done, value } = await reader.read();
    if (done) throw new Error("the HTTP bench server exited before listening");
    text += new TextDecoder().decode(value);
  }
  reader.releaseLock();
  const url = /^listening (\S+)/.exec(text)?.[1];
  if (!url) throw new Error(`the HTTP bench server printed ${JSON.stringify(text)}`);
  return url;
}
