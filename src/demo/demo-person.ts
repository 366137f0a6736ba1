import { messageOf } from "../core/errors.ts";
import { ApprovalClient } from "../governance/deciders/approval-client.ts";
import type { TaskView } from "../governance/wire/api.ts";
import { findServices } from "../governance/wire/service-descriptor.ts";

/**
 * The demo's second route: the person who answers where an agent that cannot ask (`claude -p`)
 * sends them. While the demo's wrap runs in this process, it finds its own service the way
 * `thoughtgate tasks` does (the service descriptor, here the one of this pid), waits for the call
 * the agent could not ask about, and then runs what a person would type in another terminal —
 * `thoughtgate tasks`, `thoughtgate approve <task>` — with the real binary, printing what they print.
 *
 * Which task is that call: the first one still pending after another was decided (the agent's own
 * form decides the first; the demo agent makes its calls one at a time).
 *
 * `thoughtgate approve` asks a person to confirm on their terminal; this scripted person has none
 * (its commands run in a session of their own, so they never ask the demo's user), and the demo's
 * wrap lets a command without a terminal decide, as `cli.require_terminal: false` in a user's own
 * policy would for a script of theirs.
 */
const POLL_MS = 100;

export type PersonOptions = {
  /** The thoughtgate binary to run the commands with. */
  binary: string;
  say: (line: string) => void;
  env?: NodeJS.ProcessEnv;
};

export type Person = {
  /** Resolves when the person answered (true: with `thoughtgate approve`; false: it failed, and the call was denied instead). */
  answered: Promise<boolean>;
  stop(): void;
};

export function playPerson(options: PersonOptions): Person {
  const env = options.env ?? process.env;
  let stopped = false;
  const answered = (async () => {
    let client: ApprovalClient | null = null;
    let endpoint = "";
    while (!stopped) {
      if (client === null) {
        const own = findServices((pid) => pid === process.pid, env).live.find((descriptor) => descriptor.pid === process.pid);
        if (own) {
          endpoint = own.endpoint;
          client = new ApprovalClient({ endpoint, key: own.cli_key });
        }
      }
      const task = client === null ? null : waitingForPerson(await client.list("none").catch(() => []));
      if (client !== null && task !== null) return answer(options, env, client, endpoint, task);
      await Bun.sleep(POLL_MS);
    }
    return false;
  })();
  return { answered, stop: () => void (stopped = true) };
}

function waitingForPerson(tasks: TaskView[]): TaskView | null {
  if (!tasks.some((task) => task.status !== "pending")) return null;
  return tasks.find((task) => task.status === "pending") ?? null;
}

async function answer(options: PersonOptions, env: NodeJS.ProcessEnv, client: ApprovalClient, endpoint: string, task: TaskView): Promise<boolean> {
  const { say } = options;
  say("demo: the call now waits for you: on the approvals page (the link above), in a desktop notification where there is one, or in another terminal:");
  await run(options, env, ["tasks", "--endpoint", endpoint]);
  const approved = await run(options, env, ["approve", task.task_id, "--endpoint", endpoint]);
  if (approved) return true;
  // The agent must not wait out the approval timeout because the demo's own command failed.
  await client.decide(task, "deny", "the demo could not run thoughtgate approve", { scope: "once" }, "none").catch((error: unknown) => say(`demo: could not deny it either: ${messageOf(error)}`));
  return false;
}

/** Run `thoughtgate <args>` as a person would, showing the command line and what it printed. */
async function run(options: PersonOptions, env: NodeJS.ProcessEnv, args: string[]): Promise<boolean> {
  options.say(`  $ thoughtgate ${args.filter((_, i) => args[i] !== "--endpoint" && args[i - 1] !== "--endpoint").join(" ")}`);
  const child = Bun.spawn([options.binary, ...args], { env, stdin: "ignore", stdout: "pipe", stderr: "pipe", detached: true });
  const [code, out, err] = await Promise.all([child.exited, new Response(child.stdout).text(), new Response(child.stderr).text()]);
  for (const line of `${out}${err}`.trimEnd().split("\n")) options.say(line === "" ? "" : `    ${line}`);
  return code === 0;
}
