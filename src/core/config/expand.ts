/**
 * `${VAR}` and `${VAR:-default}`, expanded only where a value is read by ThoughtGate itself and
 * never sent to an agent or an MCP server. Rule ids, reasons, workflow and source names go back to
 * the agent in a denial's `error.data` and the approval prompt, so a `${VAR}` there would hand the
 * user's environment (tokens, keys) to whoever wrote the file: anywhere but `EXPANDED_IN` it is an
 * error naming the field. A project policy (a `thoughtgate.yaml` in the working directory, that
 * is, whatever repository was cloned) expands nothing at all: paired with a setting that sends
 * data somewhere (an OTLP header, a Slack token) it would carry the user's secrets to that
 * repository's author. An unset variable without a default is an error naming the field, never an
 * empty string: an empty token or path would fail later and further from its cause.
 */
const REFERENCE = /\$\{([A-Za-z_][A-Za-z0-9_]*)(?::-([^}]*))?\}/g;

/**
 * The fields that expand: `*` is any mapping key, `[]` any list index. A Slack destination's
 * `base_url` is not here: where a token is sent is written out, never taken from the environment.
 * An OTLP endpoint is (the collector's address is commonly an environment setting, as
 * OTEL_EXPORTER_OTLP_ENDPOINT is), but only in the user's own policy, and only to https or
 * loopback (schema.ts).
 */
const EXPANDED_IN: readonly (readonly string[])[] = [
  ["cedar", "policies", "[]"],
  ["cedar", "schema"],
  ["telemetry", "otlp", "endpoint"],
  ["telemetry", "otlp", "headers", "*"],
  ["approval", "*", "destination", "token"],
  ["approval", "*", "destination", "channel"],
  ["approval", "*", "destination", "app_token"],
];

const EXPANDED_IN_WORDS = "cedar.policies, cedar.schema, telemetry.otlp.endpoint, telemetry.otlp.headers, approval.<name>.destination.token, approval.<name>.destination.app_token and approval.<name>.destination.channel";

/** Which file this is: the user's own (or one given explicitly), or a project's. */
export type Layer = "user" | "project";

export type ExpandProblem = { path: string; message: string };

type Segment = string | number;

export function expandEnv(value: unknown, env: NodeJS.ProcessEnv, layer: Layer, problems: ExpandProblem[] = [], at: Segment[] = []): unknown {
  if (typeof value === "string") return expandString(value, env, layer, at, problems);
  if (Array.isArray(value)) return value.map((item, i) => expandEnv(item, env, layer, problems, [...at, i]));
  if (value !== null && typeof value === "object") {
    return Object.fromEntries(Object.entries(value).map(([key, item]) => [key, expandEnv(item, env, layer, problems, [...at, key])]));
  }
  return value;
}

/**
 * Where a rule names the call's place (docs/governance.md, "Rules that see arguments"): these are
 * left as they are, for the engine to fill in per call from the session, in every policy file (a
 * project's too: they read nothing of the environment); any other `${…}` there is an error.
 */
const PLACE_FIELDS: ReadonlyArray<{ at: (at: Segment[]) => boolean; names: readonly string[]; words: string }> = [
  { at: (at) => ruleField(at, "arguments"), names: ["PROJECT", "CWD", "HOME"], words: "${PROJECT}, ${CWD} and ${HOME}" },
  { at: (at) => ruleField(at, "project") && at.length === 4, names: ["HOME"], words: "${HOME}" },
];

function ruleField(at: Segment[], field: string): boolean {
  return at[0] === "governance" && at[1] === "rules" && typeof at[2] === "number" && at[3] === field;
}

function expandString(value: string, env: NodeJS.ProcessEnv, layer: Layer, at: Segment[], problems: ExpandProblem[]): string {
  const references = [...value.matchAll(REFERENCE)].map((match) => match[0]);
  if (references.length === 0) return value;
  const path = fieldPath(at);
  const place = PLACE_FIELDS.find((field) => field.at(at));
  if (place) {
    const others = references.filter((reference) => !place.names.some((name) => reference === `\${${name}}`));
    if (others.length > 0) problems.push({ path, message: `only ${place.words} are filled in here, per session and never from the environment (found ${others.join(", ")})` });
    return value;
  }
  if (layer === "project") {
    problems.push({ path, message: `environment variables are not expanded in a project policy (found ${references.join(", ")}); write the value itself` });
    return value;
  }
  if (!EXPANDED_IN.some((pattern) => matches(pattern, at))) {
    problems.push({ path, message: `environment variables are only expanded in ${EXPANDED_IN_WORDS} (found ${references.join(", ")})` });
    return value;
  }
  return value.replace(REFERENCE, (whole, name: string, fallback: string | undefined) => {
    const found = env[name];
    if (found !== undefined && found !== "") return found;
    if (fallback !== undefined) return fallback;
    problems.push({ path, message: `environment variable ${name} is not set (write \${${name}:-default} to give a default)` });
    return whole;
  });
}

function matches(pattern: readonly string[], at: Segment[]): boolean {
  if (pattern.length !== at.length) return false;
  return pattern.every((part, i) => {
    const segment = at[i];
    if (part === "[]") return typeof segment === "number";
    return typeof segment === "string" && (part === "*" || part === segment);
  });
}

/** `governance.rules[0].id`, as valibot's issues are reported. */
function fieldPath(at: readonly Segment[]): string {
  let out = "";
  for (const segment of at) out += typeof segment === "number" ? `[${segment}]` : out ? `.${segment}` : segment;
  return out || "(root)";
}
