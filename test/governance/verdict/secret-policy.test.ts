import { describe, expect, test } from "bun:test";
import { parseConfig } from "../../../src/core/config/load.ts";
import { EMBEDDED_DEFAULT } from "../../../src/governance/engine/default-policy.ts";
import { GovernanceEngine } from "../../../src/governance/engine/engine.ts";
import { SCAN_EVERYTHING } from "../../../src/governance/verdict/secret-policy.ts";
import { StrictestOf } from "../../../src/governance/engine/strictest-of.ts";

function engine(yaml: string): GovernanceEngine {
  const result = parseConfig(yaml, {});
  if (!result.ok) throw new Error(result.problems.map((p) => `${p.path}: ${p.message}`).join("\n"));
  return new GovernanceEngine(result.config, null, "test");
}

const problems = (yaml: string) => {
  const result = parseConfig(yaml, {});
  return result.ok ? [] : result.problems.map((p) => `${p.path}: ${p.message}`);
};

describe("secrets: in thoughtgate.yaml", () => {
  test("no section, and the embedded default: every result scanned, every kind redacted", () => {
    expect(engine("schema: 1\n").secretScan("any")).toEqual(SCAN_EVERYTHING);
    expect(new GovernanceEngine(EMBEDDED_DEFAULT, null, "embedded").secretScan("any")).toEqual(SCAN_EVERYTHING);
  });

  test("per kind and per server", () => {
    const policy = engine(`schema: 1
secrets:
  kinds:
    jwt: { action: detect }
    url_password: { replacement: "<password>" }
    bearer_token: { action: "off" }
  servers:
    vault: { scan: "off" }
`);
    expect(policy.secretScan("files")).toEqual({
      scan: true,
      kinds: { url_password: { action: "redact", replacement: "<password>" }, bearer_token: { action: "off" }, jwt: { action: "detect" } },
    });
    expect(policy.secretScan("vault").scan).toBe(false);
    expect(engine('schema: 1\nsecrets: { scan: "off", servers: { files: { scan: results } } }\n').secretScan("files").scan).toBe(true);
  });

  test("mistakes are named with what to write instead", () => {
    expect(problems("schema: 1\nsecrets: { kinds: { github: { action: redact } } }\n")[0]).toStartWith('secrets.kinds.github: unknown secret kind "github" (did you mean "github_token"?); known kinds: aws_access_key_id,');
    expect(problems("schema: 1\nsecrets: { kinds: { jwt: { action: hide } } }\n")).toEqual(['secrets.kinds.jwt.action: expected one of redact|detect|off, got "hide"']);
    expect(problems("schema: 1\nsecrets: { scan: all }\n")).toEqual(['secrets.scan: expected one of results|off, got "all"']);
    expect(problems('schema: 1\nsecrets: { kinds: { jwt: { replacement: "a\\"b" } } }\n')).toEqual([
      "secrets.kinds.jwt.replacement: expected 1 to 200 characters without quotes, backslashes or control characters",
    ]);
    expect(problems("schema: 1\nsecrets: { redact: true }\n")[0]).toStartWith('secrets.redact: unknown key "redact"; allowed keys: scan, kinds, servers');
  });
});

describe("a project policy can make scanning stricter, never weaker", () => {
  const user = engine(`schema: 1
secrets:
  kinds:
    jwt: { action: "off" }
    url_password: { action: detect, replacement: "<user's>" }
  servers:
    vault: { scan: "off" }
`);

  test("a project cannot switch scanning off, nor a kind the user redacts", () => {
    const hostile = engine(`schema: 1
secrets:
  scan: "off"
  kinds:
    github_token: { action: "off" }
    slack_token: { action: redact, replacement: "nothing to see" }
`);
    const merged = new StrictestOf(user, hostile).secretScan("files");
    expect(merged.scan).toBe(true);
    expect(merged.kinds.github_token).toBeUndefined();
    // The user's policy redacts Slack tokens with the default marker: the project cannot choose the text.
    expect(merged.kinds.slack_token).toBeUndefined();
  });

  test("a project can turn on what the user turned off", () => {
    const strict = engine(`schema: 1
secrets:
  kinds:
    jwt: { action: redact }
    url_password: { action: redact }
  servers:
    vault: { scan: results }
`);
    const merged = new StrictestOf(user, strict);
    expect(merged.secretScan("vault").scan).toBe(true);
    expect(merged.secretScan("files").kinds).toEqual({});
  });
});
