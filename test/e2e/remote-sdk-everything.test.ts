/**
 * The same conformance suite as test/e2e/sdk-everything.test.ts, with the reference "everything"
 * server behind the MCP SDK's `StreamableHTTPServerTransport` on loopback: the direct route is the
 * SDK's own Streamable HTTP client, the shim route is `thoughtgate shim --url` on stdio. Stateful
 * (sessions, the GET stream, server requests on the streams, resumable events) and stateless.
 */
import { setDefaultTimeout } from "bun:test";
import { everythingParity } from "../support/everything-parity.ts";
import { fixture } from "../support/harness.ts";
import { startHttpFixture, type HttpFixture } from "../support/http-fixture.ts";

setDefaultTimeout(60_000);

for (const mode of ["stateful", "stateless"] as const) {
  // One server process per route, as on stdio: the everything server keeps some state per process.
  const servers: HttpFixture[] = [];
  everythingParity({
    title: `server-everything over Streamable HTTP (${mode}) through shim --url answers like the server itself`,
    start: async () => {
      const server = await startHttpFixture(fixture("sdk-http-server-fixture.ts", ...(mode === "stateless" ? ["--stateless"] : [])));
      servers.push(server);
      return { url: server.url };
    },
    stop: async () => void (await Promise.all(servers.map((server) => server.stop()))),
    sessions: mode === "stateful",
  });
}
