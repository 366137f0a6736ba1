/**
 * Attack family: a server leaks credentials into the agent's context. A compromised or careless MCP
 * server returns keys and tokens in what it answers (a config file it read, an error message, a
 * JSON document inside the text); whatever reaches the agent also reaches its model provider and
 * every transcript. In production the agent must receive none of them, and neither stderr nor the
 * audit may hold them. Through the compiled binary, with the scripted server's `emit` tool writing
 * exactly the response line the test gives it.
 */
import { afterEach, describe, expect, setDefaultTimeout, test } from "bun:test";
import { SECRETS } from "../../fixtures/secrets/corpus.ts";
import { tempDir } from "../../support/harness.ts";
import { b64, type Received } from "../../support/raw-agent.ts";
import { shimWithScriptedServer, type Shim } from "./support.ts";

setDefaultTimeout(60_000);

const cleanup: Array<() => unknown> = [];
afterEach(async () => {
  for (const step of cleanup.splice(0).reverse()) await step();
});

async function shim(): Promise<Shim> {
  const dir = tempDir();
  cleanup.push(() => dir[Symbol.dispose]());
  const s = shimWithScriptedServer(dir.path);
  cleanup.push(() => s.agent.close());
  await s.agent.request(0, "initialize", { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "attack", version: "1" } });
  return s;
}

/** The agent calls `emit`; the server answers with `response` (given its id). */
async function serverAnswers(s: Shim, id: number, response: Record<string, unknown>): Promise<Received> {
  const line = `${JSON.stringify({ jsonrpc: "2.0", id, ...response })}\n`;
  return s.agent.request(id, "tools/call", { name: "emit", arguments: { b64: b64(line) } });
}

const textResult = (text: string) => ({ result: { content: [{ type: "text", text }] } });

describe("production: what a server returns reaches the agent without its credentials", () => {
  test("a tool result full of credentials: each is replaced by [REDACTED:<kind>], the text around it kept", async () => {
    const s = await shim();
    const file = SECRETS.map((secret) => secret.text).join("\n");
    const answer = await serverAnswers(s, 1, textResult(file));
    const text = answer.result.content[0].text as string;
    for (const secret of SECRETS) expect(text).not.toContain(secret.value);
    for (const kind of new Set(SECRETS.map((secret) => secret.kind))) expect(text).toContain(`[REDACTED:${kind}]`);
    expect(text).toContain("git clone https://x-access-token:[REDACTED:github_token]@github.com/acme/site");
  });

  test("credentials in a JSON document inside the text, in structuredContent, and in an error message", async () => {
    const s = await shim();
    const token = SECRETS.find((secret) => secret.kind === "github_token")?.value ?? "";
    const database = "postgres://app:s3cr3t-Pa55@db.internal:5432/prod";
    const document = JSON.stringify({ name: "deploy", env: { GITHUB_TOKEN: token, DATABASE_URL: database } });
    const structured = await serverAnswers(s, 2, { result: { content: [{ type: "text", text: document }], structuredContent: { user: "bob", password: "hunter2", note: token } } });
    const error = await serverAnswers(s, 3, { error: { code: -32000, message: `could not connect to ${database}`, data: { token } } });
    const seen = JSON.stringify([structured, error]);
    for (const value of [token, "s3cr3t-Pa55", "hunter2"]) expect(seen).not.toContain(value);
    expect(JSON.parse(structured.result.content[0].text)).toEqual({
      name: "deploy",
      env: { GITHUB_TOKEN: "[REDACTED:github_token]", DATABASE_URL: "postgres://app:[REDACTED:url_password]@db.internal:5432/prod" },
    });
    expect(structured.result.structuredContent).toEqual({ user: "bob", password: "[REDACTED:secret_field]", note: "[REDACTED:github_token]" });
    expect(error.error?.message).toBe("could not connect to postgres://app:[REDACTED:url_password]@db.internal:5432/prod");
  });

  test("neither stderr nor the audit holds the values; the audit says which kinds were redacted", async () => {
    const s = await shim();
    await serverAnswers(s, 1, textResult(SECRETS.map((secret) => secret.text).join("\n")));
    await s.agent.close();
    const audit = JSON.stringify(s.events());
    expect(audit).toContain('"type":"secrets_found"');
    for (const secret of SECRETS) {
      expect(s.agent.stderr).not.toContain(secret.value);
      expect(audit).not.toContain(secret.value);
    }
  });
});

describe("production: credentials written the way some JSON encoders write them", () => {
  test("a Slack webhook with every slash escaped (PHP's json_encode) reaches the agent redacted", async () => {
    const s = await shim();
    const path = ["T", "0A1B2C3D4", "/B", "0A1B2C3D4E5", "/", "aB3dE5fG7hJ9kL1mN3pQ5rS7"].join("");
    const escaped = `https://hooks.slack.com/services/${path}`.replaceAll("/", "\\/");
    // The server's exact bytes: the slashes escaped on the wire, which the agent's JSON parser undoes.
    const line = `{"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"text","text":"notify ${escaped}"}]}}\n`;
    const answer = await s.agent.request(1, "tools/call", { name: "emit", arguments: { b64: b64(line) } });
    expect(answer.result.content[0].text).toBe("notify https://hooks.slack.com/services/[REDACTED:slack_webhook]");
  });
});

describe("production: a malformed line from the server does not carry its credentials to the agent", () => {
  test("the error that answers the call says the line was not JSON, without the token the parser choked on", async () => {
    const s = await shim();
    const token = SECRETS.find((secret) => secret.kind === "github_token")?.value ?? "";
    // Unquoted: the server's line is not JSON, and the parser's message quotes what it stopped at.
    const line = `{"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"text","text": ${token}}]}}\n`;
    const answer = await s.agent.request(1, "tools/call", { name: "emit", arguments: { b64: b64(line) } });
    expect(answer.error).toMatchObject({ data: { gate: "framing", reason: "InvalidJson" } });
    expect(JSON.stringify(answer)).not.toContain(token);
    expect(answer.error?.data?.detail).toStartWith("invalid JSON: ");
    await s.agent.close();
    expect(JSON.stringify(s.events())).not.toContain(token);
    expect(s.agent.stderr).not.toContain(token);
  });
});
