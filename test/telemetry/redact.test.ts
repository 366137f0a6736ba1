import { describe, expect, test } from "bun:test";
import { rawForLog } from "../../src/telemetry/events.ts";
import { isSecretKey, REDACTED, redact, redactText } from "../../src/telemetry/redact.ts";

test("keys naming credentials are redacted at any depth; look-alike words are not", () => {
  expect(["token", "api_key", "apiKey", "X-Api-Key", "password", "client_secret", "Authorization", "accessToken", "private_key", "cookie"].filter((k) => !isSecretKey(k))).toEqual([]);
  expect(["keyboard", "monkey", "author", "path", "tokenizer", "secretary"].filter(isSecretKey)).toEqual([]);
  expect(
    redact({ path: "a.txt", auth: { password: "p", user: "u" }, list: [{ token: "t" }], header: "Bearer abc", empty_token: "", n: 1 }),
  ).toEqual({ path: "a.txt", auth: REDACTED, list: [{ token: REDACTED }], header: REDACTED, empty_token: "", n: 1 });
});

test("strings get the text form too: a Bearer inside a command, a JSON document inside a string", () => {
  expect(redact({ cmd: 'curl -H "Authorization: Bearer abc" https://x', body: '{"password":"hunter2","user":"u"}' })).toEqual({
    cmd: 'curl -H "Authorization: [REDACTED]" https://x',
    body: '{"password":"[REDACTED]","user":"u"}',
  });
});

describe("redactText: bytes that may not parse", () => {
  const cases: Array<[string, string, string]> = [
    ["a JSON pair in a rejected line", '{"jsonrpc":"2.0","params":{"arguments":{"password":"hunter2","path":"/a"}}} trailing', '{"jsonrpc":"2.0","params":{"arguments":{"password":"[REDACTED]","path":"/a"}}} trailing'],
    ["escaped quotes, numbers and objects", '{"api_key": "sk-1\\"2", "n": 1, "token": 12345, "auth": {"u":"a"}, "secret": null, "session": ""}', '{"api_key": "[REDACTED]", "n": 1, "token": "[REDACTED]", "auth": "[REDACTED]", "secret": null, "session": ""}'],
    ["JSON escaped inside a JSON string", '{"outer":"{\\"password\\":\\"in\\\\\\"ner\\",\\"ok\\":1}"}', '{"outer":"{\\"password\\":\\"[REDACTED]\\",\\"ok\\":1}"}'],
    ["an Authorization header", "GET / HTTP/1.1\r\nAuthorization: Basic dXNlcjpwYXNz\r\nX: y", "GET / HTTP/1.1\r\nAuthorization: [REDACTED]\r\nX: y"],
    ["Bearer, URL passwords and parameters", "bearer xyz https://u:pw@h/?a=1&api_key=zzz&b=2 --password=p1 SECRET_TOKEN=t0 keyboard=ok", "bearer [REDACTED] https://u:[REDACTED]@h/?a=1&api_key=[REDACTED]&b=2 --password=[REDACTED] SECRET_TOKEN=[REDACTED] keyboard=ok"],
    ["a line cut off inside the value", '{"password":"unterminat', '{"password":"[REDACTED]"'],
    ["nothing to redact", '{"path":"/etc/passwd","keyboard":3}x', '{"path":"/etc/passwd","keyboard":3}x'],
  ];
  for (const [what, input, expected] of cases) {
    test(what, () => expect(redactText(input)).toBe(expected));
  }
});

test("rawForLog redacts both encodings: text, and bytes that are not UTF-8 before they become hex", () => {
  const text = rawForLog(new TextEncoder().encode('{"token":"abc123"'));
  expect(text).toEqual({ raw: '{"token":"[REDACTED]"', raw_encoding: "utf8" });
  const bytes = Buffer.concat([Buffer.from([0xff, 0xfe]), Buffer.from(' "password":"hunter2" ')]);
  const hex = rawForLog(bytes);
  expect(hex.raw_encoding).toBe("hex");
  expect(Buffer.from(hex.raw, "hex").toString("latin1")).toBe('\u00ff\u00fe "password":"[REDACTED]" ');
  expect(hex.raw).not.toContain(Buffer.from("hunter2").toString("hex"));
});
