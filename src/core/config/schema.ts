import * as v from "valibot";
import { DURATION_EXPECTED, durationMs } from "../duration.ts";
import { isSafeUrl } from "../safe-url.ts";
import { PIN_MODES, SEVERITIES } from "../severity.ts";
import { SECRET_KIND_IDS } from "../secret-kinds.ts";
import { didYouMean } from "../suggest.ts";
import { DEFAULT_APPROVAL_TIMEOUT_MS } from "./defaults.ts";

/**
 * `thoughtgate.yaml`, schema 1: the one definition of the file's shape; its type is inferred.
 * Every object is strict (an unknown key is an error that names the closest allowed key and all of
 * them), every enum error lists its choices and the likely one, so a message can say what to write
 * instead; the suggestions come from these entries (src/core/suggest.ts), so a key added here is
 * suggested too. A required key that is missing is said in a sentence: "a rule needs match: …".
 */
function strict<const T extends v.ObjectEntries>(entries: T, noun?: string) {
  const keys = Object.keys(entries);
  const allowed = keys.join(", ");
  return v.strictObject(entries, (issue) => {
    if (issue.type !== "strict_object") return `expected a mapping with keys ${allowed}, got ${issue.received}`;
    if (issue.expected === "never") return `unknown key ${issue.received}${didYouMean(String(issue.input), keys)}; allowed keys: ${allowed}`;
    // A missing required key: valibot names it in `expected` ("\"match\"").
    const missing = keys.find((key) => JSON.stringify(key) === issue.expected);
    if (missing === undefined) return `expected a mapping with keys ${allowed}, got ${issue.received}`;
    const what = v.getDescription(entries[missing] as v.GenericSchema);
    return `${noun ? `a ${noun} needs` : "missing"} ${missing}${what ? `: ${what}` : ""}`;
  });
}

/** A choice among `options`; `synonyms` map words people write for one of them (`allow` → `forward`). */
function oneOf<const T extends readonly string[]>(options: T, synonyms?: Readonly<Record<string, T[number]>>) {
  return v.picklist(options, (issue) => `expected one of ${options.join("|")}, got ${issue.received}${typeof issue.input === "string" ? didYouMean(issue.input, options, synonyms) : ""}`);
}

const text = (what: string) => v.pipe(v.string(`expected ${what} (a string)`), v.minLength(1, `${what} must not be empty`));

const duration = v.pipe(
  v.union([v.string(), v.number()], DURATION_EXPECTED),
  v.check((value) => durationMs(String(value)) !== null, DURATION_EXPECTED),
  v.transform((value) => durationMs(String(value)) ?? 0),
);

const ACTIONS = ["forward", "deny", "approve", "policy"] as const;
export type Action = (typeof ACTIONS)[number];
/** What people write for an action in other tools' policies (Cedar's permit, "ask", "block"). */
const ACTION_SYNONYMS = { allow: "forward", permit: "forward", pass: "forward", accept: "forward", block: "deny", reject: "deny", refuse: "deny", forbid: "deny", ask: "approve", prompt: "approve", confirm: "approve", require_approval: "approve", cedar: "policy" } as const;
const actionChoice = oneOf(ACTIONS, ACTION_SYNONYMS);

const globs = (what: string) => v.array(text(`a ${what} glob`), `expected a list of ${what} globs`);

/**
 * What a server shows the agent. `tools` follow `mode`; `prompts` (names) and `resources` (URIs)
 * follow it too when listed, and are left alone when absent.
 */
const exposeSchema = strict({
  mode: v.optional(oneOf(["all", "allowlist", "blocklist"] as const, { whitelist: "allowlist", blacklist: "blocklist", denylist: "blocklist" }), "all"),
  tools: v.optional(globs("tool name"), []),
  prompts: v.optional(globs("prompt name")),
  resources: v.optional(globs("resource URI")),
});

