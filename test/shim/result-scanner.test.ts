import { describe, expect, test } from "bun:test";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { createConsola } from "consola/basic";
import type { Profile } from "../../src/core/profile.ts";
import { SCAN_EVERYTHING, type SecretScanPolicy } from "../../src/governance/verdict/secret-policy.ts";
import { ResultScanner } from "../../src/shim/result-scanner.ts";
import { EventStream } from "../../src/telemetry/events.ts";
import { SECRETS } from "../fixtures/secrets/corpus.ts";
import { readEvents, tempDir } from "../support/harness.ts";

const GITHUB = SECRETS.find((secret) => secret.kind === "github_token")?.value ?? "";
const PASSWORD_JSON = '{"user": "bob", "password": "hunter2"}';

function resultLine(text: string): Uint8Array {
  return Buffer.from(JSON.stringify({ jsonrpc: "2.0", id: 3, result: { content: [{ type: "text", text }] } }));
}

function textOf(bytes: Uint8Array): string {
  return (JSON.parse(Buffer.from(bytes).toString()) as { result: { content: Array<{ text: string }> } }).result.content[0]?.text ?? "";
}

/** A scanner writing its events to a temp file and its log lines to an array. */
function setup(profile: Profile, policy: SecretScanPolicy = SCAN_EVERYTHING, audited = true) {
  const dir = tempDir();
  const path = join(dir.path, "events.jsonl");
  const events = EventStream.open(audited ? path : null, { run_id: "r", server_id: "files", profile });
  const logged: string[] = [];
  const log = createConsola({ level: 5, reporters: [{ log: (entry) => logged.push(`${entry.type} ${entry.args.join(" ")}`) }] });
  const scanner = new ResultScanner({ profile, events, log, policy: () => policy });
  const call = { id: 3, method: "tools/call", call: { callId: "c-1", tool: "read_file", argsHash: "h" } };
  /** The audit as written (events are flushed when the stream closes), and its `secrets_found` events. */
  const audit = async () => {
    await events.close();
    const raw = audited ? readFileSync(path, "utf8") : "";
    const found = readEvents(path).filter((event) => event.type === "secrets_found");
    dir[Symbol.dispose]();
    return { raw, found };
  };
  return { scanner, logged, call, audit };
}

describe("production", () => {
  test("credentials in a tool result are replaced before the agent gets it; the rest is the server's bytes", async () => {
    const { scanner, call, logged, audit } = setup("production");
    const line = resultLine(`token ${GITHUB}\n${PASSWORD_JSON}`);
    const scanned = scanner.scanResult(line, call);
    expect(textOf(scanned.bytes)).toBe('token [REDACTED:github_token]\n{"user": "bob", "password": "[REDACTED:secret_field]"}');
    expect(scanned.redacted).toBe(2);
    expect(logged.join("\n")).toContain("redacted 2 of 2 secrets (github_token, secret_field) in the result of tools/call read_file");
    expect((await audit()).found).toMatchObject([
      { direction: "server_to_agent", request_id: 3, method: "tools/call", call_id: "c-1", tool: "read_file", found: { github_token: 1, secret_field: 1 }, redacted: { github_token: 1, secret_field: 1 } },
    ]);
  });

  test("neither the log nor the audit ever holds the value", async () => {
    const { scanner, call, logged, audit } = setup("production");
    scanner.scanResult(resultLine(`${GITHUB} ${PASSWORD_JSON}`), call);
    scanner.scanRequest(resultLine(GITHUB), call);
    const { raw } = await audit();
    expect(raw).toContain("secrets_found");
    for (const text of [raw, logged.join("\n")]) {
      expect(text).not.toContain(GITHUB);
      expect(text).not.toContain("hunter2");
    }
  });

  test("a result without credentials is passed on as the same bytes, and nothing is recorded", async () => {
    const { scanner, call, logged, audit } = setup("production");
    const line = resultLine("README: install with npm i; see https://example.com/docs");
    const scanned = scanner.scanResult(line, call);
    expect(scanned.bytes).toBe(line);
    expect(scanned.findings).toEqual([]);
    expect(logged).toEqual([]);
    expect((await audit()).found).toEqual([]);
  });

  test("only content results are scanned: a tools/list answer is left alone", async () => {
    const { scanner, audit } = setup("production");
    const line = resultLine(`example: ${GITHUB}`);
    expect(scanner.scanResult(line, { id: 1, method: "tools/list" }).bytes).toBe(line);
    for (const method of ["resources/read", "prompts/get"]) expect(textOf(scanner.scanResult(line, { id: 1, method }).bytes)).toBe("example: [REDACTED:github_token]");
    await audit();
  });

  test("scan off for this server: unchanged, unscanned", async () => {
    const { scanner, call, audit } = setup("production", { scan: false, kinds: {} });
    const line = resultLine(GITHUB);
    expect(scanner.scanResult(line, call).bytes).toBe(line);
    expect(scanner.scanRequest(line, call)).toEqual([]);
    expect((await audit()).found).toEqual([]);
  });

  test("per kind: a replacement text, detect (logged, forwarded) and off (not looked for)", async () => {
    const policy: SecretScanPolicy = {
      scan: true,
      kinds: { github_token: { action: "redact", replacement: "<github token removed>" }, secret_field: { action: "detect" }, aws_access_key_id: { action: "off" } },
    };
    const { scanner, call, logged, audit } = setup("production", policy);
    const scanned = scanner.scanResult(resultLine(`${GITHUB} AKIAIOSFODNN7EXAMPLE ${PASSWORD_JSON}`), call);
    expect(textOf(scanned.bytes)).toBe(`<github token removed> AKIAIOSFODNN7EXAMPLE ${PASSWORD_JSON}`);
    expect(logged.join("\n")).toContain("detected 1 secrets");
    expect((await audit()).found).toMatchObject([{ found: { github_token: 1, secret_field: 1 }, redacted: { github_token: 1 } }]);
  });

  test("a configured replacement that would break the JSON string falls back to the marker", async () => {
    const { scanner, call, audit } = setup("production", { scan: true, kinds: { github_token: { action: "redact", replacement: 'x"y' } } });
    expect(textOf(scanner.scanResult(resultLine(GITHUB), call).bytes)).toBe("[REDACTED:github_token]");
    await audit();
  });
});

