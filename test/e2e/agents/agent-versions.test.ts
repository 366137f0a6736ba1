/**
 * The agents the suite runs are the pinned devDependencies (package.json), for this platform:
 * each binary's own `--version` says so. A re-lock that moved one fails here first, not as a
 * puzzling difference in what an agent sent.
 */
import { expect, setDefaultTimeout, test } from "bun:test";
import { AGENT_VERSIONS, agentBinary, type AgentName } from "../../support/agents.ts";

setDefaultTimeout(30_000);

test("every agent binary reports its pinned version", async () => {
  const agents = Object.keys(AGENT_VERSIONS) as AgentName[];
  const reported = await Promise.all(
    agents.map(async (agent) => {
      await using proc = Bun.spawn([agentBinary(agent), "--version"], { stdin: "ignore", stdout: "pipe", stderr: "pipe", env: { PATH: process.env.PATH ?? "", HOME: process.env.HOME ?? "" } });
      const [out] = await Promise.all([new Response(proc.stdout).text(), proc.exited]);
      return [agent, /\d+\.\d+\.\d+/.exec(out)?.[0] ?? out.trim()];
    }),
  );
  expect(Object.fromEntries(reported)).toEqual(AGENT_VERSIONS);
});
