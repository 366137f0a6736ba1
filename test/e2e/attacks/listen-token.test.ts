/**
 * Attack: the MCP server behind `thoughtgate shim --listen` reads the token agents must present to
 * the shim. The token comes from the variable `--listen-token-env` names (any name the user
 * chose), and the server was started with the shim's whole environment minus `THOUGHTGATE_*`: it got
 * the token, and with it could take the front end's only session from another process. Now the
 * variables the shim's flags name for its own credentials are withheld from the server too.
 * Through the compiled binary, with the real SDK client over Streamable HTTP and the scripted
 * server's `env` tool (the names of its environment variables).
 */
import { afterEach, expect, setDefaultTimeout, test } from "bun:test";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import type { Subprocess } from "bun";
import { BINARY, fixture, requireBinary } from "../../support/harness.ts";

setDefaultTimeout(60_000);
requireBinary();

const TOKEN = "agents-present-this-0123456789";
const started: Array<Subprocess<"ignore", "ignore", "pipe">> = [];
const clients: Client[] = [];
afterEach(async () => {
  for (const c of clients.splice(0)) await c.close().catch(() => undefined);
  for (const proc of started.splice(0)) {
    if (proc.exitCode === null) proc.kill("SIGKILL");
    await proc.exited;
  }
});

async function serverEnvironment(shimArgs: string[], env: Record<string, string | undefined>): Promise<string[]> {
  const proc = Bun.spawn([BINARY, "shim", "--listen", "127.0.0.1:0", "--server-id", "scripted", "--events", "none", ...shimArgs, "--", ...fixture("scripted-server-fixture.ts")], {
    env: { ...process.env, ...env },
    stdin: "ignore",
    stdout: "ignore",
    stderr: "pipe",
  });
  started.push(proc);
  let stderr = "";
  const reader = proc.stderr.getReader();
  let url: string | undefined;
  while (url === undefined) {
    const { done, value } = await reader.read();
    if (done) throw new Error(`shim exited before listening: ${stderr}`);
    stderr += new TextDecoder().decode(value);
    url = /shim listening on (\S+)/.exec(stderr)?.[1];
  }
  reader.releaseLock();
  void proc.stderr.pipeTo(new WritableStream()).catch(() => undefined);
  const c = new Client({ name: "http-agent", version: "1" });
  clients.push(c);
  await c.connect(new StreamableHTTPClientTransport(new URL(url), { requestInit: { headers: { authorization: `Bearer ${TOKEN}` } } }));
  const answer = await c.callTool({ name: "env", arguments: {} });
  return JSON.parse((answer.content as Array<{ text: string }>)[0]?.text ?? "[]") as string[];
}

test("the variable --listen-token-env names is not in the server's environment; the rest is", async () => {
  const names = await serverEnvironment(["--listen-token-env", "AGENT_GATE_TOKEN"], { AGENT_GATE_TOKEN: TOKEN, UNRELATED_SETTING: "kept" });
  expect(names).not.toContain("AGENT_GATE_TOKEN");
  expect(names).toContain("UNRELATED_SETTING");
});

test("the default variable (THOUGHTGATE_LISTEN_TOKEN) is not in it either", async () => {
  const names = await serverEnvironment([], { THOUGHTGATE_LISTEN_TOKEN: TOKEN });
  expect(names.filter((name) => name.startsWith("THOUGHTGATE_"))).toEqual([]);
});
