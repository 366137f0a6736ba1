/**
 * What every decider is given about a governed request (src/governance/verdict/decider.ts): which
 * requests cannot be decided as sent (the shim answers them -32602 and forwards nothing), and the
 * name and arguments the gates decide on. test/e2e/attacks/non-string-names.test.ts drives the
 * refusals through the binary.
 */
import { expect, test } from "bun:test";
import { classify, type JsonObject, type JsonRpcRequest } from "../../../src/core/jsonrpc.ts";
import { callRef, forwardAll, GOVERNED_METHODS, invalidGovernedParams, targetName, toInput } from "../../../src/governance/verdict/decider.ts";

function request(method: string, params?: unknown, id: string | number = 7): JsonRpcRequest {
  const body: JsonObject = { jsonrpc: "2.0", id, method, ...(params === undefined ? {} : { params }) };
  const classified = classify(body);
  if (!classified.ok || classified.message.kind !== "request") throw new Error("not a request");
  return classified.message;
}

test("only calls, reads, subscriptions and prompt fetches cost a decision", () => {
  expect([...GOVERNED_METHODS].sort()).toEqual(["prompts/get", "resources/read", "resources/subscribe", "tools/call"]);
});

test("a tools/call or prompts/get the gates would decide as something else is refused, with the reason", () => {
  for (const method of ["tools/call", "prompts/get"]) {
    const refused: Array<[unknown, string]> = [
      [undefined, `${method} needs its params as an object`],
      [null, `${method} needs its params as an object`],
      ["delete_file", `${method} needs its params as an object`],
      [["delete_file", {}], `${method} needs its params as an object`],
      [{ name: ["delete_file"] }, `${method} needs params.name as a string`],
      [{}, `${method} needs params.name as a string`],
      [{ name: "x", arguments: null }, `${method} needs params.arguments as an object`],
      [{ name: "x", arguments: "rm -rf /" }, `${method} needs params.arguments as an object`],
      [{ name: "x", arguments: ["/etc/passwd"] }, `${method} needs params.arguments as an object`],
      [{ name: "x", arguments: 1 }, `${method} needs params.arguments as an object`],
    ];
    for (const [params, reason] of refused) expect([params, invalidGovernedParams(request(method, params))]).toEqual([params, reason]);
    expect(invalidGovernedParams(request(method, { name: "x" }))).toBeNull();
    expect(invalidGovernedParams(request(method, { name: "x", arguments: { path: "/a" } }))).toBeNull();
  }
});

test("a resource read or subscription needs its URI as a string; a name is not asked for", () => {
  for (const method of ["resources/read", "resources/subscribe"]) {
    expect(invalidGovernedParams(request(method, { uri: "file:///a" }))).toBeNull();
    expect(invalidGovernedParams(request(method, { uri: ["file:///a"] }))).toBe(`${method} needs params.uri as a string`);
    expect(invalidGovernedParams(request(method, { name: "file:///a" }))).toBe(`${method} needs params.uri as a string`);
    expect(invalidGovernedParams(request(method, [{ uri: "file:///a" }]))).toBe(`${method} needs its params as an object`);
  }
});

test("the name decided on: a tool's or prompt's name, a resource's URI, empty when there is none", () => {
  expect(targetName(request("tools/call", { name: "write_file", uri: "file:///x" }))).toBe("write_file");
  expect(targetName(request("prompts/get", { name: "review" }))).toBe("review");
  expect(targetName(request("resources/read", { name: "n", uri: "file:///etc/passwd" }))).toBe("file:///etc/passwd");
  expect(targetName(request("tools/call", { name: 3 }))).toBe("");
  expect(targetName(request("tools/call"))).toBe("");
  expect(targetName(request("resources/read"))).toBe("");
});

test("what the engine decides on: a tool call's arguments ({} when absent), every other request's whole params", () => {
  const server = { command: ["node", "server.js"], url: null };
  const annotations = { destructiveHint: true };
  expect(toInput(request("tools/call", { name: "write_file", arguments: { path: "/a" } }), { serverId: "fs", server, annotations })).toEqual({
    serverId: "fs",
    server,
    annotations,
    method: "tools/call",
    name: "write_file",
    arguments: { path: "/a" },
  });
  const bare = toInput(request("tools/call", { name: "list" }), { serverId: "fs", annotations: undefined });
  expect(bare).toEqual({ serverId: "fs", method: "tools/call", name: "list", arguments: {} });
  expect("server" in bare || "annotations" in bare).toBe(false);
  const params = { name: "review", arguments: { file: "a.ts" } };
  expect(toInput(request("prompts/get", params), { serverId: "p", annotations: undefined }).arguments).toEqual(params);
  expect(toInput(request("resources/read", { uri: "file:///a" }), { serverId: "r", annotations: undefined })).toEqual({ serverId: "r", method: "resources/read", name: "file:///a", arguments: { uri: "file:///a" } });
});

test("a deny error names the call and the request id as text", () => {
  expect(callRef(request("tools/call", { name: "rm" }, 42), "fs")).toEqual({ serverId: "fs", method: "tools/call", name: "rm", correlationId: "42" });
  expect(callRef(request("resources/read", { uri: "file:///a" }, "abc"), "r").correlationId).toBe("abc");
});

test("forwardAll forwards everything and says no policy is loaded", () => {
  expect(forwardAll.policy).toBe("none");
  const context = { signal: new AbortController().signal, serverId: "fs", annotations: undefined, elicit: null, awaitingApproval: () => {} };
  expect(forwardAll.decide(request("tools/call", { name: "rm" }), context)).toEqual({ action: "forward", gate: null, ruleId: null, reason: "no policy loaded" });
});
