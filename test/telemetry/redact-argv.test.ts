import { describe, expect, test } from "bun:test";
import { redactArgv } from "../../src/telemetry/redact-argv.ts";

const TOKEN = `ghp_${"a".repeat(36)}`;

describe("redactArgv: an agent's command line as the record keeps it", () => {
  test("a credential's shape, a --flag=value pair, and the word after a flag naming a credential are redacted", () => {
    expect(redactArgv(["claude", "--api-key=sk-abc123def456", "--token", "abc", "-p", `fix it with ${TOKEN}`, "--password", "hunter2", "--verbose"])).toEqual([
      "claude",
      "--api-key=[REDACTED:secret_field]",
      "--token",
      "[REDACTED:secret_field]",
      "-p",
      "fix it with [REDACTED:github_token]",
      "--password",
      "[REDACTED:secret_field]",
      "--verbose",
    ]);
  });

  test("JSON in a word (alone or after a name: prefix) is redacted key by key and written back", () => {
    expect(redactArgv(["agent", '--call', 'write:{"path":"/x","content":"password: hunter2","auth":{"token":"t0"}}', '{"secret":"s"}'])).toEqual([
      "agent",
      "--call",
      'write:{"path":"/x","content":"password: [REDACTED:secret_field]","auth":"[REDACTED:secret_field]"}',
      '{"secret":"[REDACTED:secret_field]"}',
    ]);
  });

  test("ordinary words and a flag followed by another flag are left as they are", () => {
    expect(redactArgv(["codex", "exec", "--token-limit", "--model", "gpt", "{not json"])).toEqual(["codex", "exec", "--token-limit", "--model", "gpt", "{not json"]);
  });
});
