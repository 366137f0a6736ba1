/**
 * Secret scanning through the compiled binary (docs/governance.md, Secret scanning): the profiles,
 * the policy's `secrets:` section in a standalone shim and from the governance service, what the
 * audit records of results and arguments, and results that must pass unchanged.
 */
import { afterEach, describe, expect, setDefaultTimeout, test } from "bun:test";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { NEAR_MISSES, SECRETS } from "../fixtures/secrets/corpus.ts";
import { fixture, tempDir } from "../support/harness.ts";
import { b64, RawAgent, type Received } from "../support/raw-agent.ts";
import { ServeProcess } from "../support/serve.ts";
import { shimWithScriptedServer, type Shim } from "./attacks/support.ts";

setDefaultTimeout(60_000);

const cleanup: Array<() => unknown> = [];
afterEach(async () => {
  for (const step of cleanup.splice(0).reverse()) await step();
});

const TOKEN = SECRETS.find((secret) => secret.kind === "github_token")?.value ?? "";
const JWT = SECRETS.find((secret) => secret.kind === "jwt")?.value ?? "";
const INITIALIZE = { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "secrets-test", version: "1" } };

async function shim(options: { policy?: string; shimArgs?: string[] } = {}): Promise<Shim> {
  const dir = tempDir();
  cleanup.push(() => dir[Symbol.dispose]());
  const s = shimWithScriptedServer(dir.path, options);
  cleanup.push(() => s.agent.close());
  await s.agent.request(0, "initialize", INITIALIZE);
  return s;
}

/** The agent calls `emit`; the server answers with a text result. */
function emitted(agent: RawAgent, id: number, text: string): Promise<Received> {
  const line = `${JSON.stringify({ jsonrpc: "2.0", id, result: { content: [{ type: "text", text }] } })}\n`;
  return agent.request(id, "tools/call", { name: "emit", arguments: { b64: b64(line) } });
}

describe("profiles", () => {
  test("development: the result is forwarded unchanged, and stderr and the audit say WOULD_REDACT with the kinds only", async () => {
    const s = await shim({ shimArgs: ["--profile", "development"] });
    const answer = await emitted(s.agent, 1, `token ${TOKEN} and ${JWT}`);
    expect(answer.result.content[0].text).toBe(`token ${TOKEN} and ${JWT}`);
    await s.agent.close();
    expect(s.agent.stderr).toContain("WOULD_REDACT 2 secrets (github_token, jwt) in the result of tools/call emit");
    expect(s.events().find((event) => event.type === "secrets_found")).toMatchObject({
      direction: "server_to_agent",
      tool: "emit",
      found: { github_token: 1, jwt: 1 },
      redacted: {},
      would: "WOULD_REDACT",
      profile: "development",
    });
    expect(`${s.agent.stderr}${JSON.stringify(s.events())}`).not.toContain(TOKEN);
  });

  test("production: ordinary results are forwarded as the server wrote them", async () => {
    const s = await shim();
    const text = NEAR_MISSES.map((miss) => miss.text).join("\n");
    expect((await emitted(s.agent, 1, text)).result.content[0].text).toBe(text);
    await s.agent.close();
    expect(s.events().filter((event) => event.type === "secrets_found")).toEqual([]);
  });
});

describe("the policy's secrets section", () => {
  test("per kind (a replacement, detect) and per server (scan off)", async () => {
    const kinds = `secrets:
  kinds:
    github_token: { replacement: "<token removed>" }
    jwt: { action: detect }
`;
    const s = await shim({ policy: `schema: 1\n${kinds}` });
    expect((await emitted(s.agent, 1, `${TOKEN} ${JWT}`)).result.content[0].text).toBe(`<token removed> ${JWT}`);
    const off = await shim({ policy: `schema: 1\n${kinds}  servers:\n    scripted: { scan: "off" }\n` });
    expect((await emitted(off.agent, 1, `${TOKEN} ${JWT}`)).result.content[0].text).toBe(`${TOKEN} ${JWT}`);
  });

  test("under a governance service, its policy applies from a shim's first result", async () => {
    const dir = tempDir();
    cleanup.push(() => dir[Symbol.dispose]());
    writeFileSync(join(dir.path, "thoughtgate.yaml"), 'schema: 1\nsecrets:\n  kinds:\n    github_token: { replacement: "<from the service>" }\n');
    const service = await ServeProcess.start(["--thoughtgate-config", join(dir.path, "thoughtgate.yaml")]);
    cleanup.push(() => service.stop());
    const agent = new RawAgent(["--server-id", "scripted", "--governance-endpoint", service.endpoint, "--", ...fixture("scripted-server-fixture.ts")], {
      ...process.env,
      THOUGHTGATE_GOVERNANCE_SECRET: service.secret,
    });
    cleanup.push(() => agent.close());
    await agent.request(0, "initialize", INITIALIZE);
    expect((await emitted(agent, 1, `token ${TOKEN}`)).result.content[0].text).toBe("token <from the service>");
  });
});

test("arguments: the server receives them as decided, and the audit records the kinds found in them", async () => {
  const s = await shim();
  await s.agent.request(1, "tools/call", { name: "echo", arguments: { note: `use ${TOKEN}` } });
  await s.agent.close();
  expect(s.received().find((message) => message.method === "tools/call")?.params.arguments).toEqual({ note: `use ${TOKEN}` });
  const found = s.events().filter((event) => event.type === "secrets_found");
  expect(found.map((event) => [event.direction, event.found])).toEqual([
    ["agent_to_server", { github_token: 1 }],
    // echo answers with the arguments: the result is redacted on its way back.
    ["server_to_agent", { github_token: 1 }],
  ]);
  expect(JSON.stringify(s.events())).not.toContain(TOKEN);
});