/**
 * Tool-definition pinning (docs/governance.md, "Pinned definitions"): `strict` hides a changed or
 * flagged definition and refuses its calls until a person accepts it (production); `warn` only
 * logs; `off` neither pins nor checks drift (poisoning findings are still logged). `block_severity`
 * names the lowest finding severity that hides (`none`: nothing hides).
 */

const sourceSchema = strict(
  {
    id: v.pipe(text("a server id"), v.description("the server id it is about (the name in the agent's config, the shim's --server-id)")),
    enabled: v.optional(v.boolean("expected true or false"), true),
    expose: v.optional(exposeSchema, { mode: "all", tools: [] }),
    /** This server's pinning; default `pins.mode`. */
    pin: v.optional(oneOf(PIN_MODES)),
  },
  "source",
);

const pinsSchema = strict({
  /** For servers whose source does not say. */
  mode: v.optional(oneOf(PIN_MODES), "strict"),
  /** Findings at or above this severity hide a definition until a person accepts it. */
  block_severity: v.optional(oneOf([...SEVERITIES, "none"] as const), "high"),
  /** The workflow that asks a person to accept a changed or flagged definition; default every channel, 5 min, deny. */
  approval: v.optional(text("an approval workflow name")),
});

const annotationsFilter = strict({
  readOnlyHint: v.optional(v.boolean("expected true or false")),
  destructiveHint: v.optional(v.boolean("expected true or false")),
  idempotentHint: v.optional(v.boolean("expected true or false")),
  openWorldHint: v.optional(v.boolean("expected true or false")),
});

/**
 * One argument matcher (docs/governance.md, "Rules that see arguments"; engine/argument-match.ts):
 * `{within: DIR}`, `{glob: PATTERN}`, `{equals: VALUE}`, or a string, number or boolean (equality).
 */
export type MatcherConfig = string | number | boolean | { within: string } | { glob: string } | { equals: unknown };
/** A matcher, or a list of them (any one matches). */
export type ArgumentMatcherConfig = MatcherConfig | MatcherConfig[];

const MATCHER_WORDS = "expected {within: DIR}, {glob: PATTERN}, {equals: VALUE}, a string, number or boolean, or a list of these (any one matches)";

/** Why `value` is not one matcher, or null. */
function matcherProblem(value: unknown): string | null {
  if (typeof value === "string" || typeof value === "boolean") return null;
  if (typeof value === "number") return Number.isFinite(value) ? null : MATCHER_WORDS;
  if (value === null || typeof value !== "object" || Array.isArray(value)) return MATCHER_WORDS;
  const keys = Object.keys(value);
  if (keys.length !== 1 || !["within", "glob", "equals"].includes(keys[0] as string)) {
    return `${MATCHER_WORDS}; got a mapping with ${keys.length === 0 ? "no keys" : `keys ${keys.join(", ")}`}`;
  }
  const [key] = keys as [string];
  const inner = (value as Record<string, unknown>)[key];
  if (key === "equals") return inner === undefined ? "equals needs a value" : null;
  if (typeof inner !== "string" || inner === "") return `${key} needs a non-empty string`;
  if (key === "within" && !/^(\/|\$\{(PROJECT|CWD|HOME)\})/.test(inner)) return "within needs an absolute directory (or one starting with ${PROJECT}, ${CWD} or ${HOME})";
  return null;
}

function argumentProblem(value: unknown): string | null {
  if (!Array.isArray(value)) return matcherProblem(value);
  if (value.length === 0) return "an empty list matches nothing; list at least one matcher";
  for (const [i, item] of value.entries()) {
    const problem = matcherProblem(item);
    if (problem) return `[${i}]: ${problem}`;
  }
  return null;
}

const argumentMatcher = v.custom<ArgumentMatcherConfig>(
  (value) => argumentProblem(value) === null,
  (issue) => argumentProblem(issue.input) ?? MATCHER_WORDS,
);

