import type { Rule, ThoughtGateConfig } from "../../core/config/schema.ts";
import { homedir } from "node:os";
import { join, resolve } from "node:path";
import { AGENT_SOURCE } from "../verdict/agent-tools.ts";

/**
 * Where an agent keeps its hook settings and MCP servers, and ThoughtGate its policy and state: an
 * agent that could change them could switch governance off (docs/governance.md, "Built-in tools").
 */
const PROTECTED_PATHS = [
  { within: "${HOME}/.claude" },
  { within: "${HOME}/.claude.json" },
  { glob: "*/.claude/settings*.json" },
  { glob: "*/.mcp.json" },
  { within: "${HOME}/.codex" },
  { glob: "*/.codex/*" },
  { within: "${HOME}/.gemini" },
  { glob: "*/.gemini/*" },
  { within: "${HOME}/.config/opencode" },
  { glob: "*/.opencode/*" },
  { glob: "*/opencode.json" },
  { glob: "*/opencode.jsonc" },
  { within: "${HOME}/.copilot" },
  { glob: "*/.github/copilot/*" },
  { glob: "*/.github/hooks/*" },
  { within: "${HOME}/.config/thoughtgate" },
  { within: "${HOME}/.local/state/thoughtgate" },
  { glob: "*/thoughtgate.yaml" },
];

/** Files that hold credentials: never read or written by the agent's own tools. */
const SECRET_PATHS = [
  { within: "${HOME}/.ssh" },
  { within: "${HOME}/.aws" },
  { within: "${HOME}/.config/gh" },
  { within: "${HOME}/.gnupg" },
  { within: "${HOME}/.netrc" },
  { within: "${HOME}/.docker/config.json" },
  { within: "${HOME}/.kube" },
  { glob: "*/.env" },
  { glob: "*/.env.*" },
];

/** The same places as they appear in a shell command line (a glob over the whole line: stricter, never looser). */
const PROTECTED_IN_COMMANDS = ["*.claude/*", "*.claude.json*", "*.mcp.json*", "*.codex/*", "*.gemini/*", "*.config/opencode*", "*.opencode/*", "*opencode.json*", "*.copilot/*", "*.github/copilot*", "*.github/hooks*", "*thoughtgate.yaml*", "*/thoughtgate/*", "*.config/thoughtgate*", "*state/thoughtgate*"];
const SECRETS_IN_COMMANDS = ["*.ssh/*", "*/.ssh", "*.aws/*", "*/.aws", "*.config/gh*", "*.gnupg*", "*.netrc*", "*.kube/*", "* .env*", "*/.env*"];

/**
 * Commands that only read, run unasked when every command of a line is one of them (one glob of
 * alternatives: a list of strings matches when every item does, docs/governance.md; a line's
 * writes by redirection are commands of their own, src/shell/shell-commands.ts). Anything not here
 * (deletes, moves, installs, `git push`, `curl`, `sudo`, a script) is asked.
 */
const READ_ONLY_COMMANDS = [
  "ls", "ls *", "cat", "cat *", "head", "head *", "tail", "tail *", "wc", "wc *", "grep *", "rg *", "pwd", "echo", "echo *", "which *", "file *", "stat *",
  "du *", "df *", "tree", "tree *", "cd", "cd *", "true", "false", "date", "whoami", "id", "uname", "uname *", "test *", "[ * ]",
  "[[ * ]]", "basename *", "dirname *", "realpath *", "diff *", "cmp *", "git status", "git status *", "git diff", "git diff *",
  "git log", "git log *", "git show", "git show *", "git branch", "git rev-parse *", "git ls-files", "git ls-files *",
];

const AGENT = { source: AGENT_SOURCE, method: "tools/call" } as const;

/**
 * The agent may not change its own hook settings, MCP configs or ThoughtGate's policy and state
 * through its tools, or the model could switch governance off. A floor under every policy, not only
 * the embedded default: the engine puts these first whatever the policy file says (engine.ts), so a
 * user's policy (one "always" answer writes one) cannot leave them out.
 */