test("a scan that fails answers the agent with an error in production, never the unscanned result", () => {
  const log = createConsola({ level: 0 });
  const failing = (profile: Profile) =>
    new ResultScanner({ profile, events: EventStream.open(null, { run_id: "r", server_id: "files", profile }), log, policy: () => { throw new Error("no policy"); } });
  const line = resultLine(GITHUB);
  const call = { id: 3, method: "tools/call" };
  expect(JSON.parse(Buffer.from(failing("production").scanResult(line, call).bytes).toString())).toEqual({
    jsonrpc: "2.0",
    id: 3,
    error: { code: -32603, message: "ThoughtGate could not scan the result for secrets: no policy", data: { gate: "secrets", reason: "scan failed" } },
  });
  expect(failing("development").scanResult(line, call).bytes).toBe(line);
});

describe("development", () => {
  test("found and logged WOULD_REDACT, forwarded unchanged", async () => {
    const { scanner, call, logged, audit } = setup("development");
    const line = resultLine(`${GITHUB} ${PASSWORD_JSON}`);
    const scanned = scanner.scanResult(line, call);
    expect(scanned.bytes).toBe(line);
    expect(scanned.redacted).toBe(0);
    expect(logged.join("\n")).toContain("WOULD_REDACT 2 secrets (github_token, secret_field) in the result of tools/call read_file (id 3): forwarded unchanged");
    expect(logged.join("\n")).not.toContain(GITHUB);
    expect((await audit()).found).toMatchObject([{ found: { github_token: 1, secret_field: 1 }, redacted: {}, would: "WOULD_REDACT" }]);
  });
});

describe("arguments", () => {
  test("are scanned for the audit only, and only when the audit is written", async () => {
    const { scanner, call, audit } = setup("production");
    const request = Buffer.from(JSON.stringify({ jsonrpc: "2.0", id: 3, method: "tools/call", params: { name: "deploy", arguments: { token: GITHUB } } }));
    expect(scanner.scanRequest(request, call).map((span) => span.kind)).toEqual(["github_token"]);
    expect((await audit()).found).toMatchObject([{ direction: "agent_to_server", found: { github_token: 1 }, redacted: {} }]);
    const quiet = setup("production", SCAN_EVERYTHING, false);
    expect(quiet.scanner.scanRequest(request, call)).toEqual([]);
    await quiet.audit();
  });
});
