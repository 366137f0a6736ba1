/**
 * Attack: an agent follows a resource the policy denies without `resources/subscribe`, through the
 * MCP 2026-07-28 `subscriptions/listen`, whose resource subscriptions sit in
 * `params.notifications.resourceSubscriptions`; or hides them in a shape the gates cannot read.
 * Each URI is decided as a `resources/subscribe` would be, one refusal refuses the whole listen,
 * and subscriptions that are not a list of URIs are refused with -32602: none of it reaches the server.
 */
import { afterEach, describe, expect, test } from "bun:test";
import { requireBinary, tempDir } from "../../support/harness.ts";
import type { RawAgent } from "../../support/raw-agent.ts";
import { shimWithScriptedServer, type Shim } from "./support.ts";

requireBinary();

const agents: RawAgent[] = [];
afterEach(async () => {
  for (const agent of agents.splice(0)) await agent.close();
});

const DENY_SECRETS = `schema: 1
governance:
  defaults: { action: forward }
  rules:
    - { id: no-secrets, match: "file:///secrets/*", method: "resources/*", action: deny }
`;
const META = { "io.modelcontextprotocol/protocolVersion": "2026-07-28", "io.modelcontextprotocol/clientCapabilities": {} };

/** Send a listen with these params; returns the first answer (a listen the server got is never answered). */
async function listen(shim: Shim, id: string, params: Record<string, unknown>) {
  shim.agent.send({ jsonrpc: "2.0", id, method: "subscriptions/listen", params: { ...params, _meta: META } });
  const answer = await shim.agent.next();
  // Every line before the ping's answer has reached the server (or never will).
  await shim.agent.request(`after-${id}`, "ping");
  return answer;
}

const listensReceived = (shim: Shim) => shim.received().filter((m) => m.method === "subscriptions/listen");

describe("resource subscriptions on a subscriptions/listen stream", () => {
  test("a denied URI among notifications.resourceSubscriptions refuses the listen with the rule's error; the server never gets it", async () => {
    using dir = tempDir();
    const shim = shimWithScriptedServer(dir.path, { policy: DENY_SECRETS });
    agents.push(shim.agent);
    const answer = await listen(shim, "l1", { notifications: { toolsListChanged: true, resourceSubscriptions: ["file:///notes/a", "file:///secrets/key"] } });
    expect(answer).toMatchObject({ id: "l1", error: { code: -32014, data: { gate: "rules", rule_id: "no-secrets" } } });
    expect(listensReceived(shim)).toEqual([]);
  });

  test("a denied URI beside the filter (params.resourceSubscriptions, which a lenient server might read) is refused too", async () => {
    using dir = tempDir();
    const shim = shimWithScriptedServer(dir.path, { policy: DENY_SECRETS });
    agents.push(shim.agent);
    const answer = await listen(shim, "l2", { notifications: { toolsListChanged: true }, resourceSubscriptions: ["file:///secrets/key"] });
    expect(answer).toMatchObject({ id: "l2", error: { code: -32014, data: { rule_id: "no-secrets" } } });
    expect(listensReceived(shim)).toEqual([]);
  });

  const unreadable: Array<[string, Record<string, unknown>]> = [
    ["a URI as a string, not a list", { notifications: { resourceSubscriptions: "file:///secrets/key" } }],
    ["a URI as an object", { notifications: { resourceSubscriptions: [{ uri: "file:///secrets/key" }] } }],
    ["a filter that is a list", { notifications: [{ resourceSubscriptions: ["file:///secrets/key"] }] }],
    ["subscriptions beside the filter as a string", { notifications: {}, resourceSubscriptions: "file:///secrets/key" }],
  ];
  test("positional params: refused with -32602, never forwarded", async () => {
    using dir = tempDir();
    const shim = shimWithScriptedServer(dir.path, { policy: DENY_SECRETS });
    agents.push(shim.agent);
    const answer = await shim.agent.request("l4", "subscriptions/listen", [{ resourceSubscriptions: ["file:///secrets/key"] }]);
    expect(answer.error).toMatchObject({ code: -32602, data: { gate: "governance" } });
    await shim.agent.request("after-l4", "ping");
    expect(listensReceived(shim)).toEqual([]);
  });

  for (const [what, params] of unreadable) {
    test(`${what}: refused with -32602, never forwarded`, async () => {
      using dir = tempDir();
      const shim = shimWithScriptedServer(dir.path, { policy: DENY_SECRETS });
      agents.push(shim.agent);
      const answer = await listen(shim, "l3", params);
      expect(answer).toMatchObject({ id: "l3", error: { code: -32602, data: { gate: "governance" } } });
      expect(listensReceived(shim)).toEqual([]);
    });
  }
});
