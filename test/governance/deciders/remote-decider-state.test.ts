import { describe, expect, test } from "bun:test";
import { RemoteDecider } from "../../../src/governance/deciders/remote-decider.ts";
import { fakeGovernance } from "../../support/fake-governance.ts";
import { waitFor } from "../../support/harness.ts";

describe("the shim's server state reaches the service", () => {
  test("starting when the shim connects; a state that changed while a slow report was on its way is sent after it, never before", async () => {
    let slowFirst = true;
    await using service = fakeGovernance({
      beforeAnswer: async (path) => {
        if (path !== "/governance/events" || !slowFirst) return;
        slowFirst = false;
        await Bun.sleep(200);
      },
    });
    const decider = await RemoteDecider.connect({ endpoint: service.url, secret: service.secret, serverId: "fs", profile: "production" });
    decider.serverState("running");
    decider.serverState("exited");
    // A gauge: the newest state wins, and nothing older may land after it.
    await waitFor(() => service.reports.length === 2, "both reports");
    expect(service.reports.map((r) => [r.server_id, r.server_state])).toEqual([
      ["fs", "starting"],
      ["fs", "exited"],
    ]);
    decider.serverState("failed");
    await decider.close();
    expect(service.reports[2]).toMatchObject({ server_id: "fs", server_state: "failed", messages: [], framing_errors: [] });
  });
});