/** `project:` of a rule: an absolute directory (`${HOME}/…` allowed), the session's project it applies to. */
const projectDir = v.pipe(
  text("a project directory"),
  v.check((dir) => /^(\/|\$\{HOME\}(\/|$))/.test(dir), "expected an absolute directory (or one starting with ${HOME}/)"),
);

/**
 * The one program a rule is for: its command line exactly as the shim starts it (what follows
 * `--`), or a remote server's URL without its query. "Always allow" writes it, so the rule allows
 * the server the person saw and not another program a repository names the same.
 */
const serverProgramSchema = v.pipe(
  strict({
    command: v.optional(v.pipe(v.array(v.string("expected the command's words as strings"), "expected a list: the command and its arguments"), v.minLength(1, "the command must not be empty"))),
    url: v.optional(text("a server URL")),
  }),
  v.check((server) => (server.command === undefined) !== (server.url === undefined), "expected exactly one of command or url"),
);

const ruleSchema = strict(
  {
    id: v.optional(text("a rule id")),
    match: v.pipe(text("a tool name glob"), v.description('the tool names it applies to, a glob like "delete_*" ("*" for every tool)')),
    /** Which governed method the rule is for (glob); tools/call by default. */
    method: v.optional(text("a method glob"), "tools/call"),
    source: v.optional(text("a server id glob")),
    server: v.optional(serverProgramSchema),
    /** Only tools whose annotations (from the server's tools/list) have these values. */
    annotations: v.optional(annotationsFilter),
    /** Only calls whose arguments match (each named argument must). */
    arguments: v.optional(v.record(text("an argument name"), argumentMatcher, "expected a mapping of argument names to matchers")),
    /** Only when the session's project is this directory. */
    project: v.optional(projectDir),
    action: v.pipe(actionChoice, v.description(`what to do with a matching call: ${ACTIONS.join(", ")}`)),
    policy_id: v.optional(text("a policy id")),
    approval: v.optional(text("an approval workflow name")),
  },
  "rule",
);

/** Where Slack's Web API is, unless `base_url` says otherwise. */
export const SLACK_API_URL = "https://slack.com/api/";

/**
 * Slack values are checked without echoing them: an error message must never print a token.
 * Slack user ids are U… or W… (Enterprise Grid) followed by upper-case letters and digits.
 */
const slackDestination = strict(
  {
    type: v.literal("slack"),
    /** A channel id (C…, G…) or name; messages are tracked by the id Slack answers with. */
    channel: v.pipe(text("a Slack channel id or name"), v.description("the channel the approvals are posted to (its id, C…, or name)")),
    token: v.pipe(
      text("a Slack bot token"),
      v.check((token) => /^xox[bp]-[\x21-\x7e]+$/.test(token), "expected a Slack bot token (xoxb-…)"),
      v.description("the bot token (xoxb-…), usually ${SLACK_BOT_TOKEN}"),
    ),
    /** An app-level token (xapp-…, scope connections:write): button clicks arrive by Socket Mode. Without one, reactions are read. */
    app_token: v.optional(v.pipe(text("a Slack app-level token"), v.check((token) => /^xapp-[\x21-\x7e]+$/.test(token), "expected a Slack app-level token (xapp-…), the one Socket Mode uses"))),
    approvers: v.pipe(
      v.array(v.pipe(v.string("expected a Slack user id"), v.regex(/^[UW][A-Z0-9]{2,20}$/, "expected a Slack user id like U0123ABCD (its member id, not a name)")), "expected a list of Slack user ids"),
      v.minLength(1, "list at least one Slack user id: only the listed users may decide in Slack"),
      v.description("the Slack member ids (U…) who may decide"),
    ),
    base_url: v.optional(
      v.pipe(text("a URL"), v.check((url) => isSafeUrl(url), "expected an https:// URL (http:// only to 127.0.0.1, [::1] or localhost), without user:password@")),
      SLACK_API_URL,
    ),
  },
  "Slack destination",
);

