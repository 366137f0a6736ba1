import { expect, test } from "bun:test";
import { isSecretKey, REDACTED, redact } from "../../src/telemetry/redact.ts";

test("keys naming credentials are redacted at any depth; look-alike words are not", () => {
  expect(["token", "api_key", "apiKey", "X-Api-Key", "password", "client_secret", "Authorization", "accessToken", "private_key", "cookie"].filter((k) => !isSecretKey(k))).toEqual([]);
  expect(["keyboard", "monkey", "author", "path", "tokenizer", "secretary"].filter(isSecretKey)).toEqual([]);
  expect(
    redact({ path: "a.txt", auth: { password: "p", user: "u" }, list: [{ token: "t" }], header: "Bearer abc", empty_token: "", n: 1 }),
  ).toEqual({ path: "a.txt", auth: REDACTED, list: [{ token: REDACTED }], header: REDACTED, empty_token: "", n: 1 });
});
