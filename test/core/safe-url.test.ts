/**
 * The one check every URL that carries a credential passes (Slack, OTLP, OAuth endpoints, a remote
 * MCP server): https anywhere, plain http only to this machine, never user:password@ in it.
 */
import { expect, test } from "bun:test";
import { isSafeUrl } from "../../src/core/safe-url.ts";

test("https anywhere; http only to localhost, 127.0.0.0/8 or ::1; no credentials in the URL", () => {
  const urls = [
    "https://slack.com/api",
    "https://collector.example.com:4318/v1/traces",
    "http://127.0.0.1:8080/",
    "http://127.1.2.3/",
    "http://localhost:4318/",
    "http://[::1]:9000/",
    "http://example.com/",
    "http://10.0.0.1/",
    "http://[::2]/",
    "http://127.0.0.1.example.com/",
    "https://user:secret@example.com/",
    "ftp://127.0.0.1/",
    "not a url",
  ];
  expect(Object.fromEntries(urls.map((url) => [url, isSafeUrl(url)]))).toEqual({
    "https://slack.com/api": true,
    "https://collector.example.com:4318/v1/traces": true,
    "http://127.0.0.1:8080/": true,
    "http://127.1.2.3/": true,
    "http://localhost:4318/": true,
    "http://[::1]:9000/": true,
    "http://example.com/": false,
    "http://10.0.0.1/": false,
    "http://[::2]/": false,
    "http://127.0.0.1.example.com/": false,
    "https://user:secret@example.com/": false,
    "ftp://127.0.0.1/": false,
    "not a url": false,
  });
});

test("the WebSocket pair: wss anywhere, ws only to this machine", () => {
  const ws = { secure: "wss:", plain: "ws:" };
  expect([isSafeUrl("wss://wss-primary.slack.com/link", ws), isSafeUrl("ws://127.0.0.1:1234/", ws), isSafeUrl("ws://slack.com/", ws), isSafeUrl("https://slack.com/", ws)]).toEqual([true, true, false, false]);
});
