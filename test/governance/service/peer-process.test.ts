import { expect, test } from "bun:test";
import { descendsFrom, findPeer, inForegroundOfTerminal } from "../../../src/governance/service/peer-process.ts";

test.if(process.platform === "linux")("the process behind a loopback connection is found, with its uid, ancestry and terminal", async () => {
  const seen: { peer: ReturnType<typeof findPeer> } = { peer: null };
  await using server = Bun.serve({
    hostname: "127.0.0.1",
    port: 0,
    fetch(request, srv) {
      const address = srv.requestIP(request);
      seen.peer = address && srv.port !== undefined ? findPeer(address.port, srv.port) : null;
      return new Response("ok");
    },
  });
  // A child process connects: curl, not this process, holds the socket.
  await using curl = Bun.spawn(["curl", "-s", `http://127.0.0.1:${server.port}/`], { stdout: "pipe" });
  expect(await new Response(curl.stdout).text()).toBe("ok");
  expect(seen.peer).toEqual({ uid: process.getuid?.() ?? -1, pids: [curl.pid] });
  expect(descendsFrom(curl.pid, process.pid)).toBe(true);
  expect(descendsFrom(process.pid, curl.pid)).toBe(false);
  // The test runner has no terminal in whose foreground it runs (and neither has curl).
  expect(inForegroundOfTerminal(curl.pid)).toBe(false);
});
