/**
 * Mistakes people make in Cedar policies for ThoughtGate, each of which once loaded and then
 * decided nothing (a permit that never applies, a forbid that never fires, every call refused
 * "no Cedar policy permits it"). Each must be refused when the policy is loaded, at the place of
 * the mistake: `at` is the text Cedar points at (its first occurrence in the file), `message`
 * what the error must say. Used by cedar-mistakes.test.ts (the engine) and
 * test/e2e/cedar-mistakes.test.ts (`thoughtgate validate-config`, `thoughtgate shim`).
 */
export type CedarMistake = {
  name: string;
  /** The policy file's text. */
  policy: string;
  /** The `cedar.schema` file's text (the argument types); absent: none. */
  schema?: string;
  /** Which file the error is in. */
  file?: "policy" | "schema";
  at: string;
  message: RegExp;
};

const ARGUMENTS = "namespace ThoughtGate { type Arguments = { path?: String, limit?: Long }; }\n";
const TOOLS = 'action == ThoughtGate::Action::"tools/call"';

export const CEDAR_MISTAKES: CedarMistake[] = [
  {
    name: "a misspelt attribute of the resource",
    policy: `@id("no-etc")\nforbid (principal, ${TOOLS}, resource)\nwhen { resource.argument.path like "/etc/*" };\n`,
    schema: ARGUMENTS,
    at: "resource.argument.path",
    message: /attribute `argument` on entity type `ThoughtGate::ToolCall` not found: did you mean `arguments`\?/,
  },
  {
    name: "a misspelt attribute of the context",
    policy: `@id("here")\npermit (principal, ${TOOLS}, resource)\nwhen { context.projet == "/src/app" };\n`,
    at: "context.projet",
    message: /attribute `projet`.*not found: did you mean `project`\?/,
  },
  {
    name: "a misspelt argument",
    policy: `@id("small")\npermit (principal, ${TOOLS}, resource)\nwhen { resource.arguments has limt && resource.arguments.limt < 10 };\n`,
    schema: ARGUMENTS,
    at: "@id",
    message: /policy is impossible/,
  },
  {
    name: "an argument the schema does not declare",
    policy: `@id("no-etc")\nforbid (principal, ${TOOLS}, resource)\nwhen { resource.arguments has path && resource.arguments.path like "/etc/*" };\n`,
    at: "@id",
    message: /policy is impossible[\s\S]*tool arguments have no declared shape/,
  },
  {
    name: "an optional argument read without `has`",
    policy: `@id("no-etc")\nforbid (principal, ${TOOLS}, resource)\nwhen { resource.arguments.path like "/etc/*" };\n`,
    schema: ARGUMENTS,
    at: "resource.arguments.path",
    message: /unable to guarantee safety of access to optional attribute `arguments.path`/,
  },
  {
    name: "an action without its namespace",
    policy: `@id("reads")\npermit (principal, action == Action::"tools/call", resource)\nwhen { resource.name like "read_*" };\n`,
    at: 'Action::"tools/call"',
    message: /unrecognized action `Action::"tools\/call"`: did you mean `ThoughtGate::Action::"tools\/call"`\?/,
  },
  {
    name: "a misspelt action",
    policy: `@id("reads")\npermit (principal, action == ThoughtGate::Action::"tool/call", resource);\n`,
    at: 'ThoughtGate::Action::"tool/call"',
    message: /unrecognized action `ThoughtGate::Action::"tool\/call"`: did you mean `ThoughtGate::Action::"tools\/call"`\?/,
  },
  {
    name: "a misspelt namespace",
    policy: `@id("reads")\npermit (principal, action == Thoughtgate::Action::"tools/call", resource);\n`,
    at: 'Thoughtgate::Action::"tools/call"',
    message: /unrecognized action `Thoughtgate::Action::"tools\/call"`/,
  },
  {
    name: "a principal without its namespace",
    policy: `@id("alice")\npermit (principal == App::"alice", action, resource);\n`,
    at: "App",
    message: /unrecognized entity type `App`: did you mean `ThoughtGate::App`\?/,
  },
  {
    name: "a misspelt entity type",
    policy: `@id("tools")\npermit (principal, action, resource is ThoughtGate::Toolcall);\n`,
    at: "ThoughtGate::Toolcall",
    message: /unrecognized entity type `ThoughtGate::Toolcall`: did you mean `ThoughtGate::ToolCall`\?/,
  },
  {
    name: "a number compared with a string",
    policy: `@id("morning")\npermit (principal, action, resource)\nwhen { context.time.hour < "9" };\n`,
    at: '"9"',
    message: /unexpected type: expected Long but saw String/,
  },
  {
    name: "a string compared with a number",
    policy: `@id("named")\npermit (principal, action, resource)\nwhen { resource.name == 3 };\n`,
    at: "resource.name == 3",
    message: /the types Long and String are not compatible/,
  },
  {
    name: "the principal compared with a resource's type",
    policy: `@id("who")\nforbid (principal, action, resource)\nwhen { principal == ThoughtGate::ToolCall::"github/delete_repo" };\n`,
    at: "@id",
    message: /policy is impossible/,
  },
  {
    name: "a syntax error (a missing parenthesis)",
    policy: `@id("reads")\npermit (principal, action, resource\nwhen { resource.name like "read_*" };\n`,
    at: "when",
    message: /unexpected token `when`/,
  },
  {
    name: "a misspelt type in the schema",
    policy: `@id("no-etc")\nforbid (principal, ${TOOLS}, resource)\nwhen { resource.arguments has path && resource.arguments.path like "/etc/*" };\n`,
    schema: "namespace ThoughtGate {\n  type Arguments = { path?: Strin };\n}\n",
    file: "schema",
    at: "Strin",
    message: /Strin/,
  },
  {
    name: "a schema that redefines ThoughtGate's entities",
    policy: `@id("all")\npermit (principal, action, resource);\n`,
    schema: "namespace ThoughtGate {\n  entity Server;\n}\n",
    file: "schema",
    at: "",
    message: /declares entity Server: ThoughtGate's own schema defines the entities and actions/,
  },
];

/** `file:line:column` of the first occurrence of `at` in `text` (the start of the file for ""). */
export function placeOf(file: string, text: string, at: string): string {
  const offset = at === "" ? 0 : text.indexOf(at);
  if (offset < 0) throw new Error(`${JSON.stringify(at)} is not in the text`);
  const before = text.slice(0, offset);
  return `${file}:${before.split("\n").length}:${offset - (before.lastIndexOf("\n") + 1) + 1}`;
}
