import type { DetailedError, NamespaceDefinition, SchemaJson, ValidationError } from "@cedar-policy/cedar-wasm/web";
import { ThoughtGateError } from "../../core/errors.ts";
import { loadCedar } from "./cedar-wasm.ts";

/**
 * ThoughtGate's own Cedar schema: the entities, actions and context the Cedar gate builds
 * (cedar.ts), so every policy is validated against what it will really see and a misspelt
 * attribute, a missing namespace or an unknown action is an error at load, never a policy that
 * silently denies (or permits) nothing at run time (docs/governance.md, "Cedar").
 *
 * The one thing ThoughtGate cannot know is the shape of a tool's arguments (every tool has its
 * own); Cedar has no open records, so `Arguments` is empty unless the policy's `cedar.schema` file
 * declares it: `namespace ThoughtGate { type Arguments = { path?: String }; }`. That file may
 * declare types in the ThoughtGate namespace and nothing else.
 */
const THOUGHTGATE_SCHEMA = `namespace ThoughtGate {
  entity App;
  type Time = { hour: Long, day_of_week: Long, timestamp: Long };
  type Context = { policy_id: String, source_id: String, project: String, cwd: String, time: Time };
  entity ToolCall = { name: String, server: String, method: String, arguments: Arguments };
  entity McpMethod = { name: String, server: String, method: String, arguments: Arguments };
  action "tools/call" appliesTo { principal: App, resource: ToolCall, context: Context };
  action "mcp/method" appliesTo { principal: App, resource: McpMethod, context: Context };
}
`;

const NAMESPACE = "ThoughtGate";
const ARGUMENTS = "Arguments";


/** A text's file, for messages that point into it. */
export type SourceText = { file: string; text: string };

/** Our declarations, inside the namespace (the `cedar.schema` file's go after them). */
const OWN_BODY = THOUGHTGATE_SCHEMA.slice(THOUGHTGATE_SCHEMA.indexOf("{") + 1, THOUGHTGATE_SCHEMA.lastIndexOf("}"));
const OWN_ENTITIES = ["App", "ToolCall", "McpMethod"];
const OWN_ACTIONS = ["tools/call", "mcp/method"];

/**
 * The schema policies are validated against: ThoughtGate's, with the `cedar.schema` file's types
 * (`Arguments` and the types it uses) declared in the same namespace, so they may name `App`.
 * Throws a CONFIG error naming file:line:column.
 */
function validationSchema(extra: SourceText | null): { schema: SchemaJson<string>; declaresArguments: boolean } {
  const cedar = loadCedar();
  const body = extra ? namespaceBody(extra) : null;
  const prefix = `namespace ${NAMESPACE} {${OWN_BODY}\n`;
  const theirs = body && extra ? extra.text.slice(body.start, body.end) : "";
  const declaresArguments = new RegExp(`(^|[\\s;{}])type\\s+${ARGUMENTS}\\s*=`).test(theirs);
  // Without theirs, tool arguments are an empty record: a policy reading one is refused with a hint.
  const parsed = cedar.schemaToJson(`${prefix}${theirs}\n${declaresArguments ? "" : `type ${ARGUMENTS} = {};`}\n}\n`);
  if (parsed.type !== "success") {
    // Our own text parses (its tests say so): what fails is the file's part, at its own place.
    if (!extra || !body) throw new Error(`ThoughtGate's Cedar schema does not parse: ${parsed.errors.map((e) => e.message).join("; ")}`);
    const shift = Buffer.byteLength(extra.text.slice(0, body.start)) - Buffer.byteLength(prefix);
    throw new ThoughtGateError("CONFIG", parsed.errors.map((e) => located(extra, placed(shifted(e, shift), extra.text, body.start))).join("\n"));
  }
  const schema = parsed.json;
  const own = schema[NAMESPACE] as NamespaceDefinition<string>;
  const added = [
    ...Object.keys(own.entityTypes).filter((e) => !OWN_ENTITIES.includes(e)).map((e) => `entity ${e}`),
    ...Object.keys(own.actions).filter((a) => !OWN_ACTIONS.includes(a)).map((a) => `action "${a}"`),
  ];
  if (extra && added.length > 0) {
    throw new ThoughtGateError(
      "CONFIG",
      `${extra.file}: declares ${added.join(", ")}: ThoughtGate's own schema defines the entities and actions (docs/governance.md, Cedar); keep only types, such as \`type ${ARGUMENTS} = { path?: String };\``,
    );
  }
  return { schema, declaresArguments };
}

