/**
 * Conformance against the reference "everything" server on stdio: the real SDK client runs every
 * scenario straight to the server and through the compiled `thoughtgate shim` (the suite is in
 * test/support/everything-parity.ts), and the agent must not be able to tell the difference.
 */
import { setDefaultTimeout } from "bun:test";
import { everythingParity } from "../support/everything-parity.ts";
import { EVERYTHING_SERVER } from "../support/harness.ts";

// Real servers on a shared 2-core box; bun 1.4.5 does not apply bunfig's [test] timeout, so set it here.
setDefaultTimeout(60_000);

everythingParity({
  title: "server-everything through the shim answers like the server itself",
  start: async () => ({ command: EVERYTHING_SERVER }),
  sessions: true,
});
