import { describe, expect, test } from "bun:test";
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { discoverConfig, loadConfig, parseConfig } from "../../src/core/config/load.ts";
import { compileGlob } from "../../src/core/glob.ts";
import { tempDir } from "../support/harness.ts";

const problems = (yaml: string, env: Record<string, string> = {}) => {
  const result = parseConfig(yaml, env);
  return result.ok ? [] : result.problems.map((p) => `${p.path}: ${p.message}`);
};

describe("thoughtgate.yaml schema", () => {
  test("a minimal file gets every default", () => {
    expect(parseConfig("schema: 1\n", {})).toEqual({
      ok: true,
      config: { schema: 1, sources: [], governance: { defaults: { action: "forward" }, rules: [] }, approval: {} },
    });
  });

  test("errors name the field and say what to write instead", () => {
    expect(problems("schema: 1\nsources:\n  - id: a\n  - id: b\n    expose: { mode: allow }\n")).toEqual([
      'sources[1].expose.mode: expected one of all|allowlist|blocklist, got "allow"',
    ]);
    expect(problems("schema: 1\ngovernance:\n  rules:\n    - { match: x, action: block }\n")).toEqual([
      'governance.rules[0].action: expected one of forward|deny|approve|policy, got "block"',
    ]);
    expect(problems("schema: 2\n")).toEqual(["schema: expected 1 (the only schema version), got 2"]);
  });

  test("unknown keys are rejected with the allowed ones listed", () => {
    expect(problems("schema: 1\ngovernence: {}\n")[0]).toStartWith('governence: unknown key "governence"; allowed keys: schema, sources, governance');
    expect(problems("schema: 1\nsources: [{ id: a, enabeld: false }]\n")).toEqual([
      'sources[0].enabeld: unknown key "enabeld"; allowed keys: id, enabled, expose',
    ]);
  });

  test("several problems are all reported at once", () => {
    expect(problems("schema: 1\nsources: [{ id: 3 }]\napproval: { q: { timeout: soon } }\n")).toHaveLength(2);
  });

  test("references must exist: workflows, cedar for action policy, unique ids", () => {
    const yaml = `schema: 1
sources: [{ id: gh }, { id: gh }]
governance:
  rules:
    - { id: r, match: "delete_*", action: approve, approval: oncall }
    - { id: r, match: "*", action: policy }
    - { match: x, action: deny, approval: q }
approval: { q: {} }
`;
    expect(problems(yaml)).toEqual([
      'sources[1].id: duplicate id "gh" (also sources[0])',
      'governance.rules[0].approval: no approval workflow named "oncall" (defined: q)',
      'governance.rules[1].id: duplicate rule id "r" (also rules[0])',
      "governance.rules[1].action: action policy needs Cedar policies: add cedar.policies",
      "governance.rules[2].approval: only rules with action approve or policy use an approval workflow (this one is deny)",
    ]);
  });

  test("${VAR} and ${VAR:-default} expand in strings; an unset variable is an error naming the field", () => {
    const yaml = 'schema: 1\ncedar:\n  policies: ["${POLICY_DIR}/a.cedar", "${OTHER:-/etc/tg}/b.cedar"]\n';
    const ok = parseConfig(yaml, { POLICY_DIR: "/srv/policies" });
    expect(ok.ok && ok.config.cedar?.policies).toEqual(["/srv/policies/a.cedar", "/etc/tg/b.cedar"]);
    expect(problems(yaml)).toEqual(["cedar.policies[0]: environment variable POLICY_DIR is not set (write ${POLICY_DIR:-default} to give a default)"]);
  });

  test("settings that are not built are refused, not ignored", () => {
    expect(problems("schema: 1\ntelemetry: { otlp: { endpoint: http://127.0.0.1:4318 } }\n")).toEqual([
      "telemetry: OTLP trace export (telemetry.otlp) is not built yet; remove the telemetry section",
    ]);
  });

  test("an approval destination that is not built is refused, not ignored", () => {
    expect(problems("schema: 1\napproval:\n  s: { destination: { type: slack } }\n")[0]).toContain("Slack is not built yet");
  });

  test("durations accept ms, s, m, h", () => {
    const ok = parseConfig("schema: 1\napproval:\n  a: { timeout: 90s }\n  b: { timeout: 2m, on_timeout: approve }\n", {});
    expect(ok.ok && [ok.config.approval.a?.timeout, ok.config.approval.b?.timeout, ok.config.approval.b?.on_timeout]).toEqual([90_000, 120_000, "approve"]);
  });

  test("bad YAML is one clear problem", () => {
    expect(problems("schema: 1\nsources: [\n")[0]).toStartWith("(file): not valid YAML");
  });
});

