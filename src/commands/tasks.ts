import { defineCommand } from "citty";
import { briefArguments } from "../core/brief-arguments.ts";
import { EXIT } from "../core/errors.ts";
import { showInvisibleInJson } from "../core/visible-text.ts";
import type { GrantView, TaskView } from "../governance/wire/api.ts";
import { messageOf } from "../core/errors.ts";
import { ApprovalClient } from "../governance/deciders/approval-client.ts";
import { callLabel, personHere, printable, serviceArgs, sessionLabel, sessionsFrom } from "./_approval.ts";
import { commonArgs, rejectUnknownFlags } from "./_shared.ts";

const args = {
  json: { type: "boolean", description: "Print the tasks as JSON" },
  all: { type: "boolean", description: "Include decided, timed-out and cancelled tasks" },
  ...serviceArgs,
  ...commonArgs,
} as const;

/** The table's ARGUMENTS column; longer arguments say so and where to read them whole. */
const ARGUMENTS_CHARS = 60;

export default defineCommand({
  meta: { name: "tasks", description: "List the calls waiting for approval in every running governance service" },
  args,
  async run({ rawArgs, args: parsed }) {
    rejectUnknownFlags(rawArgs, args);
    const sessions = sessionsFrom(parsed);
    const person = personHere();
    const several = sessions.length > 1;
    const listed: Array<TaskView & { session?: string }> = [];
    const parts: string[] = [];
    for (const session of sessions) {
      const client = new ApprovalClient(session.target);
      let overview: Awaited<ReturnType<ApprovalClient["overview"]>>;
      try {
        overview = await client.overview(person);
      } catch (error) {
        // One session that cannot be asked hides no other's tasks; alone, it is the command's error.
        if (!several) throw error;
        parts.push(`${sessionLabel(session)}: ${messageOf(error)}\n`);
        continue;
      }
      const tasks = parsed.all ? overview.tasks : overview.tasks.filter((task) => task.status === "pending");
      listed.push(...tasks.map((task) => (several ? { ...task, session: sessionLabel(session) } : task)));
      const text = render(tasks, parsed.all === true) + renderGrants(overview.grants) + (await pageLine(client));
      parts.push(several ? `${sessionLabel(session)}:\n${indent(text)}` : text);
    }
    // JSON escapes for invisible characters: the same values, nothing hidden in the terminal.
    await Bun.write(Bun.stdout, parsed.json ? `${showInvisibleInJson(JSON.stringify(listed, null, 2))}\n` : parts.join("\n"));
    return EXIT.ok;
  },
});

function indent(text: string): string {
  return text
    .split("\n")
    .map((line) => (line === "" ? line : `  ${line}`))
    .join("\n");
}


function render(tasks: TaskView[], all: boolean): string {
  if (tasks.length === 0) return all ? "no approval tasks\n" : "no calls are waiting for approval\n";
  const now = Date.now();
  const rows = tasks.map((task) => [
    task.task_id,
    task.status,
    callLabel(task),
    printable(task.rule_id ?? "-"),
    task.status === "pending" ? timeLeft(Date.parse(task.expires_at) - now) : printable(task.decided_by ?? "-"),
    shortArguments(task.arguments),
  ]);
  const header = ["TASK", "STATUS", "CALL", "RULE", all ? "LEFT / BY" : "LEFT", "ARGUMENTS"];
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((row) => (row[i] ?? "").length)));
  const line = (cells: string[]) => cells.map((cell, i) => (i === cells.length - 1 ? cell : cell.padEnd(widths[i] ?? 0))).join("  ");
  const footer = tasks.some((t) => t.status === "pending") ? "\nthoughtgate approve <task> [--session | --always [--everywhere]] | thoughtgate deny <task> [--reason TEXT]\n" : "";
  return `${[line(header), ...rows.map(line)].join("\n")}\n${footer}`;
}

/** The session's "allow for this session" grants, after the tasks. */
function renderGrants(grants: GrantView[]): string {
  if (grants.length === 0) return "";
  const lines = grants.map((grant) => {
    const call = callLabel({ server_id: grant.server_id, method: grant.method, name: grant.name });
    return `  ${call}  (task ${grant.task_id}, by ${printable(grant.granted_by)}; ${grant.uses} call${grant.uses === 1 ? "" : "s"} since)`;
  });
  return `\nallowed for this session:\n${lines.join("\n")}\n`;
}

/**
 * The approvals page's link, as `thoughtgate approvals` prints it, for a person at a terminal (it
 * carries the page's key: a script or an agent's shell tool gets the table alone); where the
 * service does not hand it out even so, why.
 */
async function pageLine(client: ApprovalClient): Promise<string> {
  if (personHere() !== "terminal") return "";
  try {
    return `\napprovals page (keep it private): ${await client.pageLink("terminal")}\n`;
  } catch (error) {
    return `\napprovals page: not shown here (${messageOf(error)})\n`;
  }
}

function timeLeft(ms: number): string {
  if (ms <= 0) return "expiring";
  const seconds = Math.ceil(ms / 1000);
  return seconds >= 60 ? `${Math.floor(seconds / 60)}m ${String(seconds % 60).padStart(2, "0")}s` : `${seconds}s`;
}

/** The path, URL or query kept whole where it can be, the bulk cut first (src/core/brief-arguments.ts). */
function shortArguments(args: unknown): string {
  const brief = briefArguments(args, ARGUMENTS_CHARS);
  return brief.complete ? brief.text : `${brief.text} (--json shows all)`;
}
