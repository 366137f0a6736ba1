import { expect, test } from "bun:test";
import { descendsFrom, findPeer, inForegroundOfTerminal, pidListeningOn, pidOfConnection } from "../../src/core/peer-process.ts";

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

const ipv6Loopback = process.platform === "linux" && (await Bun.file("/proc/net/tcp6").exists());

test.if(ipv6Loopback)("over IPv6 loopback the connection's process is found too, by both finders", async () => {
  const seen: { peer: ReturnType<typeof findPeer>; pid: number | null } = { peer: null, pid: null };
  const candidates: number[] = [];
  await using server = Bun.serve({
    hostname: "::1",
    port: 0,
    fetch(request, srv) {
      const address = srv.requestIP(request);
      seen.peer = address && srv.port !== undefined ? findPeer(address.port, srv.port) : null;
      seen.pid = address && srv.port !== undefined ? pidOfConnection(address.port, srv.port, candidates) : null;
      return new Response("ok");
    },
  });
  await using curl = Bun.spawn(["curl", "-s", "-g", `http://[::1]:${server.port}/`], { stdout: "pipe" });
  candidates.push(curl.pid);
  expect(await new Response(curl.stdout).text()).toBe("ok");
  expect(seen).toEqual({ peer: { uid: process.getuid?.() ?? -1, pids: [curl.pid] }, pid: curl.pid });
  expect(pidListeningOn(server.port as number, [process.pid])).toBe(process.pid);
});