describe("discovery and loading", () => {
  test("flag, then $THOUGHTGATE_CONFIG, then ./thoughtgate.yaml, then the user config dir", () => {
    using dir = tempDir();
    const cwd = join(dir.path, "project");
    const xdg = join(dir.path, "xdg");
    mkdirSync(join(xdg, "thoughtgate"), { recursive: true });
    mkdirSync(cwd);
    const env = { XDG_CONFIG_HOME: xdg };
    expect(discoverConfig(undefined, env, cwd)).toBeNull();
    writeFileSync(join(xdg, "thoughtgate", "thoughtgate.yaml"), "schema: 1\n");
    expect(discoverConfig(undefined, env, cwd)?.origin).toBe("user");
    writeFileSync(join(cwd, "thoughtgate.yaml"), "schema: 1\n");
    expect(discoverConfig(undefined, env, cwd)?.origin).toBe("cwd");
    expect(discoverConfig(undefined, { ...env, THOUGHTGATE_CONFIG: "x.yaml" }, cwd)).toEqual({ file: join(cwd, "x.yaml"), origin: "env" });
    expect(discoverConfig("y.yaml", { ...env, THOUGHTGATE_CONFIG: "x.yaml" }, cwd)).toEqual({ file: join(cwd, "y.yaml"), origin: "flag" });
  });

  test("a file that was asked for and is missing or invalid is fatal, never a silent default", () => {
    using dir = tempDir();
    expect(() => loadConfig("missing.yaml", {}, dir.path)).toThrow("no such file (given by --thoughtgate-config)");
    expect(() => loadConfig(undefined, { THOUGHTGATE_CONFIG: "gone.yaml" }, dir.path)).toThrow("given by $THOUGHTGATE_CONFIG");
    writeFileSync(join(dir.path, "bad.yaml"), "schema: 1\nsources: 5\n");
    expect(() => loadConfig("bad.yaml", {}, dir.path)).toThrow("sources: expected a list of sources");
    expect(loadConfig(undefined, { XDG_CONFIG_HOME: join(dir.path, "none") }, dir.path)).toBeNull();
  });

  test("cedar paths are resolved against the config file's directory", () => {
    using dir = tempDir();
    writeFileSync(join(dir.path, "tg.yaml"), "schema: 1\ncedar: { policies: [p/a.cedar, /abs/b.cedar], schema: s.cedarschema }\n");
    expect(loadConfig(join(dir.path, "tg.yaml"), {}, "/")?.config.cedar).toEqual({
      policies: [join(dir.path, "p/a.cedar"), "/abs/b.cedar"],
      schema: join(dir.path, "s.cedarschema"),
    });
  });
});

describe("globs", () => {
  test("* spans any characters, ? one, and matching is case-sensitive", () => {
    const g = compileGlob("delete_*");
    expect([g.test("delete_repo"), g.test("delete_"), g.test("Delete_repo"), g.test("xdelete_repo")]).toEqual([true, true, false, false]);
    expect(compileGlob("file://*/secret?").test("file:///home/a/secret1")).toBe(true);
    expect(compileGlob("a.b").test("aXb")).toBe(false);
    expect(compileGlob("*").test("")).toBe(true);
  });
});