/**
 * Where a workflow asks: `any` tries every available channel in order (elicitation, web, cli);
 * `slack` posts to a Slack channel as well (the approvals page, the CLI and elicitation still apply).
 */
const destinations = [
  strict({ type: v.literal("any") }),
  strict({ type: v.literal("elicitation") }),
  strict({ type: v.literal("web") }),
  strict({ type: v.literal("cli") }),
  slackDestination,
] as const;
const DESTINATION_TYPES = destinations.map((schema) => schema.entries.type.literal);
const DESTINATION_SYNONYMS = { page: "web", browser: "web", terminal: "cli", command: "cli", agent: "elicitation", form: "elicitation", all: "any" } as const;
const destinationSchema = v.variant(
  "type",
  destinations,
  (issue) =>
    `expected destination.type one of ${DESTINATION_TYPES.join("|")}, got ${issue.received}${typeof issue.input === "string" ? didYouMean(issue.input, DESTINATION_TYPES, DESTINATION_SYNONYMS) : ""}`,
);

const workflowSchema = strict({
  destination: v.optional(destinationSchema, { type: "any" }),
  timeout: v.optional(duration, DEFAULT_APPROVAL_TIMEOUT_MS),
  on_timeout: v.optional(oneOf(["deny", "approve"] as const), "deny"),
});

/**
 * Secret scanning (docs/governance.md, Secret scanning). `scan: results` scans what servers return
 * to the agent (tools/call, resources/read, prompts/get); in production a finding is replaced by
 * `[REDACTED:<kind>]`, in development it is logged `WOULD_REDACT` and forwarded. Per kind: `action`
 * (`redact`, `detect`: logged and forwarded, `off`) and the `replacement` text. Per server id:
 * `scan: off`. What a person is shown and what is logged is redacted whatever this says.
 */
const SCAN_SETTINGS = ["results", "off"] as const;
const KIND_ACTIONS = ["redact", "detect", "off"] as const;

const secretKind = v.picklist(SECRET_KIND_IDS, (issue) => `unknown secret kind ${issue.received}${typeof issue.input === "string" ? didYouMean(issue.input, SECRET_KIND_IDS) : ""}; known kinds: ${SECRET_KIND_IDS.join(", ")}`);