const SELF_PROTECTION_RULES: readonly Rule[] = [
  { id: "agent-self-protection", ...AGENT, match: "{edit,write}", arguments: { path: PROTECTED_PATHS }, action: "deny" },
  { id: "agent-self-protection-shell", ...AGENT, match: "shell", arguments: { command: PROTECTED_IN_COMMANDS.map((glob) => ({ glob })) }, action: "deny" },
];

/**
 * Where the environment moves those places: an agent's settings (`CLAUDE_CONFIG_DIR`, `CODEX_HOME`,
 * `GEMINI_CLI_HOME`, `COPILOT_HOME`, opencode's `XDG_CONFIG_HOME`) and ThoughtGate's policy and state
 * (`XDG_CONFIG_HOME`, `XDG_STATE_HOME`), as the agents and ThoughtGate themselves follow them. A
 * variable that is itself the agent's settings directory is refused by name in a shell line too
 * (`> "$CLAUDE_CONFIG_DIR/settings.json"`); the XDG ones name far more, and the places under them
 * are already in PROTECTED_IN_COMMANDS (opencode's and ThoughtGate's directories by name).
 */
const MOVED_BY: ReadonlyArray<{ variable: string; unmoved: string; places: (dir: string) => string[]; byName: boolean }> = [
  { variable: "CLAUDE_CONFIG_DIR", unmoved: ".claude", places: (dir) => [dir], byName: true },
  { variable: "CODEX_HOME", unmoved: ".codex", places: (dir) => [dir], byName: true },
  { variable: "GEMINI_CLI_HOME", unmoved: "", places: (dir) => [join(dir, ".gemini")], byName: true },
  { variable: "COPILOT_HOME", unmoved: ".copilot", places: (dir) => [dir], byName: true },
  { variable: "XDG_CONFIG_HOME", unmoved: ".config", places: (dir) => [join(dir, "opencode"), join(dir, "thoughtgate")], byName: false },
  { variable: "XDG_STATE_HOME", unmoved: join(".local", "state"), places: (dir) => [join(dir, "thoughtgate")], byName: false },
];

/**
 * The floor under every policy (engine.ts): the rules above, and where `env` moves the places they
 * name, those places too. The process that decides an agent's own call has the agent's environment
 * (the hook, or the session's service, which wrap starts with the environment it gives the agent),
 * and these rules only add refusals, so no environment loosens them.
 */
