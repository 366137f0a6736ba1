import { describe, expect, test } from "bun:test";
import { mkdirSync, symlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { discoverPolicy, loadConfig, loadPolicy, parseConfig } from "../../src/core/config/load.ts";
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
      config: { schema: 1, sources: [], governance: { defaults: { action: "forward" }, rules: [] }, approval: {}, pins: { mode: "strict", block_severity: "high" } },
    });
  });

  test("pinning: per source and for every server, with a workflow that must exist", () => {
    const parsed = parseConfig("schema: 1\nsources:\n  - { id: fs, pin: warn }\npins: { mode: off, block_severity: medium }\n", {});
    expect(parsed.ok && parsed.config.sources[0]?.pin).toBe("warn");
    expect(parsed.ok && parsed.config.pins).toEqual({ mode: "off", block_severity: "medium" });
    expect(problems("schema: 1\npins: { mode: loose }\n")).toEqual(['pins.mode: expected one of strict|warn|off, got "loose"']);
    expect(problems("schema: 1\npins: { approval: oncall }\n")).toEqual(['pins.approval: no approval workflow named "oncall"; define it under approval:, or leave it out to use the built-in default']);
  });

  test("errors name the field and say what to write instead", () => {
    expect(problems("schema: 1\nsources:\n  - id: a\n  - id: b\n    expose: { mode: allow }\n")).toEqual([
      'sources[1].expose.mode: expected one of all|allowlist|blocklist, got "allow" (did you mean "allowlist"?)',
    ]);
    expect(problems("schema: 1\ngovernance:\n  rules:\n    - { match: x, action: block }\n")).toEqual([
      'governance.rules[0].action: expected one of forward|deny|approve|policy, got "block" (did you mean "deny"?)',
    ]);
    expect(problems("schema: 2\n")).toEqual(["schema: expected 1 (the only schema version), got 2"]);
  });

  test("unknown keys are rejected with the allowed ones listed", () => {
    expect(problems("schema: 1\ngovernence: {}\n")[0]).toStartWith('governence: unknown key "governence" (did you mean "governance"?); allowed keys: schema, sources, governance');
    expect(problems("schema: 1\nsources: [{ id: a, enabeld: false }]\n")).toEqual([
      'sources[0].enabeld: unknown key "enabeld" (did you mean "enabled"?); allowed keys: id, enabled, expose, pin',
    ]);
    // Nothing close: no guess, the allowed keys only.
    expect(problems("schema: 1\nsources: [{ id: a, colour: red }]\n")).toEqual(['sources[0].colour: unknown key "colour"; allowed keys: id, enabled, expose, pin']);
  });

  test("a required key that is missing is said in a sentence; a misspelling of it is one problem, not two", () => {
    expect(problems("schema: 1\ngovernance:\n  rules:\n    - { action: deny }\n")).toEqual([
      'governance.rules[0].match: a rule needs match: the tool names it applies to, a glob like "delete_*" ("*" for every tool)',
    ]);
    expect(problems("schema: 1\nsources: [{ pin: warn }]\n")).toEqual(["sources[0].id: a source needs id: the server id it is about (the name in the agent's config, the shim's --server-id)"]);
    expect(problems("sources: []\n")).toEqual(["schema: a policy file needs schema: the format's version, `schema: 1`, as its first line"]);
    expect(problems("schema: 1\ngovernance:\n  rules:\n    - { mach: x, action: deny }\n")).toEqual([
      'governance.rules[0].mach: unknown key "mach" (did you mean "match"?); allowed keys: id, match, method, source, server, annotations, arguments, project, action, policy_id, approval',
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
      'governance.rules[0].approval: no approval workflow named "oncall"; defined: q',
      'governance.rules[1].id: duplicate rule id "r" (also rules[0])',
      "governance.rules[1].action: action policy needs Cedar policies: add cedar.policies",
      "governance.rules[2].approval: only rules with action approve or policy use an approval workflow (this one is deny)",
    ]);
  });

  test("${VAR} and ${VAR:-default} expand in Cedar paths; an unset variable is an error naming the field", () => {
    const yaml = 'schema: 1\ncedar:\n  policies: ["${POLICY_DIR}/a.cedar", "${OTHER:-/etc/tg}/b.cedar"]\n  schema: "${POLICY_DIR}/s.cedarschema"\n';
    const ok = parseConfig(yaml, { POLICY_DIR: "/srv/policies" });
    expect(ok.ok && ok.config.cedar).toEqual({ policies: ["/srv/policies/a.cedar", "/etc/tg/b.cedar"], schema: "/srv/policies/s.cedarschema" });
    expect(problems(yaml)).toEqual([
      "cedar.policies[0]: environment variable POLICY_DIR is not set (write ${POLICY_DIR:-default} to give a default)",
      "cedar.schema: environment variable POLICY_DIR is not set (write ${POLICY_DIR:-default} to give a default)",
    ]);
  });

  test("${VAR} anywhere an agent could see the value is an error naming the field, never expanded", () => {
    const yaml = `schema: 1
sources: [{ id: "\${HOST}" }]
governance:
  rules:
    - { id: "leak-\${AWS_SECRET_ACCESS_KEY}", match: "*", action: approve, approval: "\${WF:-x}" }
approval: { x: {} }
`;
    expect(problems(yaml, { HOST: "h", AWS_SECRET_ACCESS_KEY: "s3cr3t" })).toEqual([
      "sources[0].id: environment variables are only expanded in cedar.policies, cedar.schema, telemetry.otlp.endpoint, telemetry.otlp.headers, approval.<name>.destination.token, approval.<name>.destination.app_token and approval.<name>.destination.channel (found ${HOST})",
      "governance.rules[0].id: environment variables are only expanded in cedar.policies, cedar.schema, telemetry.otlp.endpoint, telemetry.otlp.headers, approval.<name>.destination.token, approval.<name>.destination.app_token and approval.<name>.destination.channel (found ${AWS_SECRET_ACCESS_KEY})",
      "governance.rules[0].approval: environment variables are only expanded in cedar.policies, cedar.schema, telemetry.otlp.endpoint, telemetry.otlp.headers, approval.<name>.destination.token, approval.<name>.destination.app_token and approval.<name>.destination.channel (found ${WF:-x})",
    ]);
  });

  test("cli.require_terminal: false only in the user's own policy; a project's may not say who decides", () => {
    const ok = parseConfig("schema: 1\ncli: { require_terminal: false }\n", {});
    expect(ok.ok && ok.config.cli).toEqual({ require_terminal: false });
    expect(problems("schema: 1\ncli: { require_terminal: maybe }\n")).toEqual(["cli.require_terminal: expected true or false"]);
    const project = parseConfig("schema: 1\ncli: { require_terminal: true }\n", {}, "project");
    expect(project.ok ? [] : project.problems.map((p) => `${p.path}: ${p.message}`)).toEqual(["cli: only the user's policy may set this; a project policy may only add restrictions"]);
  });

  test("a project policy expands no ${VAR} at all and may not set telemetry", () => {
    const project = (yaml: string) => {
      const result = parseConfig(yaml, { POLICY_DIR: "/srv" }, "project");
      return result.ok ? [] : result.problems.map((p) => `${p.path}: ${p.message}`);
    };
    expect(project('schema: 1\ncedar: { policies: ["${POLICY_DIR}/a.cedar"] }\n')).toEqual([
      "cedar.policies[0]: environment variables are not expanded in a project policy (found ${POLICY_DIR}); write the value itself",
    ]);
    expect(project("schema: 1\ntelemetry: { otlp: { endpoint: http://collector.example } }\n")).toEqual([
      "telemetry: only the user's policy may set this; a project policy may only add restrictions",
    ]);
  });

  test("telemetry.otlp: endpoint and headers from the environment, https or loopback only; no error prints a header value", () => {
    const ok = parseConfig('schema: 1\ntelemetry:\n  otlp: { endpoint: "${COLLECTOR:-https://otlp.example.com}", headers: { x-api-key: "${OTLP_KEY}" } }\n', { OTLP_KEY: "k-123" });
    expect(ok.ok && ok.config.telemetry).toEqual({ otlp: { endpoint: "https://otlp.example.com", headers: { "x-api-key": "k-123" } } });
    expect(problems("schema: 1\ntelemetry: { otlp: {} }\n")).toEqual([]);
    expect(problems("schema: 1\ntelemetry: { otlp: { endpoint: \"http://[::1]:4318\" } }\n")).toEqual([]);
    const wrong = problems('schema: 1\ntelemetry: { otlp: { endpoint: "http://collector.example:4318", headers: { "bad header": v, authorization: "Bearer hidden-secret\\r\\nx-injected: 1" } }, exporter: x }\n');
    expect(wrong).toEqual([
      "telemetry.otlp.endpoint: expected an https:// URL (http:// only to 127.0.0.1, [::1] or localhost), without user:password@",
      "telemetry.otlp.headers.bad header: expected an HTTP header name (letters, digits and !#$%&'*+.^_`|~-)",
      "telemetry.otlp.headers.authorization: a header value must not contain line breaks or NUL",
      'telemetry.exporter: unknown key "exporter"; allowed keys: otlp',
    ]);
    expect(JSON.stringify(wrong)).not.toContain("hidden-secret");
    expect(problems("schema: 1\ntelemetry: { otlp: { endpoint: \"https://user:pw@otlp.example.com\" } }\n")).toEqual([
      "telemetry.otlp.endpoint: expected an https:// URL (http:// only to 127.0.0.1, [::1] or localhost), without user:password@",
    ]);
  });

  test("a Slack destination: tokens from the environment, approvers required, https only; no error prints a token", () => {
    const yaml = `schema: 1
approval:
  s:
    destination: { type: slack, channel: "\${SLACK_CHANNEL:-approvals}", token: "\${SLACK_BOT_TOKEN}", app_token: "\${SLACK_APP_TOKEN}", approvers: [U0123ABCD, W0ENTERPRISE] }
`;
    const ok = parseConfig(yaml, { SLACK_BOT_TOKEN: "xoxb-1-2-abc", SLACK_APP_TOKEN: "xapp-1-A1-2-def" });
    expect(ok.ok && ok.config.approval.s?.destination).toEqual({
      type: "slack",
      channel: "approvals",
      token: "xoxb-1-2-abc",
      app_token: "xapp-1-A1-2-def",
      approvers: ["U0123ABCD", "W0ENTERPRISE"],
      base_url: "https://slack.com/api/",
    });
    const wrong = problems(
      'schema: 1\napproval:\n  s: { destination: { type: slack, channel: c, token: "xapp-swapped-secret", app_token: "xoxb-swapped-secret", approvers: [], base_url: "http://user:pw@127.0.0.1/api" } }\n',
    );
    expect(wrong).toEqual([
      "approval.s.destination.token: expected a Slack bot token (xoxb-…)",
      "approval.s.destination.app_token: expected a Slack app-level token (xapp-…), the one Socket Mode uses",
      "approval.s.destination.approvers: list at least one Slack user id: only the listed users may decide in Slack",
      "approval.s.destination.base_url: expected an https:// URL (http:// only to 127.0.0.1, [::1] or localhost), without user:password@",
    ]);
    expect(JSON.stringify(wrong)).not.toContain("swapped-secret");
    expect(problems("schema: 1\napproval:\n  s: { destination: { type: slack, channel: c, token: xoxb-1, approvers: [alice] } }\n")).toEqual([
      "approval.s.destination.approvers[0]: expected a Slack user id like U0123ABCD (its member id, not a name)",
    ]);
    expect(problems("schema: 1\napproval:\n  s: { destination: { type: slack, channel: c, token: xoxb-1, approvers: [U1A], base_url: \"http://[::1]:9/api/\" } }\n")).toEqual([]);
    expect(problems("schema: 1\napproval:\n  s: { destination: { type: teams } }\n")).toEqual(['approval.s.destination.type: expected destination.type one of any|elicitation|web|cli|slack, got "teams"']);
  });

  test("a project policy may not send approvals to Slack", () => {
    const result = parseConfig("schema: 1\napproval:\n  s: { destination: { type: slack, channel: c, token: xoxb-1, approvers: [U1A] } }\n", {}, "project");
    expect(result.ok ? [] : result.problems).toMatchObject([
      { path: "approval.s.destination", message: "only the user's policy may send approvals to Slack (it chooses where each call is sent and who may approve it); a project policy may only add restrictions" },
    ]);
  });

  test("durations accept ms, s, m, h, d, w; anything else names the units", () => {
    const ok = parseConfig("schema: 1\napproval:\n  a: { timeout: 90s }\n  b: { timeout: 2m, on_timeout: approve }\n  c: { timeout: 1d }\n  d: { timeout: 2w }\n", {});
    expect(ok.ok && [ok.config.approval.a?.timeout, ok.config.approval.b?.timeout, ok.config.approval.b?.on_timeout, ok.config.approval.c?.timeout, ok.config.approval.d?.timeout]).toEqual([90_000, 120_000, "approve", 86_400_000, 1_209_600_000]);
    expect(problems("schema: 1\napproval:\n  a: { timeout: 3y }\n")).toEqual(["approval.a.timeout: expected a duration like 500ms, 30s, 5m, 1h, 7d or 2w (units ms, s, m, h, d, w)"]);
  });

  test("bad YAML is one clear problem", () => {
    expect(problems("schema: 1\nsources: [\n")[0]).toStartWith("(file): not valid YAML");
  });
});