const secretsSchema = strict({
  scan: v.optional(oneOf(SCAN_SETTINGS), "results"),
  kinds: v.optional(
    v.record(
      secretKind,
      strict({
        action: v.optional(oneOf(KIND_ACTIONS)),
        // Spliced into JSON strings as it is: nothing that would need escaping there.
        replacement: v.optional(
          v.pipe(v.string("expected a replacement text"), v.regex(/^[^"\\\u0000-\u001f\u007f]{1,200}$/, "expected 1 to 200 characters without quotes, backslashes or control characters")),
        ),
      }),
      "expected a mapping of secret kinds to settings",
    ),
    {},
  ),
  servers: v.optional(v.record(text("a server id"), strict({ scan: oneOf(SCAN_SETTINGS) }), "expected a mapping of server ids to settings"), {}),
});

export type SecretsConfig = v.InferOutput<typeof secretsSchema>;

/** An HTTP header name (RFC 9110 token). */
const HEADER_NAME = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/;

/**
 * OTLP trace export (docs/governance.md, "Traces"): where spans go, and the headers the collector
 * wants (an API key, usually: `${VAR}` expands here). The standard OTEL_EXPORTER_OTLP_* variables
 * fill in what is not given. Values are never echoed in an error.
 */
const otlpSchema = strict({
  /** The collector's base URL, like OTEL_EXPORTER_OTLP_ENDPOINT (`/v1/traces` is appended). */
  endpoint: v.optional(
    v.pipe(text("a URL"), v.check((url) => isSafeUrl(url), "expected an https:// URL (http:// only to 127.0.0.1, [::1] or localhost), without user:password@")),
  ),
  headers: v.optional(
    v.record(
      v.pipe(v.string(), v.regex(HEADER_NAME, "expected an HTTP header name (letters, digits and !#$%&'*+.^_`|~-)")),
      v.pipe(v.string("expected a header value (a string)"), v.check((value) => !/[\r\n\0]/.test(value), "a header value must not contain line breaks or NUL")),
      "expected a mapping of header names to values",
    ),
  ),
});

/**
 * The organisation's policy (docs/team.md): a signed bundle at an HTTPS URL, the floor under this
 * policy and the project's. `max_stale`: how old the cached copy may be while the URL cannot be
 * reached before every call is refused; `refresh`: how often it is fetched again in the background.
 */
export const organisationSchema = strict({
  url: v.pipe(text("a URL"), v.check((url) => /^https:\/\/[^/@\s]+(\/\S*)?$/.test(url), "expected an https:// URL without user:password@")),
  public_key: v.pipe(text("a public key"), v.regex(/^ed25519:[A-Za-z0-9+/]{43}=$/, "expected an Ed25519 public key as `ed25519:` and 44 base64 characters (what `thoughtgate policy keygen` prints)")),
  max_stale: v.optional(duration, 7 * 24 * 3_600_000),
  refresh: v.optional(duration, 300_000),
});
export type OrganisationConfig = v.InferOutput<typeof organisationSchema>;

export const configSchema = v.pipe(
  strict(
    {
      schema: v.pipe(
        v.literal(1, (issue) => `expected 1 (the only schema version), got ${issue.received}`),
        v.description("the format's version, `schema: 1`, as its first line"),
      ),
      sources: v.optional(v.array(sourceSchema, "expected a list of sources"), []),
      governance: v.optional(
        strict({
          defaults: v.optional(strict({ action: v.optional(actionChoice, "forward") }), { action: "forward" }),
          rules: v.optional(v.array(ruleSchema, "expected a list of rules"), []),
        }),
        { defaults: { action: "forward" }, rules: [] },
      ),
      approval: v.optional(v.record(v.string(), workflowSchema, "expected a mapping of workflow names to workflows"), {}),
      pins: v.optional(pinsSchema, { mode: "strict", block_severity: "high" }),
      cedar: v.optional(
        strict(
          {
            policies: v.pipe(
              v.array(text("a policy file path"), "expected a list of policy file paths"),
              v.minLength(1, "list at least one policy file"),
              v.description("the list of .cedar files"),
            ),
            schema: v.optional(text("a Cedar schema file path")),
          },
          "cedar section",
        ),
      ),
      secrets: v.optional(secretsSchema),
      telemetry: v.optional(strict({ otlp: v.optional(otlpSchema) })),
      /**
       * What the audit records of each call (docs/events.md): `arguments: redacted` (the default:
       * the arguments as a person is shown them, beside their hash) or `hash` (the hash only).
       * Read from the user's policy only (strictest-of.ts).
       */
      audit: v.optional(strict({ arguments: v.optional(oneOf(["redacted", "hash"] as const), "redacted") }, "audit section")),
      /**
       * `thoughtgate approve|deny` (and the approvals link `approvals`/`tasks` print) need a person
       * at a terminal (docs/security.md, "Only a person approves"); `require_terminal: false` lets a
       * script of the user's decide without one. The user's own policy only.
       */
      cli: v.optional(strict({ require_terminal: v.optional(v.boolean("expected true or false"), true) })),
      policy: v.optional(strict({ organisation: v.optional(organisationSchema) })),
    },
    "policy file",
  ),
);

export type ThoughtGateConfig = v.InferOutput<typeof configSchema>;
export type Rule = ThoughtGateConfig["governance"]["rules"][number];
export type Workflow = ThoughtGateConfig["approval"][string];
export type SlackDestination = Extract<Workflow["destination"], { type: "slack" }>;
