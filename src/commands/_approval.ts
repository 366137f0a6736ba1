import { defineCommand, type ArgsDef } from "citty";
import { canonicalJson } from "../core/canonical-json.ts";
import { openControllingTerminal } from "../core/controlling-terminal.ts";
import { EXIT, messageOf, ThoughtGateError, usageError } from "../core/errors.ts";
import { showInvisible } from "../core/visible-text.ts";
import { APPROVAL_KEY_ENV, ENDPOINT_ENV, type PersonAtCli, type TaskView } from "../governance/wire/api.ts";
import { ApprovalClient, type ApprovalScope } from "../governance/deciders/approval-client.ts";
import { approvalTargets, sessionName, type SessionTarget } from "../governance/wire/service-descriptor.ts";
import { isSameProcessRunning } from "../core/process-identity.ts";
import { commonArgs, rejectUnknownFlags } from "./_shared.ts";

/** Which service to ask: without them, every running `wrap` or `serve` is looked in. */
export const serviceArgs = {
  endpoint: { type: "string", description: `Ask only this governance service (default $${ENDPOINT_ENV}, else every one running)`, valueHint: "URL" },
  key: { type: "string", description: `Its CLI key (default $${APPROVAL_KEY_ENV}, else found with the running service)`, valueHint: "KEY" },
} as const satisfies ArgsDef;

type ServiceFlags = { endpoint?: string | undefined; key?: string | undefined };

/** The sessions to look in: the one the flags name, else every running one. */
export function sessionsFrom(parsed: ServiceFlags): SessionTarget[] {
  return approvalTargets({ endpoint: parsed.endpoint, key: parsed.key }, isSameProcessRunning);
}

/** A session as a person tells it apart: agent, project, start (or its endpoint, when only flags named it). */
export function sessionLabel(session: SessionTarget): string {
  return printable(session.descriptor ? sessionName(session.descriptor) : session.target.endpoint);
}

/**
 * The session that holds `taskId`, and the task: task ids are unique, so each running session is
 * asked until one has it (with --endpoint, only that one).
 */
async function sessionHolding(parsed: ServiceFlags, taskId: string, person: PersonAtCli): Promise<{ client: ApprovalClient; task: TaskView }> {
  const sessions = sessionsFrom(parsed);
  const only = sessions.length === 1 ? sessions[0] : undefined;
  if (only) {
    const client = new ApprovalClient(only.target);
    return { client, task: await client.get(taskId, person) };
  }
  const unreachable: string[] = [];
  const errors: unknown[] = [];
  for (const session of sessions) {
    const client = new ApprovalClient(session.target);
    try {
      const task = await client.find(taskId, person);
      if (task) return { client, task };
    } catch (error) {
      errors.push(error);
      unreachable.push(`${sessionLabel(session)}: ${messageOf(error)}`);
    }
  }
  // Every session refused for the same reason (no person at a terminal, say): that reason, once.
  const first = errors[0];
  if (errors.length === sessions.length && errors.every((error) => messageOf(error) === messageOf(first))) throw first;
  const failed = unreachable.length > 0 ? `; could not ask ${unreachable.join("; ")}` : "";
  throw new ThoughtGateError("TASK", `no running session holds task ${printable(taskId)} (looked in ${sessions.length}: ${sessions.map(sessionLabel).join("; ")})${failed}`);
}

/** A person sits at this command's terminal (in its foreground): what the service asks before it hands out the page's key or the tasks. */
export function personHere(): PersonAtCli {
  const opened = openControllingTerminal();
  if (!opened.ok) return "none";
  opened.terminal.close();
  return "terminal";
}

