import { describe, expect, test } from "bun:test";
import { redactSpans, redactString, scanSecrets } from "../../src/telemetry/secret-scan.ts";
import { withoutMemory } from "../../src/telemetry/secret-stretches.ts";
import { NEAR_MISSES, SECRETS } from "../fixtures/secrets/corpus.ts";

/** A tools/call result line carrying `text`, as a server writes it. */
function resultLine(text: string): Buffer {
  return Buffer.from(JSON.stringify({ jsonrpc: "2.0", id: 7, result: { content: [{ type: "text", text }], isError: false } }));
}

/** Scan a line in result mode, redact it, and parse what the agent would get. */
function redactedResult(line: Buffer): { text: string; kinds: string[] } {
  const spans = scanSecrets(line, { mode: "result" });
  const parsed = JSON.parse(redactSpans(line, spans).toString()) as { result: { content: Array<{ text: string }> } };
  return { text: parsed.result.content[0]?.text ?? "", kinds: spans.map((span) => span.kind) };
}

describe("every corpus credential is found with its kind, and gone from what the agent gets", () => {
  for (const secret of SECRETS) {
    const label = `${secret.kind}: ${secret.text.slice(0, 60).replaceAll("\n", "\\n")}`;
    test(`plain text: ${label}`, () => {
      const out = redactString(secret.text, "result");
      expect(out).not.toContain(secret.value);
      expect(out).toContain(`[REDACTED:${secret.kind}]`);
    });
    test(`in a result line: ${label}`, () => {
      const { text, kinds } = redactedResult(resultLine(secret.text));
      expect(kinds).toContain(secret.kind);
      expect(text).not.toContain(secret.value);
      // Only the credential changes: the text around it is the same.
      expect(text).toBe(redactString(secret.text, "result"));
    });
    test(`in a JSON document inside a result: ${label}`, () => {
      const { text } = redactedResult(resultLine(JSON.stringify({ path: "config/app.json", body: secret.text })));
      const inner = JSON.parse(text) as { path: string; body: string };
      expect(inner.path).toBe("config/app.json");
      expect(inner.body).not.toContain(secret.value);
      expect(inner.body).toContain("[REDACTED:");
    });
  }
});

describe("near-misses reach the agent unchanged", () => {
  for (const { why, text } of NEAR_MISSES) {
    test(why, () => {
      expect(scanSecrets(Buffer.from(text), { mode: "result" })).toEqual([]);
      expect(scanSecrets(resultLine(text), { mode: "result" })).toEqual([]);
    });
  }
});

test("a credential in a structured result: the value of a key that names one, and a token under any key", () => {
  const token = ["gh", "p_", "A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8"].join("");
  const line = Buffer.from(
    JSON.stringify({ jsonrpc: "2.0", id: 1, result: { structuredContent: { user: "bob", password: "hunter2", note: `deploy with ${token}`, limits: { max_tokens: 10, nextPageToken: "abc" }, n: 12345678901234567890 } } }),
  );
  const spans = scanSecrets(line, { mode: "result" });
  expect(spans.map((span) => span.kind)).toEqual(["secret_field", "github_token"]);
  const out = redactSpans(line, spans).toString();
  // The rest of the line is byte for byte what the server sent (no re-serialisation: big numbers keep their digits).
  expect(out).toBe(line.toString().replace("hunter2", "[REDACTED:secret_field]").replace(token, "[REDACTED:github_token]"));
});

test("kinds switched off are not looked for", () => {
  const text = `AKIAIOSFODNN7EXAMPLE and ${["eyJ", "hbGciOiJIUzI1NiJ9"].join("")}.eyJzdWIiOiIxMjM0In0.c2lnbmF0dXJlX2hlcmU`;
  expect(scanSecrets(Buffer.from(text), { mode: "result" }).map((span) => span.kind)).toEqual(["aws_access_key_id", "jwt"]);
  expect(scanSecrets(Buffer.from(text), { mode: "result", enabled: (kind) => kind !== "jwt" }).map((span) => span.kind)).toEqual(["aws_access_key_id"]);
});

describe("what is redacted keeps the line valid JSON at every level of nesting", () => {
  const cases: Array<[string, unknown]> = [
    ["a password ending in a backslash", { password: "abc\\" }],
    ["a password with escaped quotes", { password: 'a"b"c' }],
    ["a private key with newlines", { key_file: ["-----BEGIN ", "EC PRIVATE KEY-----\nMHcCAQEE\nIDb9\n-----END EC PRIVATE KEY-----"].join("") }],
    ["a private key cut off", { text: ["-----BEGIN ", "RSA PRIVATE KEY-----\nMIIEowIBAAKCAQEA"].join("") }],
    ["JSON two levels down", { outer: JSON.stringify({ inner: JSON.stringify({ password: 'p"w\\d', ok: 1 }) }) }],
    ["a JSON document cut off inside a string", { text: '{"password": "hunter2' }],
    ["unicode escapes around a token", { text: `\u00e9${["gh", "p_"].join("")}${"x".repeat(36)}\u00e9` }],
  ];
  for (const [what, value] of cases) {
    test(what, () => {
      const line = Buffer.from(JSON.stringify({ jsonrpc: "2.0", id: 1, result: value }));
      for (const mode of ["result", "display"] as const) {
        const spans = scanSecrets(line, { mode });
        expect(spans.length).toBeGreaterThan(0);
        const parsed = JSON.parse(redactSpans(line, spans).toString()) as { result: unknown };
        expect(JSON.stringify(parsed.result)).toContain("[REDACTED:");
      }
    });
  }

  test("display mode replaces a whole object or number under a credential key with a string", () => {
    const line = '{"auth":{"user":"u","pass":"p"},"pin":{"otp":123456},"outer":"{\\"token\\":{\\"a\\":[1,{\\"b\\":\\"}\\"}]},\\"x\\":1}"}';
    const out = redactString(line, "display");
    const parsed = JSON.parse(out) as { auth: string; pin: { otp: string }; outer: string };
    expect(parsed).toEqual({ auth: "[REDACTED:secret_field]", pin: { otp: "[REDACTED:secret_field]" }, outer: '{"token":"[REDACTED:secret_field]","x":1}' });
  });
});