export function selfProtectionRules(env: Readonly<Record<string, string | undefined>>, cwd: string): readonly Rule[] {
  const home = resolve(env.HOME || homedir());
  // Set to where it is anyway (XDG_CONFIG_HOME=~/.config): the rules above already name it.
  const moved = MOVED_BY.flatMap((entry) => {
    const value = env[entry.variable];
    const dir = value ? resolve(cwd, value) : null;
    return dir === null || dir === join(home, entry.unmoved) ? [] : [{ ...entry, dir }];
  });
  if (moved.length === 0) return SELF_PROTECTION_RULES;
  const places = moved.flatMap(({ dir, places: of }) => of(dir));
  // A path with glob characters in it is left to `within` (the edit and write tools).
  const texts = [...places.filter((place) => !/[*?{]/.test(place)), ...moved.filter(({ byName }) => byName).map(({ variable }) => variable)];
  return [
    ...SELF_PROTECTION_RULES,
    { id: "agent-self-protection-moved", ...AGENT, match: "{edit,write}", arguments: { path: places.map((within) => ({ within })) }, action: "deny" },
    { id: "agent-self-protection-moved-shell", ...AGENT, match: "shell", arguments: { command: texts.map((text) => ({ glob: `*${text}*` })) }, action: "deny" },
  ];
}

function agentRules(): Rule[] {
  const agent = AGENT;
  return [
    ...SELF_PROTECTION_RULES,
    { id: "agent-secret-files", ...agent, match: "{read,edit,write}", arguments: { path: SECRET_PATHS }, action: "deny" },
    { id: "agent-secret-files-shell", ...agent, match: "shell", arguments: { command: SECRETS_IN_COMMANDS.map((glob) => ({ glob })) }, action: "deny" },
    { id: "agent-read-project", ...agent, match: "read", arguments: { path: { within: "${PROJECT}" } }, action: "forward" },
    { id: "agent-read-only-shell", ...agent, match: "shell", arguments: { commands: { glob: `{${READ_ONLY_COMMANDS.join(",")}}` } }, action: "forward" },
    // Their own rule, so that a person's "for this session" covers the edits in the project and no
    // others (a grant of an agent's tool is kept to the rule that asked: approval/session-grants.ts).
    { id: "agent-edit-project", ...agent, match: "{edit,write}", arguments: { path: { within: "${PROJECT}" } }, action: "approve" },
    { id: "agent-ask", ...agent, match: "{shell,read,edit,write,fetch}", action: "approve" },
    { id: "agent-other-tools", ...agent, match: "*", action: "forward" },
  ];
}

/** A rule as one YAML flow mapping (JSON is YAML 1.2 flow; `method: tools/call` is the default and left out). */
function yamlFlow(rule: Rule): string {
  const { method: _method, ...shown } = rule;
  return JSON.stringify(shown).replace(/"([a-z_]+)":/g, "$1: ").replace(/,(?=[a-z_]+: )/g, ", ");
}

/**
 * The embedded default policy, used when no thoughtgate.yaml exists (a first run). From the tool's
 * annotations (the server's own, from its tools/list, or ThoughtGate's catalog hint for a server
 * that declares none: definitions/annotation-catalog.ts):
 * - read-only tools are forwarded;
 * - tools that may destroy something need a person's approval, and so does a tool that declares
 *   nothing (MCP's defaults count it as not read-only, destructive and open-world);
 * - tools that only add, and reach the open world (a GitHub issue, a Slack message: what others
 *   see, and where data leaves the machine), need approval too;
 * - the rest (additive tools on this machine only, such as creating a directory) are forwarded
 *   and audited.
 * Codex's own `exec` mode draws the same line (README: read-only, or non-destructive and
 * closed-world, go without asking).
 *
 * An agent's own tools, announced through its hooks (source `agent`, verdict/agent-tools.ts), come
 * first (agentRules): the agent may not change its own hook settings, MCP configs or ThoughtGate's
 * policy and state, nor touch secret files; reads inside the project and read-only shell commands
 * go through; edits and writes inside the project are asked (a person's "for this session" covers
 * the rest of them); every other shell command, edits and writes outside the project, reads outside
 * the project and web fetches are asked.
 */
export const EMBEDDED_DEFAULT: ThoughtGateConfig = {
  schema: 1,
  sources: [],
  governance: {
    defaults: { action: "forward" },
    rules: [
      ...agentRules(),
      { id: "default-read-only", match: "*", method: "tools/call", annotations: { readOnlyHint: true }, action: "forward" },
      { id: "default-destructive", match: "*", method: "tools/call", annotations: { destructiveHint: true }, action: "approve" },
      { id: "default-open-world", match: "*", method: "tools/call", annotations: { openWorldHint: true }, action: "approve" },
    ],
  },
  approval: {},
  pins: { mode: "strict", block_severity: "high" },
};

export const EMBEDDED_DEFAULT_YAML = `schema: 1
governance:
  defaults: { action: forward }
  rules:
${agentRules()
  .map((rule) => `    - ${yamlFlow(rule)}`)
  .join("\n")}
    - { id: default-read-only, match: "*", annotations: { readOnlyHint: true }, action: forward }
    - { id: default-destructive, match: "*", annotations: { destructiveHint: true }, action: approve }
    - { id: default-open-world, match: "*", annotations: { openWorldHint: true }, action: approve }
`;

/** What the embedded default does, in one line: for banners and `validate-config --explain`. */
export const EMBEDDED_DEFAULT_WORDS =
  "the agent's own tools: its hook settings, MCP configs, ThoughtGate's policy and secret files denied, reads in the project and read-only shell commands forwarded, the rest asked; MCP: read-only tools forwarded; tools that may destroy, tools that write to the open world, and tools that declare nothing (unless ThoughtGate's annotation catalog knows their exact definition) need approval; additive tools on this machine forwarded";
