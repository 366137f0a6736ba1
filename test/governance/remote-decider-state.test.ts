import { afterAll, describe, expect, test } from "bun:test";
import { RemoteDecider } from "../../src/governance/remote-decider.ts";
import { waitFor } from "../support/harness.ts";

/** A governance service that answers /healthz and records the metrics reports it gets, answering the first ones slowly. */
const reports: Array<Record<string, unknown>> = [];
let slowFirst = true;
const service = Bun.serve({
  hostname: "127.0.0.1",
  port: 0,
  async fetch(request) {
    const path = new URL(request.url).pathname;
    if (path === "/healthz") return Response.json({ status: "ok", version: "test", profile: "production" });
    if (path === "/governance/events") {
      const body = (await request.json()) as Record<string, unknown>;
      if (slowFirst) {
        slowFirst = false;
        await Bun.sleep(200);
      }
      reports.push(body);
      return Response.json({ shutdown: false });
    }
    return new Response("not found", { status: 404 });
  },
});
afterAll(() => service.stop(true));

describe("the shim's server state reaches the service", () => {
  test("starting when the shim connects; a state that changed while a slow report was on its way is sent after it, never before", async () => {
    const decider = await RemoteDecider.connect({ endpoint: `http://127.0.0.1:${service.port}`, secret: "s", serverId: "fs", profile: "production" });
    decider.serverState("running");
    decider.serverState("exited");
    await decider.close();
    // A gauge: the newest state wins, and nothing older may land after it.
    expect(reports.map((r) => [r.server_id, r.server_state])).toEqual([
      ["fs", "starting"],
      ["fs", "exited"],
    ]);
    reports.length = 0;
    decider.serverState("failed");
    await waitFor(() => reports.length === 1, "the next report");
    expect(reports[0]).toMatchObject({ server_id: "fs", server_state: "failed", messages: [], framing_errors: [] });
  });
});