describe("discovery and loading", () => {
  test("flag or $THOUGHTGATE_CONFIG: that file alone; else the user's file and the project's together", () => {
    using dir = tempDir();
    const cwd = join(dir.path, "project");
    const xdg = join(dir.path, "xdg");
    mkdirSync(join(xdg, "thoughtgate"), { recursive: true });
    mkdirSync(cwd);
    const env = { XDG_CONFIG_HOME: xdg };
    const user = join(xdg, "thoughtgate", "thoughtgate.yaml");
    const project = join(cwd, "thoughtgate.yaml");
    expect(discoverPolicy(undefined, env, cwd)).toEqual({ mode: "layered", user: null, project: null });
    writeFileSync(project, "schema: 1\n");
    expect(discoverPolicy(undefined, env, cwd)).toEqual({ mode: "layered", user: null, project: { file: project, origin: "project" } });
    writeFileSync(user, "schema: 1\n");
    expect(discoverPolicy(undefined, env, cwd)).toEqual({ mode: "layered", user: { file: user, origin: "user" }, project: { file: project, origin: "project" } });
    expect(discoverPolicy(undefined, { ...env, THOUGHTGATE_CONFIG: "x.yaml" }, cwd)).toEqual({ mode: "explicit", file: { file: join(cwd, "x.yaml"), origin: "env" } });
    expect(discoverPolicy("y.yaml", { ...env, THOUGHTGATE_CONFIG: "x.yaml" }, cwd)).toEqual({ mode: "explicit", file: { file: join(cwd, "y.yaml"), origin: "flag" } });
    // Working in the user config directory: its file is the user's, not also a project's.
    expect(discoverPolicy(undefined, env, join(xdg, "thoughtgate"))).toEqual({ mode: "layered", user: { file: user, origin: "user" }, project: null });
  });

  test("a file that was asked for and is missing or invalid is fatal, never a silent default", () => {
    using dir = tempDir();
    expect(() => loadConfig("missing.yaml", {}, dir.path)).toThrow("no such file (given by --thoughtgate-config)");
    expect(() => loadPolicy(discoverPolicy(undefined, { THOUGHTGATE_CONFIG: "gone.yaml" }, dir.path))).toThrow("given by $THOUGHTGATE_CONFIG");
    writeFileSync(join(dir.path, "bad.yaml"), "schema: 1\nsources: 5\n");
    expect(() => loadConfig("bad.yaml", {}, dir.path)).toThrow("sources: expected a list of sources");
    expect(loadPolicy(discoverPolicy(undefined, { XDG_CONFIG_HOME: join(dir.path, "none") }, dir.path))).toEqual({ mode: "layered", user: null, project: null });
  });

  test("a project policy, and the Cedar files it names, must be files in the project directory", () => {
    using dir = tempDir();
    const cwd = join(dir.path, "repo");
    mkdirSync(cwd);
    const env = { XDG_CONFIG_HOME: join(dir.path, "xdg") };
    writeFileSync(join(dir.path, "secret.yaml"), "schema: 1\n");
    symlinkSync(join(dir.path, "secret.yaml"), join(cwd, "thoughtgate.yaml"));
    expect(() => loadPolicy(discoverPolicy(undefined, env, cwd), env)).toThrow("a project policy must be a file in the project");
    const inRepo = join(dir.path, "repo2");
    mkdirSync(inRepo);
    writeFileSync(join(inRepo, "thoughtgate.yaml"), "schema: 1\ncedar: { policies: [ok.cedar, ../outside.cedar] }\n");
    expect(() => loadPolicy(discoverPolicy(undefined, env, inRepo), env)).toThrow(`cedar: ${join(dir.path, "outside.cedar")} is outside the project directory`);
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
