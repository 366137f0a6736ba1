import { expect, test } from "bun:test";
import { CallTable, type TrackedCall } from "../../src/arbiter/call-table.ts";
import { callOf, toolCallRequest } from "../../src/pipeline/call.ts";

const request = (id: string | number, state: TrackedCall["state"] = "pending") => ({ id, tool: "fs.read", requiresPolicy: true, runId: "r", state, flow: callOf("arbiter", "codecli", toolCallRequest(id, "fs.read", {})) });

test("docs/codecli-protocol.md §6: a repeated id is refused, the first decision wins, results complete allowed calls", () => {
  const table = new CallTable();
  const call = table.open(request("t-1"));
  if (!call) throw new Error("not opened");
  expect(table.open(request("t-1"))).toBeNull();
  expect(table.open(request(1))).not.toBeNull(); // 1 and "1"/"t-1" are different ids
  const withdrawn = call.cancel?.signal;
  expect(table.settle(call, "allowed")).toBe(true);
  expect(withdrawn?.aborted).toBe(true);
  expect(table.settle(call, "denied_timeout")).toBe(false);
  expect(call.state).toBe("allowed");
  expect(table.complete("t-1")).toMatchObject({ was: "allowed" });
  expect(call.state).toBe("completed");
  expect(table.complete("nope")).toBeNull();
  expect(table.pending().map((c) => c.id)).toEqual([1]);
});