/**
 * Where the declarations of `namespace ThoughtGate { … }` are in the file: the one thing it may
 * hold (comments around it aside).
 */
function namespaceBody(source: SourceText): { start: number; end: number } {
  const text = source.text;
  const fail = (at: number, what: string): never => {
    throw new ThoughtGateError("CONFIG", `${lineColumn(source, at)}: ${what}; the file holds \`namespace ${NAMESPACE} { type ${ARGUMENTS} = { … }; }\` and nothing else (docs/governance.md, Cedar)`);
  };
  const skip = (from: number): number => {
    let i = from;
    for (;;) {
      while (i < text.length && /\s/.test(text[i] as string)) i++;
      if (!text.startsWith("//", i)) return i;
      const end = text.indexOf("\n", i);
      i = end < 0 ? text.length : end + 1;
    }
  };
  const head = new RegExp(`^namespace\\s+${NAMESPACE}\\s*\\{`).exec(text.slice(skip(0)));
  if (!head) return fail(skip(0), `expected \`namespace ${NAMESPACE} {\``);
  const start = skip(0) + head[0].length;
  let depth = 1;
  for (let i = start; i < text.length; i++) {
    const c = text[i];
    if (c === '"') {
      for (i++; i < text.length && text[i] !== '"'; i++) if (text[i] === "\\") i++;
    } else if (c === "/" && text[i + 1] === "/") {
      const end = text.indexOf("\n", i);
      i = end < 0 ? text.length : end;
    } else if (c === "{") depth++;
    else if (c === "}" && --depth === 0) {
      if (skip(i + 1) < text.length) return fail(skip(i + 1), "something follows the namespace");
      return { start, end: i };
    }
  }
  return fail(text.length, "the namespace is not closed");
}

/**
 * Cedar says where most schema errors are, but not an unresolved type ("failed to resolve type:
 * Strin" comes with the span 0..5, the name's length at the text's start): that one is placed at
 * the first use of the name in the file's declarations.
 */
function placed(error: DetailedError, text: string, from: number): DetailedError {
  const name = /failed to resolve types?: ([\w:]+)/.exec(error.message)?.[1];
  if (!name) return error;
  const found = new RegExp(`(?<![\\w:])${name.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")}(?![\\w:])`).exec(text.slice(from));
  if (!found) return error;
  const start = Buffer.byteLength(text.slice(0, from + found.index));
  return { ...error, sourceLocations: [{ label: null, start, end: start + Buffer.byteLength(name) }] };
}

function shifted(error: DetailedError, bytes: number): DetailedError {
  return { ...error, sourceLocations: (error.sourceLocations ?? []).map((l) => ({ ...l, start: Math.max(0, l.start + bytes), end: Math.max(0, l.end + bytes) })) };
}

/** A set with hundreds of mistakes (one typo copied everywhere) lists this many and counts the rest. */
const MAX_LISTED = 20;

/** Where each policy is: its file, that file's text, and where the policy starts in it. */
export type PolicySource = SourceText & { start: number };

/**
 * Validate the policies against the schema (strict mode). Every error and every warning is a
 * problem: Cedar warns of a policy that can never apply ("policy is impossible", an action no
 * scope admits), which is exactly a policy that would silently do nothing. Throws one CONFIG
 * error listing each as `file:line:column: policy ID: message`.
 */