describe("linear time on hostile input: 4 MiB of each pattern scans in well under a second", () => {
  const patterns: Array<[string, string]> = [
    ["JWT headers without an end", "eyJ"],
    ["JSON keys named password with no value end", '\\"password\\":{'],
    ["unterminated password strings", '"password":"'],
    ["PEM headers without an END line", ["-----BEGIN ", "RSA PRIVATE KEY-----"].join("")],
    ["URL schemes", "a://b:"],
    ["assignments", "password="],
    ["YAML keys", "\\ntoken: "],
    ["map members on one line, single-quoted values never closed", "{'password': 'x"],
    ["map members on one line, one after another", ", accesstoken: a1"],
    ["underscores", "gh_"],
    ["Authorization headers", "Authorization: x"],
    ["backslashes before quotes", '\\\\\\\\\\\\\\"'],
    // Each hit's look ahead runs to the end of a 60 KB block, or to a rule's limit, before the rule gives up.
    ["assignments whose value runs 60 KB into code", `${"token=".repeat(10_000)}(`],
    ["Slack tokens longer than any", "xoxb-".repeat(12_000)],
  ];
  for (const [what, unit] of patterns) {
    test(what, () => {
      const input = Buffer.from(unit.repeat(Math.ceil((4 * 1024 * 1024) / unit.length)));
      const started = performance.now();
      scanSecrets(input, { mode: "result" });
      scanSecrets(input, { mode: "display" });
      // Quadratic behaviour on 4 MiB would take minutes; linear takes tens of milliseconds.
      expect(performance.now() - started).toBeLessThan(2_000);
    });
  }
});

describe("what the scanner remembers of its looks ahead changes only its cost, never what it finds", () => {
  // Fragments of every rule's anchors and of what ends their looks, in random order: the looks
  // start inside, before and after each other's stretches in every way the rules allow.
  const fragments = [
    "token=", "password", "=", " = ", "'", '\\"', '\\\\\\"', '"', "(", " ", "a", "Z9", "x".repeat(40), "\\n", "\\/", "\\\\",
    ["-----BEGIN ", "RSA PRIVATE KEY-----"].join(""), "-----END RSA PRIVATE KEY-----", ["gh", "p_"].join(""), "xoxb-", "eyJ", ".",
    "sk-ant-", "Bearer ", "https://", "https:\\/\\/", "hooks.slack.com", "/services/", "\\/services\\/", "Authorization: ", ":", "@",
    "AKIA", "u:p", '":"', '": ', "\\npassword: ", "sig=", "AccountKey=",
    // Runs longer than the rules' limits (a token's 1,024 bytes, a JWT segment's 8,192), so looks are cut off too.
    "a".repeat(1_030), "Z".repeat(8_200),
  ];
  let seed = 0x2545f491;
  const next = (n: number) => {
    seed ^= seed << 13;
    seed ^= seed >>> 17;
    seed ^= seed << 5;
    return (seed >>> 0) % n;
  };
  test("600 random lines of anchors and stops, in both modes: the same findings as a scan that reads every look in full", () => {
    for (let n = 0; n < 600; n++) {
      let text = "";
      for (let k = 0, count = 20 + next(200); k < count; k++) text += fragments[next(fragments.length)];
      // Every tenth line holds a run longer than a value's 64 KiB.
      if (n % 10 === 0) text = text.replace("token=", `token=${"v".repeat(66_000)}`);
      const line = Buffer.from(`{"jsonrpc":"2.0","id":1,"result":{"text":"${text}"}}`);
      for (const mode of ["result", "display"] as const) {
        expect(scanSecrets(line, { mode })).toEqual(withoutMemory(() => scanSecrets(line, { mode })));
      }
    }
  });
});

test("a Slack webhook whose slashes were escaped by the server's JSON encoder is redacted like one written plainly", () => {
  const path = ["T", "0A1B2C3D4", "\\/B", "0A1B2C3D4E5", "\\/", "aB3dE5fG7hJ9kL1mN3pQ5rS7"].join("");
  const line = Buffer.from(`{"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"text","text":"post to https:\\/\\/hooks.slack.com\\/services\\/${path} now"}]}}`);
  const { text } = redactedResult(line);
  expect(text).toBe("post to https://hooks.slack.com/services/[REDACTED:slack_webhook] now");
});
