import { describe, expect, test } from "bun:test";
import { rawForLog } from "../../src/telemetry/events.ts";
import { isSecretKey, redact, redactText } from "../../src/telemetry/redact.ts";
import { isCredentialKey, keyKind } from "../../src/telemetry/secret-keys.ts";

const FIELD = "[REDACTED:secret_field]";

test("keys naming credentials are redacted at any depth; look-alike words are not", () => {
  expect(["token", "api_key", "apiKey", "X-Api-Key", "password", "client_secret", "Authorization", "accessToken", "private_key", "cookie"].filter((k) => !isSecretKey(k))).toEqual([]);
  expect(["keyboard", "monkey", "author", "path", "tokenizer", "secretary"].filter(isSecretKey)).toEqual([]);
  expect(
    redact({ path: "a.txt", auth: { password: "p", user: "u" }, list: [{ token: "t" }], header: "Bearer abc", empty_token: "", n: 1 }),
  ).toEqual({ path: "a.txt", auth: FIELD, list: [{ token: FIELD }], header: "[REDACTED:bearer_token]", empty_token: "", n: 1 });
});

describe("key names, however they are written", () => {
  const credentials = ["newpassword", "DBPassword", "PassWord", "accesstoken", "clientsecret", "privatekey", "NEWPASSWORD", "DB_PASSWORD", "oldPassWord", "Pass_Phrase", "refreshtoken", "githubtoken", "SECRETKEY", "sshkey", "userpassword"];
  const ordinary = ["token_count", "keyboard", "secretary", "monkey", "hockey", "passwordPolicy", "password_length", "token_type", "tokenType", "secret_name", "max_tokens", "input_tokens", "passage", "compass", "bypass", "tokenizer", "passwordless", "keystone", "authority"];

  test("glued, camel-case and capitalised names of a credential are one in both readings: shown to a person, and in a result", () => {
    expect(credentials.filter((key) => !isSecretKey(key))).toEqual([]);
    expect(credentials.filter((key) => !isCredentialKey(key))).toEqual([]);
    expect(keyKind("awssecretaccesskey", "result")).toBe("aws_secret_access_key");
    expect(keyKind("AWSSecretAccessKey", "display")).toBe("aws_secret_access_key");
  });

  test("names that hold no credential, or only describe one (how many, what kind, its rules), are none in either reading", () => {
    expect(ordinary.filter(isSecretKey)).toEqual([]);
    expect(ordinary.filter(isCredentialKey)).toEqual([]);
    const value = Object.fromEntries(ordinary.map((key) => [key, "kept"]));
    expect(redact(value)).toEqual(value);
  });
});

test("a map written on one line inside a string: a YAML flow map, a Python dict, a parameter", () => {
  expect(
    redact({
      yaml: "db: {user: app, password: hunter2, port: 5432}",
      python: "{'user': 'app', 'password': 'hunter2'}",
      json: 'settings = {"user": "u", "password": "hunter2"}',
      call: "login(user, password='hunter2')",
      listed: "- {name: db, newpassword: hunter2}",
    }),
  ).toEqual({
    yaml: `db: {user: app, password: ${FIELD}, port: 5432}`,
    python: `{'user': 'app', 'password': '${FIELD}'}`,
    json: `settings = {"user": "u", "password": "${FIELD}"}`,
    call: `login(user, password='${FIELD}')`,
    listed: `- {name: db, newpassword: ${FIELD}}`,
  });
});

test("a token in a sentence that starts with the word token is named by its shape, not taken for an Authorization header", () => {
  const token = ["gh", "p_", "A".repeat(36)].join("");
  expect(redact({ note: `token is ${token}`, header: `token ${token}` })).toEqual({ note: "token is [REDACTED:github_token]", header: "[REDACTED:authorization_header]" });
});

test("strings get the text form too: a Bearer inside a command, a JSON document inside a string", () => {
  expect(redact({ cmd: 'curl -H "Authorization: Bearer abc" https://x', body: '{"password":"hunter2","user":"u"}' })).toEqual({
    cmd: 'curl -H "Authorization: [REDACTED:authorization_header]" https://x',
    body: '{"password":"[REDACTED:secret_field]","user":"u"}',
  });
});

