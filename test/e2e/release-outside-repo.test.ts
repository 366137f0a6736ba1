/**
 * The compiled binary copied out of the repository and started there: it proxies a server end to end
 * under a Cedar policy, and its embedded Cedar engine decides. Copying alone cannot prove nothing is
 * read from node_modules (an absolute path into the build machine's repository still resolves here),
 * so the binary is also checked to carry no such path: that is how cedar-wasm's `nodejs` build broke
 * every machine but the one that built it.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { copyFileSync, readFileSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { FIXTURES, requireBinary, ROOT, tempDir } from "../support/harness.ts";

const outside = tempDir("thoughtgate-outside-");
const binary = join(outside.path, "thoughtgate");
const env = { HOME: outside.path, PATH: `${dirname(process.execPath)}:/usr/bin:/bin` };

beforeAll(() => {
  copyFileSync(requireBinary(), binary);
  // The fixture server is copied too: the test runs nothing from inside the repository.
  copyFileSync(join(FIXTURES, "scripted-server-fixture.ts"), join(outside.path, "server-fixture.ts"));
  writeFileSync(
    join(outside.path, "policy.cedar"),
    `@id("allow-all") permit(principal, action, resource);
@id("no-secrets") forbid(principal, action == ThoughtGate::Action::"tools/call", resource)
  when { resource.name == "echo" && resource.arguments has message && resource.arguments.message like "*secret*" };`,
  );
  writeFileSync(join(outside.path, "arguments.cedarschema"), "namespace ThoughtGate { type Arguments = { message?: String }; }\n");
  writeFileSync(
    join(outside.path, "thoughtgate.yaml"),
    `schema: 1
governance:
  rules: [{ id: cedar, match: "*", action: policy }]
cedar: { policies: [policy.cedar], schema: arguments.cedarschema }
`,
  );
});
afterAll(() => outside[Symbol.dispose]());

async function* lines(stream: ReadableStream<Uint8Array>): AsyncGenerator<string> {
  let buffered = "";
  const decoder = new TextDecoder();
  for await (const chunk of stream) {
    buffered += decoder.decode(chunk, { stream: true });
    for (let newline = buffered.indexOf("\n"); newline !== -1; newline = buffered.indexOf("\n")) {
      yield buffered.slice(0, newline);
      buffered = buffered.slice(newline + 1);
    }
  }
}

test("the binary carries no path into the build machine's repository", () => {
  const bytes = readFileSync(binary);
  expect(bytes.includes(`${ROOT}/node_modules`)).toBe(false);
  expect(bytes.includes(`${ROOT}/src`)).toBe(false);
});

test("shim proxies initialize, ping and tool calls under a Cedar policy, then exits cleanly on EOF", async () => {
  const shimArgs = ["shim", "--server-id", "outside", "--thoughtgate-config", "thoughtgate.yaml"];
  await using proc = Bun.spawn([binary, ...shimArgs, "--", process.execPath, "server-fixture.ts"], {
    cwd: outside.path,
    env,
    stdin: "pipe",
    stdout: "pipe",
    stderr: "pipe",
  });
  const send = (message: unknown) => {
    proc.stdin.write(`${JSON.stringify(message)}\n`);
    proc.stdin.flush();
  };
  send({ jsonrpc: "2.0", id: 1, method: "initialize", params: { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "t", version: "1" } } });
  send({ jsonrpc: "2.0", method: "notifications/initialized" });
  send({ jsonrpc: "2.0", id: 2, method: "ping" });
  send({ jsonrpc: "2.0", id: 3, method: "tools/call", params: { name: "echo", arguments: { message: "hello" } } });
  send({ jsonrpc: "2.0", id: 4, method: "tools/call", params: { name: "echo", arguments: { message: "the secret plan" } } });

  const answers = new Map<unknown, unknown>();
  const reader = lines(proc.stdout);
  while (answers.size < 4) {
    const next = await reader.next();
    if (next.done) throw new Error(`shim closed stdout early; stderr:\n${await new Response(proc.stderr).text()}`);
    const message = JSON.parse(next.value) as { id: unknown };
    answers.set(message.id, message);
  }
  proc.stdin.end();
  expect(await proc.exited).toBe(0);
  expect(answers.get(1)).toMatchObject({ id: 1, result: { serverInfo: { name: "scripted" } } });
  expect(answers.get(2)).toEqual({ jsonrpc: "2.0", id: 2, result: {} });
  expect(answers.get(3)).toEqual({ jsonrpc: "2.0", id: 3, result: { content: [{ type: "text", text: '{"message":"hello"}' }] } });
  expect(answers.get(4)).toMatchObject({ id: 4, error: { code: -32003, data: { gate: "cedar", policy_id: "no-secrets" } } });
});

test("doctor evaluates a Cedar policy with the engine embedded in the binary", async () => {
  await using proc = Bun.spawn([binary, "doctor", "--json"], { cwd: outside.path, env, stdout: "pipe", stderr: "pipe" });
  const [code, stdout] = await Promise.all([proc.exited, new Response(proc.stdout).text()]);
  const cedar = (JSON.parse(stdout) as { checks: Array<{ id: string; status: string; data: Record<string, unknown> }> }).checks.find((c) => c.id === "cedar");
  expect(cedar).toMatchObject({
    status: "pass",
    data: {
      embedded: true,
      wasmPath: expect.stringMatching(/^\/\$bunfs\//),
      decisions: { read_file: { decision: "allow", reasons: ["permit-read"] }, delete_file: { decision: "deny", reasons: ["forbid-delete"] } },
    },
  });
  expect(code).toBe(0);
});
