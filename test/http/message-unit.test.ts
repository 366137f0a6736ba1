import { describe, expect, test } from "bun:test";
import { headerValue } from "../../src/http/request-metadata.ts";
import { parseBearerChallenge } from "../../src/http/oauth/challenge.ts";
import { messageUnit } from "../../src/stdio/message-unit.ts";

const encode = (text: string) => new TextEncoder().encode(text);

describe("a whole message (HTTP body, SSE data) under the line rules", () => {
  test("pretty-printed JSON becomes one line with the same value", () => {
    const text = '{\r\n  "jsonrpc": "2.0",\n  "id": 1,\n  "result": {"a": "x y"}\n}\n';
    const unit = messageUnit(encode(text));
    expect(unit.kind).toBe("message");
    const line = new TextDecoder().decode(unit.kind === "message" ? unit.bytes : new Uint8Array());
    expect(line).not.toMatch(/[\r\n]/);
    expect(JSON.parse(line)).toEqual(JSON.parse(text));
  });

  test("a raw newline inside a string is not repaired into valid JSON", () => {
    const unit = messageUnit(encode('{"jsonrpc":"2.0","id":1,"result":{"a":"x\ny"}}'));
    expect(unit.kind === "rejected" && unit.error.code).toBe("InvalidJson");
  });

  test("too large, not UTF-8, a key twice: rejected as a line would be", () => {
    const codes = [messageUnit(encode('{"jsonrpc":"2.0","id":1,"result":{}}'), 10), messageUnit(new Uint8Array([0x7b, 0xff, 0x7d])), messageUnit(encode('{"jsonrpc":"2.0","id":1,"id":2,"result":{}}'))].map(
      (unit) => (unit.kind === "rejected" ? unit.error.code : unit.kind),
    );
    expect(codes).toEqual(["MessageTooLarge", "InvalidUtf8", "DuplicateKey"]);
  });
});

describe("request metadata and challenges", () => {
  test("header values: plain when safe, base64 sentinel otherwise (MCP 2026-07-28 Value Encoding)", () => {
    expect(["us-west1", "Hello, 世界", " padded ", "line1\nline2", "=?base64?literal?="].map(headerValue)).toEqual([
      "us-west1",
      "=?base64?SGVsbG8sIOS4lueVjA==?=",
      "=?base64?IHBhZGRlZCA=?=",
      "=?base64?bGluZTEKbGluZTI=?=",
      "=?base64?PT9iYXNlNjQ/bGl0ZXJhbD89?=",
    ]);
  });

  test("the Bearer challenge's resource_metadata, scope and error (quoted, escaped, after another scheme)", () => {
    expect(parseBearerChallenge('Basic realm="x", Bearer error="insufficient_scope", scope="files:read files:write", resource_metadata="https://mcp.example.com/.well-known/oauth-protected-resource"')).toEqual({
      resourceMetadata: "https://mcp.example.com/.well-known/oauth-protected-resource",
      scope: "files:read files:write",
      error: "insufficient_scope",
    });
    expect(parseBearerChallenge('Basic realm="x"')).toBeNull();
  });
});