/** `thoughtgate approve` and `thoughtgate deny`: the same command but for the verdict. */
export function decisionCommand(decision: "approve" | "deny") {
  const args = {
    "task-id": { type: "positional", required: true, description: "The task, as `thoughtgate tasks` or the service's log shows it" },
    reason: { type: "string", description: "Why (kept with the task)", valueHint: "TEXT" },
    ...(decision === "approve"
      ? {
          session: { type: "boolean", description: "Allow this tool on this server with any arguments until the session ends, not only this call" },
          always: { type: "boolean", description: "Always allow this tool on this server: a rule in your policy file, kept to this session's project" },
          everywhere: { type: "boolean", description: "With --always: the rule applies in every project" },
        }
      : {}),
    ...serviceArgs,
    ...commonArgs,
  } as const satisfies ArgsDef;
  return defineCommand({
    meta: { name: decision, description: `${decision === "approve" ? "Approve" : "Deny"} a call waiting for approval in a running governance service` },
    args,
    async run({ rawArgs, args: parsed }) {
      rejectUnknownFlags(rawArgs, args);
      // `wrap` runs the agent with THOUGHTGATE_ACTIVE=1: an agent that runs `thoughtgate approve`
      // (because a log line told it how, or a prompt injection did) must not approve its own calls.
      if (decision === "approve" && process.env.THOUGHTGATE_ACTIVE === "1") {
        throw new ThoughtGateError("CONFIG", "thoughtgate approve refuses to run inside an agent that thoughtgate wrap governs (THOUGHTGATE_ACTIVE=1): approve from your own terminal or the approvals page");
      }
      const scope = scopeOf(parsed as ScopeFlags);
      const { client, task: shown } = await sessionHolding(parsed, parsed["task-id"], personHere());
      if (shown.status !== "pending") throw new ThoughtGateError("TASK", `task ${shown.task_id} is already ${shown.status.replace("_", " ")}`);
      // A person confirms on the terminal, seeing what they decide; the service checks who asked.
      const person = confirmAtTerminal(shown, decision, scope);
      const task = await client.decide(shown, decision, parsed.reason, scope, person);
      const widened =
        task.scope === "session" ? " (and every call of it until the session ends)" : task.scope === "always" ? (task.always_scope === "everywhere" ? " (and always, everywhere: a rule in your policy file)" : " (and always, in this project: a rule in your policy file)") : "";
      await Bun.write(Bun.stdout, `${task.status} ${task.task_id}: ${callLabel(task)}${widened}\n`);
      return EXIT.ok;
    },
  });
}

/** Arguments shown in the question, at most this long (the approvals page shows them whole). */
const QUESTION_ARGUMENTS_CHARS = 400;

/**
 * Ask the person at the controlling terminal (docs/security.md, "Only a person approves"): what
 * the decision is about, then one line typed after the question was shown. No terminal (an agent's
 * shell tool has none): `none`, and the service says whether the user's own policy lets that decide.
 * Anything but y/yes decides nothing.
 */
function confirmAtTerminal(task: TaskView, decision: "approve" | "deny", scope: ApprovalScope): PersonAtCli {
  const opened = openControllingTerminal();
  if (!opened.ok) return "none";
  const { terminal } = opened;
  try {
    const args = canonicalJson(task.arguments);
    const shownArgs = args.length > QUESTION_ARGUMENTS_CHARS ? `${args.slice(0, QUESTION_ARGUMENTS_CHARS)}… (the approvals page shows all)` : args;
    const what = decision === "deny" ? "Deny" : scopeWords(scope);
    const answer = terminal.ask(`thoughtgate: task ${task.task_id}: ${callLabel(task)} ${printable(shownArgs)}\n  ${printable(task.reason)}\n${what}? Type y and Enter to confirm: `);
    if (answer === null || !["y", "yes"].includes(answer.trim().toLowerCase())) {
      throw new ThoughtGateError("TASK", `not confirmed: nothing decided, task ${task.task_id} still waits`);
    }
    return "terminal";
  } finally {
    terminal.close();
  }
}

function scopeWords(scope: ApprovalScope): string {
  if (scope.scope === "session") return "Allow for this session (this tool on this server, any arguments)";
  if (scope.scope === "always") return `Always allow (this tool on this server, any arguments; a rule in your policy file, ${scope.alwaysScope === "everywhere" ? "every project" : "this project"})`;
  return "Allow once";
}

type ScopeFlags = { session?: boolean; always?: boolean; everywhere?: boolean };

/** `--session`, `--always [--everywhere]` or neither (once); combinations that say two things are usage errors. */
function scopeOf(flags: ScopeFlags): ApprovalScope {
  if (flags.session && flags.always) throw usageError("--session and --always say two different things: give one");
  if (flags.everywhere && !flags.always) throw usageError("--everywhere goes with --always (the rule applies in every project)");
  if (flags.always) return { scope: "always", alwaysScope: flags.everywhere ? "everywhere" : "project" };
  return { scope: flags.session ? "session" : "once" };
}

/** `github.delete_repo`, or `fs resources/read file:///x` for other methods; control characters shown escaped. */
export function callLabel(task: Pick<TaskView, "server_id" | "method" | "name" | "definition">): string {
  const label = task.method === "tools/call" ? `${task.server_id}.${task.name}` : task.definition ? `accept the ${task.definition.status} definition of ${task.server_id}.${task.name}` : `${task.server_id} ${task.method} ${task.name}`;
  return printable(label);
}

/**
 * Names and arguments come from agents and servers: an escape sequence in them must not drive the
 * user's terminal, and bidi, zero-width or tag characters must not disguise them, so all of these
 * are printed as escapes (src/core/visible-text.ts).
 */
export function printable(text: string): string {
  return showInvisible(text);
}