export function validatePolicies(policies: Map<string, string>, sources: Map<string, PolicySource>, extra: SourceText | null): void {
  const cedar = loadCedar();
  const { schema, declaresArguments } = validationSchema(extra);
  const answer = cedar.validate({ schema, policies: { staticPolicies: Object.fromEntries(policies) }, validationSettings: { mode: "strict" } });
  if (answer.type === "failure") throw new ThoughtGateError("CONFIG", `Cedar could not validate the policies: ${answer.errors.map((e) => e.message).join("; ")}`);
  const found = [...answer.validationErrors, ...answer.validationWarnings];
  if (found.length === 0) return;
  const lines: string[] = [];
  const seen = new Set<string>();
  // Errors first, in file order; one line per place (Cedar says it once per entity type).
  const ordered = found
    .map((problem) => ({ problem, at: where(problem, sources) }))
    .sort((a, b) => (a.at.file === b.at.file ? a.at.offset - b.at.offset : a.at.file < b.at.file ? -1 : 1));
  for (const { problem, at } of ordered) {
    const key = `${problem.policyId}:${at.offset}`;
    if (seen.has(key)) continue;
    seen.add(key);
    if (seen.size <= MAX_LISTED) lines.push(`${at.label}: policy ${problem.policyId}: ${plain(problem.error)}`);
  }
  if (seen.size > MAX_LISTED) lines.push(`  … and ${seen.size - MAX_LISTED} more`);
  const aboutArguments = !declaresArguments && found.some((problem) => /arguments/.test(problem.error.message) || /impossible/.test(problem.error.message));
  if (aboutArguments) {
    lines.push(
      `  tool arguments have no declared shape: declare the ones your policies read in the file cedar.schema names, e.g. \`namespace ${NAMESPACE} { type ${ARGUMENTS} = { path?: String }; }\`, and test optional ones with \`has\``,
    );
  }
  throw new ThoughtGateError("CONFIG", `Cedar policies that would not do what they say (${seen.size}):\n${lines.join("\n")}`);
}

/** A parse error of a text, at its place: `file:line:column: message`. */
export function located(source: SourceText, error: DetailedError, start = 0): string {
  const location = error.sourceLocations?.[0];
  const offset = location === undefined ? start : start + charOffset(source.text.slice(start), location.start);
  return `${lineColumn(source, offset)}: ${plain(error)}`;
}

function where(problem: ValidationError, sources: Map<string, PolicySource>): { label: string; file: string; offset: number } {
  const source = sources.get(problem.policyId);
  if (!source) return { label: "(policies)", file: "", offset: 0 };
  const location = problem.error.sourceLocations?.[0];
  const offset = source.start + (location === undefined ? 0 : charOffset(source.text.slice(source.start), location.start));
  return { label: lineColumn(source, offset), file: source.file, offset };
}

/** Cedar's offsets count UTF-8 bytes; JavaScript's strings count UTF-16 units. */
function charOffset(text: string, bytes: number): number {
  return Buffer.from(text, "utf8").subarray(0, bytes).toString("utf8").length;
}

function lineColumn(source: SourceText, offset: number): string {
  const before = source.text.slice(0, offset);
  const line = before.split("\n").length;
  const column = offset - (before.lastIndexOf("\n") + 1) + 1;
  return `${source.file}:${line}:${column}`;
}

/** Cedar's message with its help, on one line ("for policy `p0`, " is said by the caller already). */
function plain(error: DetailedError): string {
  const message = error.message.replace(/^for policy `[^`]*`, /, "");
  const label = error.sourceLocations?.[0]?.label;
  const help = error.help ? error.help.replace(/^for policy `[^`]*`, /, "") : null;
  return [message, label ? `(${label})` : null, help ? `: ${help}` : null].filter((part) => part !== null).join(" ").replace(" : ", ": ");
}
