/**
 * The methods MCP 2026-07-28 removed or added, through the compiled shim to tmcp (`--era modern`),
 * as docs/governance.md ("Both MCP eras") says the shim handles them: a removed method (`ping`,
 * `logging/setLevel`) is forwarded as bytes like any method, whatever the server makes of it;
 * `resources/subscribe` stays governed in either era; and `subscriptions/listen`'s resource
 * subscriptions (`params.notifications.resourceSubscriptions`, which replace `resources/subscribe`)
 * are each decided as a `resources/subscribe` would be (the refusals are attack tests:
 * attacks/listen-subscriptions.test.ts). A recorder between the shim and the server shows what
 * reached the server.
 */
import { afterEach, describe, expect, test } from "bun:test";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { fixture, readEvents, requireBinary, tempDir } from "../support/harness.ts";
import { RawAgent } from "../support/raw-agent.ts";

requireBinary();

const meta = (capabilities: Record<string, unknown>) => ({
  "io.modelcontextprotocol/protocolVersion": "2026-07-28",
  "io.modelcontextprotocol/clientCapabilities": capabilities,
});
const POLICY = `schema: 1
governance:
  defaults: { action: forward }
  rules:
    - { id: no-b, match: "note://b", method: "resources/*", action: deny }
`;

const cleanup: Array<() => unknown> = [];
afterEach(async () => {
  for (const step of cleanup.splice(0).reverse()) await step();
});

/** A shim to tmcp (2026-07-28 only) through the recorder; `reached()`: the lines the server was sent. */
function shim(): { agent: RawAgent; reached: () => string[] } {
  // The recorder writes its log until the shim has stopped it: the directory goes after the agent.
  const dir = tempDir();
  cleanup.push(() => dir[Symbol.dispose]());
  const log = join(dir.path, "server.jsonl");
  writeFileSync(join(dir.path, "thoughtgate.yaml"), POLICY);
  const server = fixture("stdio-recorder-fixture.ts", log, "--", ...fixture("tmcp-server-fixture.ts", "--era", "modern"));
  const agent = new RawAgent(["--server-id", "notes", "--events", "none", "--thoughtgate-config", join(dir.path, "thoughtgate.yaml"), "--", ...server]);
  cleanup.push(() => agent.close());
  const reached = () => readEvents(log).filter((e) => e.dir === "agent").map((e) => String(e.line));
  return { agent, reached };
}

describe("methods 2026-07-28 removed", () => {
  test("ping and logging/setLevel in the new era are forwarded byte for byte, and the agent gets the server's own answer", async () => {
    const { agent, reached } = shim();
    const lines = [
      `{"jsonrpc":"2.0","id":1,"method":"ping","params":{"_meta":${JSON.stringify(meta({}))}}}`,
      `{"jsonrpc":"2.0","id":2,"method":"logging/setLevel","params":{"level":"debug",  "_meta":${JSON.stringify(meta({}))}}}`,
    ];
    for (const line of lines) agent.write(`${line}\n`);
    expect((await agent.until(1)).match.error).toEqual({ code: -32601, message: "MCP error -32601: Method ping not found" });
    expect((await agent.until(2)).match.error).toEqual({ code: -32601, message: "MCP error -32601: Method logging/setLevel not found" });
    expect(reached()).toEqual(lines);
  });

  test("resources/subscribe in the new era is still governed: a denied URI never reaches the server, an allowed one does", async () => {
    const { agent, reached } = shim();
    const denied = await agent.request(1, "resources/subscribe", { uri: "note://b", _meta: meta({}) });
    expect(denied.error).toMatchObject({ code: -32014, data: { gate: "rules", rule_id: "no-b" } });
    const allowed = await agent.request(2, "resources/subscribe", { uri: "note://a", _meta: meta({}) });
    expect(allowed.error).toMatchObject({ code: -32601 });
    expect(reached().map((line) => JSON.parse(line).params.uri)).toEqual(["note://a"]);
  });
});

describe("subscriptions/listen, added in 2026-07-28", () => {
  // Refusals (a denied URI, subscriptions that cannot be read): attacks/listen-subscriptions.test.ts.
  test("a listen whose every resource subscription the policy allows reaches the server as sent, which acknowledges it", async () => {
    const { agent, reached } = shim();
    const message = { jsonrpc: "2.0", id: "listen-1", method: "subscriptions/listen", params: { notifications: { toolsListChanged: true, resourceSubscriptions: ["note://a"] }, _meta: meta({}) } };
    agent.send(message);
    expect(await agent.next()).toMatchObject({ method: "notifications/subscriptions/acknowledged", params: { _meta: { "io.modelcontextprotocol/subscriptionId": "listen-1" } } });
    expect(reached().map((line) => JSON.parse(line))).toEqual([message]);
  });
});
