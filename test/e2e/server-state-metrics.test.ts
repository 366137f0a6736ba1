/**
 * `thoughtgate_stdio_server_state` in the governance service's /metrics, fed by every shim that
 * asks it: starting, running, exited, failed. Through the compiled binaries (`serve`, `shim`).
 */
import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from "bun:test";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { EVERYTHING_SERVER, requireBinary, waitFor } from "../support/harness.ts";
import { RawAgent } from "../support/raw-agent.ts";
import { ServeProcess } from "../support/serve.ts";

setDefaultTimeout(60_000);

let serve: ServeProcess;
beforeAll(async () => {
  serve = await ServeProcess.start();
});
afterAll(() => serve.stop());

async function states(serverId: string): Promise<Record<string, number>> {
  const text = await (await fetch(`${serve.endpoint}/metrics`, { headers: { authorization: `Bearer ${serve.secret}` } })).text();
  const out: Record<string, number> = {};
  for (const match of text.matchAll(new RegExp(`^thoughtgate_stdio_server_state\\{server_id="${serverId}",state="(\\w+)"\\} (\\d+)$`, "gm"))) out[match[1] as string] = Number(match[2]);
  return out;
}

const only = (state: string) => ({ starting: 0, running: 0, exited: 0, failed: 0, [state]: 1 });

function shimEnv(): Record<string, string> {
  return { ...(process.env as Record<string, string>), THOUGHTGATE_GOVERNANCE_SECRET: serve.secret };
}

describe("every shim reports its MCP server's state", () => {
  test("running while the agent uses it, exited once the agent is done", async () => {
    const transport = new StdioClientTransport({
      command: requireBinary(),
      args: ["shim", "--server-id", "everything", "--governance-endpoint", serve.endpoint, "--", ...EVERYTHING_SERVER],
      env: shimEnv(),
      stderr: "ignore",
    });
    const client = new Client({ name: "state-e2e", version: "1" });
    await client.connect(transport);
    await waitFor(async () => (await states("everything")).running === 1, "the running state");
    expect(await states("everything")).toEqual(only("running"));
    await client.close();
    await waitFor(async () => (await states("everything")).exited === 1, "the exited state");
    expect(await states("everything")).toEqual(only("exited"));
  });

  test("a server that cannot start, and one that dies with an error, are failed", async () => {
    const missing = new RawAgent(["--server-id", "missing", "--governance-endpoint", serve.endpoint, "--", "/nonexistent/mcp-server"], shimEnv());
    await waitFor(async () => (await states("missing")).failed === 1, "the failed state");
    expect(await states("missing")).toEqual(only("failed"));
    expect(await missing.close()).toBe(1);

    const dying = new RawAgent(["--server-id", "dying", "--governance-endpoint", serve.endpoint, "--", "sh", "-c", "exit 3"], shimEnv());
    expect(await dying.exit()).toBe(3);
    await waitFor(async () => (await states("dying")).failed === 1, "the failed state");
    expect(await states("dying")).toEqual(only("failed"));
  });
});