describe("redactText: bytes that may not parse", () => {
  const cases: Array<[string, string, string]> = [
    ["a JSON pair in a rejected line", '{"jsonrpc":"2.0","params":{"arguments":{"password":"hunter2","path":"/a"}}} trailing', '{"jsonrpc":"2.0","params":{"arguments":{"password":"[REDACTED:secret_field]","path":"/a"}}} trailing'],
    ["escaped quotes, numbers and objects", '{"api_key": "sk-1\\"2", "n": 1, "token": 12345, "auth": {"u":"a"}, "secret": null, "session": ""}', '{"api_key": "[REDACTED:secret_field]", "n": 1, "token": "[REDACTED:secret_field]", "auth": "[REDACTED:secret_field]", "secret": null, "session": ""}'],
    ["JSON escaped inside a JSON string", '{"outer":"{\\"password\\":\\"in\\\\\\"ner\\",\\"ok\\":1}"}', '{"outer":"{\\"password\\":\\"[REDACTED:secret_field]\\",\\"ok\\":1}"}'],
    ["an Authorization header", "GET / HTTP/1.1\r\nAuthorization: Basic dXNlcjpwYXNz\r\nX: y", "GET / HTTP/1.1\r\nAuthorization: [REDACTED:authorization_header]\r\nX: y"],
    ["Bearer, URL passwords and parameters", "bearer xyz https://u:pw@h/?a=1&api_key=zzz&b=2 --password=p1 SECRET_TOKEN=t0 keyboard=ok", "bearer [REDACTED:bearer_token] https://u:[REDACTED:url_password]@h/?a=1&api_key=[REDACTED:secret_field]&b=2 --password=[REDACTED:secret_field] SECRET_TOKEN=[REDACTED:secret_field] keyboard=ok"],
    ["a line cut off inside the value", '{"password":"unterminat', '{"password":"[REDACTED:secret_field]'],
    ["nothing to redact", '{"path":"/etc/passwd","keyboard":3}x', '{"path":"/etc/passwd","keyboard":3}x'],
  ];
  for (const [what, input, expected] of cases) {
    test(what, () => expect(redactText(input)).toBe(expected));
  }
});

test("rawForLog redacts both encodings: text, and bytes that are not UTF-8 before they become hex", () => {
  const text = rawForLog(new TextEncoder().encode('{"token":"abc123"'));
  expect(text).toEqual({ raw: '{"token":"[REDACTED:secret_field]"', raw_encoding: "utf8" });
  const bytes = Buffer.concat([Buffer.from([0xff, 0xfe]), Buffer.from(' "password":"hunter2" ')]);
  const hex = rawForLog(bytes);
  expect(hex.raw_encoding).toBe("hex");
  expect(Buffer.from(hex.raw, "hex").toString("latin1")).toBe('\u00ff\u00fe "password":"[REDACTED:secret_field]" ');
  expect(hex.raw).not.toContain(Buffer.from("hunter2").toString("hex"));
});

test("a value with its own scheme is a credential whatever its key: Bearer is a bearer token, Basic and token an Authorization header", () => {
  expect(redact({ a: "Bearer abc", b: "BEARER  abc", c: "Basic dXNlcjpwYXNz", d: "token\tghx", e: "Bearer", f: "tokens abc" })).toEqual({
    a: "[REDACTED:bearer_token]",
    b: "[REDACTED:bearer_token]",
    c: "[REDACTED:authorization_header]",
    d: "[REDACTED:authorization_header]",
    e: "Bearer",
    f: "tokens abc",
  });
});

test("null is kept as it is, under any key; a credential key with no value has nothing to hide", () => {
  expect(redact(null)).toBeNull();
  expect(redact({ note: null, list: [null, 1, true], password: null, token: "" })).toEqual({ note: null, list: [null, 1, true], password: null, token: "" });
});

test("past 8 levels an object or array is summarised, never shown: a password nested 9 deep does not reach a person", () => {
  const nest = (depth: number, inner: unknown, wrap: (v: unknown) => unknown): unknown => (depth === 0 ? inner : nest(depth - 1, wrap(inner), wrap));
  const inObject = (v: unknown) => ({ a: v });
  const inArray = (v: unknown) => [v];
  // Eight levels down, values are still shown (and redacted).
  expect(redact(nest(8, "Bearer abc", inObject))).toEqual(nest(8, "[REDACTED:bearer_token]", inObject));
  expect(redact(nest(8, "plain", inArray))).toEqual(nest(8, "plain", inArray));
  // The ninth object or array is not walked: what it holds (a key that names nothing) is not shown.
  const deep = redact(nest(8, { user: "u", pass: "hunter2" }, inObject));
  expect(deep).toEqual(nest(8, "{…}", inObject));
  expect(redact(nest(8, ["hunter2"], inArray))).toEqual(nest(8, "[…]", inArray));
  expect(redact(nest(4, nest(5, { p: "hunter2" }, inArray), inObject))).toEqual(nest(4, nest(4, "[…]", inArray), inObject));
  expect(JSON.stringify(redact(nest(40, { p: "hunter2" }, inObject)))).not.toContain("hunter2");
});
