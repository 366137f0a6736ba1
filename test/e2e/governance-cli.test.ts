/**
 * `thoughtgate serve`, `tasks`, `approve`, `deny` and `validate-config` through the compiled binary:
 * what a person at a terminal sees.
 */
import { afterEach, describe, expect, test } from "bun:test";
import { existsSync, readdirSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { requireBinary, tempDir, waitFor } from "../support/harness.ts";
import { policyHome } from "../support/policy-home.ts";
import { runBinary, ServeProcess } from "../support/serve.ts";
import { decideAtTerminal, runInTerminal, tasksAtTerminal } from "../support/terminal.ts";

const CONFIG = `schema: 1
sources:
  - { id: gh, expose: { mode: blocklist, tools: [secret_tool] } }
governance:
  defaults: { action: forward }
  rules:
    - { id: deletes, match: "delete_*", action: approve }
    - { id: files, match: read_file, action: policy }
cedar:
  policies: [policy.cedar]
  schema: arguments.cedarschema
`;
const NO_ETC = `@id("allow") permit(principal, action, resource);
@id("no-etc") forbid(principal, action, resource) when { resource.arguments has path && resource.arguments.path like "/etc/*" };
`;
const NO_TMP = `@id("allow") permit(principal, action, resource);
@id("no-tmp") forbid(principal, action, resource) when { resource.arguments has path && resource.arguments.path like "/tmp/*" };
`;

const cleanup: Array<() => unknown> = [];
afterEach(async () => {
  for (const step of cleanup.splice(0).reverse()) await step();
});

function policyDir(cedar = NO_ETC, config = CONFIG): string {
  const dir = tempDir();
  cleanup.push(() => dir[Symbol.dispose]());
  writeFileSync(join(dir.path, "thoughtgate.yaml"), config);
  writeFileSync(join(dir.path, "policy.cedar"), cedar);
  writeFileSync(join(dir.path, "arguments.cedarschema"), "namespace ThoughtGate { type Arguments = { path?: String }; }\n");
  return dir.path;
}

/** A command run at a terminal of its own (a person's), to its end: its exit code and what it printed. */
async function inTerminal(args: string[], env: Record<string, string>) {
  const dir = tempDir();
  cleanup.push(() => dir[Symbol.dispose]());
  const terminal = runInTerminal([requireBinary(), ...args], { cwd: dir.path, outDir: dir.path, env });
  const exitCode = await terminal.exited;
  return { exitCode, stdout: readFileSync(terminal.stdoutFile, "utf8"), stderr: readFileSync(terminal.stderrFile, "utf8") };
}

async function serve(dir: string): Promise<ServeProcess> {
  const s = await ServeProcess.start(["--thoughtgate-config", join(dir, "thoughtgate.yaml")]);
  cleanup.push(() => s.stop());
  return s;
}

describe("serve + tasks/approve/deny", () => {
  test("serve prints the endpoint, the shims' secret, the approvals page (key in the fragment) and the CLI key; the service needs the secret", async () => {
    const s = await serve(policyDir());
    expect(s.endpoint).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
    expect(s.stderr).toContain(`export THOUGHTGATE_GOVERNANCE_ENDPOINT=${s.endpoint} THOUGHTGATE_GOVERNANCE_SECRET=${s.secret}`);
    expect(s.stderr).toContain(`export THOUGHTGATE_GOVERNANCE_ENDPOINT=${s.endpoint} THOUGHTGATE_APPROVAL_KEY=${s.key}`);
    expect(s.approvalsUrl).toBe(`${s.endpoint}/approvals#key=${s.pageKey}`);
    expect(new Set([s.secret, s.key, s.pageKey]).size).toBe(3);
    expect((await fetch(`${s.endpoint}/healthz`)).status).toBe(401);
    expect((await fetch(`${s.endpoint}/healthz`, { headers: { authorization: `Bearer ${s.secret}` } })).status).toBe(200);
    expect(await s.stop()).toBe(0);
  });

  test("tasks lists pending calls; approve and deny settle them; mistakes are one-line errors with exit 1", async () => {
    const s = await serve(policyDir());
    const env = s.cliEnv;
    expect((await tasksAtTerminal([], { env })).stdout).toStartWith("no calls are waiting for approval\n");

    const first = await s.evaluate({ name: "delete_repo", arguments: { repo: "acme/site" } });
    const second = await s.evaluate({ name: "delete_branch", arguments: { branch: "main" } });
    expect(first.decision).toBe("pending_approval");
    const listed = await tasksAtTerminal([], { env });
    expect(listed.exitCode).toBe(0);
    const rows = listed.stdout.split("\n");
    expect(rows[0]).toMatch(/^TASK\s+STATUS\s+CALL\s+RULE\s+LEFT\s+ARGUMENTS$/);
    expect(rows[1]).toMatch(new RegExp(`^${first.task_id}\\s+pending\\s+gh\\.delete_repo\\s+deletes\\s+1[45]m \\d\\ds\\s+\\{"repo":"acme/site"\\}$`));
    expect(rows[2]).toMatch(new RegExp(`^${second.task_id}\\s+pending\\s+gh\\.delete_branch\\s+`));
    const json = JSON.parse((await tasksAtTerminal(["--json"], { env })).stdout) as Array<{ task_id: string }>;
    expect(json.map((t) => t.task_id)).toEqual([first.task_id, second.task_id]);

    const approved = await decideAtTerminal(["approve", first.task_id], { env });
    expect(approved).toMatchObject({ exitCode: 0, stdout: `approved ${first.task_id}: gh.delete_repo\n` });
    expect(await s.task(first.task_id)).toMatchObject({ status: "approved", decided_by: "cli" });
    const denied = await decideAtTerminal(["deny", second.task_id, "--reason", "not on a Friday"], { env });
    expect(denied).toMatchObject({ exitCode: 0, stdout: `denied ${second.task_id}: gh.delete_branch\n` });
    expect(await s.task(second.task_id)).toMatchObject({ status: "denied", decided_by: "cli", person_reason: "not on a Friday" });

    const again = await decideAtTerminal(["deny", first.task_id], { env });
    expect(again.exitCode).toBe(1);
    expect(again.stderr.trim()).toBe(`[error] task ${first.task_id} is already approved`);
    const unknown = await decideAtTerminal(["approve", "0123456789ab"], { env });
    expect(unknown.exitCode).toBe(1);
    expect(unknown.stderr).toContain("no task 0123456789ab");
    const wrongKey = await runBinary(["tasks"], { env: { ...env, THOUGHTGATE_APPROVAL_KEY: "0".repeat(64) } });
    expect(wrongKey.exitCode).toBe(1);
    expect(wrongKey.stderr).toContain("refused the approval key");
    // The shims' secret is not an approval key.
    expect((await runBinary(["approve", first.task_id, "--key", s.secret], { env })).exitCode).toBe(1);

    expect((await tasksAtTerminal([], { env })).stdout).toStartWith("no calls are waiting for approval\n");
    const all = await tasksAtTerminal(["--all"], { env });
    expect(all.stdout).toContain(`${first.task_id}  approved`);
    expect(all.stdout).toContain(`${second.task_id}  denied`);

    await s.stop();
    const unreachable = await runBinary(["tasks"], { env });
    expect(unreachable.exitCode).toBe(1);
    expect(unreachable.stderr).toContain(`cannot reach the governance service at ${s.endpoint}`);
  });

  test("approve --session: this tool on this server is allowed until the service stops; tasks shows the grant; deny has no --session", async () => {
    const s = await serve(policyDir());
    const env = s.cliEnv;
    const first = await s.evaluate({ name: "delete_repo", arguments: { repo: "acme/site" } });
    const approved = await decideAtTerminal(["approve", first.task_id, "--session"], { env });
    expect(approved).toMatchObject({ exitCode: 0, stdout: `approved ${first.task_id}: gh.delete_repo (and every call of it until the session ends)\n` });
    const later = await s.evaluate({ name: "delete_repo", arguments: { repo: "acme/other" } });
    expect(await s.task(later.task_id)).toMatchObject({ status: "approved", decided_by: `session_grant:${first.task_id}` });
    const other = await s.evaluate({ name: "delete_branch", arguments: {} });
    const listed = await tasksAtTerminal([], { env });
    expect(listed.stdout).toContain(`${other.task_id}  pending`);
    expect(listed.stdout).toContain(`\nallowed for this session:\n  gh.delete_repo  (task ${first.task_id}, by cli; 1 call since)\n`);
    const refused = await runBinary(["deny", other.task_id, "--session"], { env });
    expect([refused.exitCode, refused.stderr]).toEqual([2, expect.stringContaining("--session")]);
  });

  test("tasks shortens a call's arguments keeping what it acts on: write_file's path whole and first, its content cut", async () => {
    const s = await serve(policyDir(NO_ETC, CONFIG.replace("    - { id: deletes", "    - { id: writes, match: write_file, action: approve }\n    - { id: deletes")));
    const content = "Dear diary, today the agent rewrote my whole notes file. ".repeat(20);
    const pending = await s.evaluate({ name: "write_file", arguments: { content, path: "/home/me/notes/todo.md" } });
    expect(pending.decision).toBe("pending_approval");
    const rows = (await tasksAtTerminal([], { env: s.cliEnv })).stdout.split("\n");
    expect(rows[1]).toMatch(new RegExp(`^${pending.task_id}\\s+pending\\s+gh\\.write_file\\s+writes\\s+1[45]m \\d\\ds\\s+\\{"path":"/home/me/notes/todo\\.md","content":"Dear di…file\\. "\\} \\(--json shows all\\)$`));
    const json = JSON.parse((await tasksAtTerminal(["--json"], { env: s.cliEnv })).stdout) as Array<{ arguments: unknown }>;
    expect(json[0]?.arguments).toEqual({ content, path: "/home/me/notes/todo.md" });
  });

  test("without flags the CLI looks in every running service: none is service unavailable (exit 1); with several, tasks lists each session's calls under its name and approve or deny finds the task's session by its id; --endpoint asks only that one", async () => {
    const state = tempDir();
    cleanup.push(() => state[Symbol.dispose]());
    const env = { XDG_STATE_HOME: state.path };
    const none = await runBinary(["tasks"], { env });
    expect(none.exitCode).toBe(1);
    expect(none.stderr).toBe(
      "[error] no running governance service found: start `thoughtgate wrap` or `thoughtgate serve`, or pass --endpoint and --key (or set THOUGHTGATE_GOVERNANCE_ENDPOINT and THOUGHTGATE_APPROVAL_KEY)\n",
    );

    const dir = policyDir();
    const first = await ServeProcess.start(["--thoughtgate-config", join(dir, "thoughtgate.yaml")], { env });
    cleanup.push(() => first.stop());
    const services = join(state.path, "thoughtgate", "services");
    expect(readdirSync(services)).toEqual([`${first.proc.pid}.json`]);
    expect(statSync(join(services, `${first.proc.pid}.json`)).mode & 0o777).toBe(0o600);
    const task = await first.evaluate({ name: "delete_repo", arguments: { repo: "acme/site" } });
    expect((await tasksAtTerminal([], { env })).stdout).toContain(`${task.task_id}  pending`);
    expect(await decideAtTerminal(["approve", task.task_id], { env })).toMatchObject({ exitCode: 0, stdout: `approved ${task.task_id}: gh.delete_repo\n` });
    expect(await first.task(task.task_id)).toMatchObject({ status: "approved", decided_by: "cli" });

    const second = await ServeProcess.start(["--thoughtgate-config", join(dir, "thoughtgate.yaml")], { env });
    cleanup.push(() => second.stop());
    const onFirst = await first.evaluate({ name: "delete_repo", arguments: { repo: "acme/one" } });
    const onSecond = await second.evaluate({ name: "delete_repo", arguments: { repo: "acme/two" } });
    const several = await tasksAtTerminal([], { env });
    expect(several.exitCode).toBe(0);
    const heading = (pid: number) => new RegExp(`^thoughtgate serve, started [0-9-]+ [0-9:]+ UTC \\(pid ${pid}\\):$`, "m");
    expect(several.stdout).toMatch(heading(first.proc.pid));
    expect(several.stdout).toMatch(heading(second.proc.pid));
    expect(several.stdout.indexOf(onFirst.task_id)).toBeGreaterThan(several.stdout.search(heading(first.proc.pid)));
    expect(several.stdout).toContain(`  ${onSecond.task_id}  pending  gh.delete_repo`);
    const json = JSON.parse((await tasksAtTerminal(["--json"], { env })).stdout) as Array<{ task_id: string; session: string }>;
    expect(json.find((t) => t.task_id === onSecond.task_id)?.session).toMatch(new RegExp(`^thoughtgate serve, started .+ \\(pid ${second.proc.pid}\\)$`));
    // --endpoint is an override: only that session.
    expect((await tasksAtTerminal(["--endpoint", second.endpoint], { env })).stdout).not.toContain(onFirst.task_id);

    // The task's own session decides it, whichever that is; an id no session holds says where it looked.
    expect(await decideAtTerminal(["approve", onSecond.task_id], { env })).toMatchObject({ exitCode: 0, stdout: `approved ${onSecond.task_id}: gh.delete_repo\n` });
    expect(await second.task(onSecond.task_id)).toMatchObject({ status: "approved", decided_by: "cli" });
    expect(await decideAtTerminal(["deny", onFirst.task_id], { env })).toMatchObject({ exitCode: 0, stdout: `denied ${onFirst.task_id}: gh.delete_repo\n` });
    const headless = await runBinary(["deny", "no-such-task"], { env });
    expect(headless.exitCode).toBe(1);
    expect(headless.stderr).toStartWith("[error] a decision needs a person at a terminal, and this command has none");
    const unknown = await decideAtTerminal(["deny", "no-such-task"], { env });
    expect(unknown.exitCode).toBe(1);
    expect(unknown.stderr).toMatch(/^\[error\] no running session holds task no-such-task \(looked in 2: thoughtgate serve, started .+; thoughtgate serve, started .+\)\n$/);

    await second.stop();
    await first.stop();
    expect(existsSync(join(services, `${first.proc.pid}.json`))).toBe(false);
    expect(readdirSync(services)).toEqual([]);
  });

  test("approve and deny ask the person at the terminal, showing the call; no terminal, or any answer but y, decides nothing", async () => {
    const s = await serve(policyDir());
    const env = s.cliEnv;
    const task = await s.evaluate({ name: "delete_repo", arguments: { repo: "acme/site" } });
    // No controlling terminal (an agent's shell tool has none): one line, and the task waits on.
    const headless = await runBinary(["approve", task.task_id], { env });
    expect(headless.exitCode).toBe(1);
    expect(headless.stderr).toBe(
      "[error] a decision needs a person at a terminal, and this command has none (an agent's shell tool has none): approve on the approvals page or with thoughtgate approve in your own terminal, or set cli.require_terminal: false in your own policy\n",
    );
    expect((await runBinary(["deny", task.task_id], { env })).exitCode).toBe(1);
    const declined = await decideAtTerminal(["approve", task.task_id, "--session"], { env, answer: "n" });
    expect(declined.exitCode).toBe(1);
    expect(declined.screen).toContain(`thoughtgate: task ${task.task_id}: gh.delete_repo {"repo":"acme/site"}`);
    expect(declined.screen).toContain("Allow for this session (this tool on this server, any arguments)? Type y and Enter to confirm:");
    expect(declined.stderr).toBe(`[error] not confirmed: nothing decided, task ${task.task_id} still waits\n`);
    expect((await s.task(task.task_id)).status).toBe("pending");
    expect((await decideAtTerminal(["approve", task.task_id], { env })).exitCode).toBe(0);
    expect(await s.task(task.task_id)).toMatchObject({ status: "approved", decided_by: "cli" });
  });

  test("the user's own policy may let a script decide without a terminal (cli.require_terminal: false); a project's policy may not say so", async () => {
    const dir = policyDir(NO_ETC, `${CONFIG}cli: { require_terminal: false }\n`);
    const s = await serve(dir);
    const task = await s.evaluate({ name: "delete_repo", arguments: { repo: "acme/site" } });
    expect(await runBinary(["approve", task.task_id], { env: s.cliEnv })).toMatchObject({ exitCode: 0, stdout: `approved ${task.task_id}: gh.delete_repo\n` });
    const project = policyDir(NO_ETC, "schema: 1\ncli: { require_terminal: false }\n");
    const refused = await runBinary(["validate-config"], { cwd: project, env: { XDG_CONFIG_HOME: join(project, "no-user-config") } });
    expect(refused.exitCode).toBe(1);
    expect(refused.stdout).toContain("cli: only the user's policy may set this");
  });

  test("approvals prints the page's link at a terminal, and tasks shows it too; without a terminal neither hands out the key, and tasks lists nothing", async () => {
    const s = await serve(policyDir());
    const env = s.cliEnv;
    const printed = await inTerminal(["approvals"], env);
    expect(printed.exitCode).toBe(0);
    expect(printed.stdout).toMatch(new RegExp(`^${s.approvalsUrl.replace(/[.?]/g, "\\$&")}  thoughtgate serve, started [0-9-]+ [0-9:]+ UTC \\(pid ${s.proc.pid}\\)\n$`));
    expect((await inTerminal(["tasks"], env)).stdout).toEndWith(`\napprovals page (keep it private): ${s.approvalsUrl}\n`);

    const headless = await runBinary(["approvals"], { env });
    expect(headless.exitCode).toBe(1);
    expect(headless.stdout).toContain("the approvals link needs a person at a terminal");
    expect(headless.stdout).not.toContain(s.pageKey);
    await s.evaluate({ name: "delete_repo", arguments: { repo: "acme/site" } });
    const listed = await runBinary(["tasks", "--json"], { env });
    expect(listed).toMatchObject({ exitCode: 1, stdout: "" });
    expect(listed.stderr).toBe(
      "[error] the task list needs a person at a terminal, and this command has none (an agent's shell tool has none): approve on the approvals page or with thoughtgate approve in your own terminal, or set cli.require_terminal: false in your own policy\n",
    );
  });

  test("approvals --open gives the browser a one-time link, never the key; the page redeems it once", async () => {
    const s = await serve(policyDir());
    const dir = tempDir();
    cleanup.push(() => dir[Symbol.dispose]());
    // A browser opener that records its command line (what every local user can read in /proc).
    const opener = join(dir.path, "browser");
    writeFileSync(opener, `#!/bin/sh\nprintf '%s\\n' "$@" > ${join(dir.path, "argv")}\n`, { mode: 0o755 });
    const opened = await inTerminal(["approvals", "--open"], { ...s.cliEnv, BROWSER: opener });
    expect(opened).toMatchObject({ exitCode: 0, stdout: expect.stringContaining(`opened the approvals page of thoughtgate serve, started `) });
    const argv = await waitFor(() => (existsSync(join(dir.path, "argv")) ? readFileSync(join(dir.path, "argv"), "utf8") : null), "the opener to run");
    expect(argv).not.toContain(s.pageKey);
    const code = /^http:\/\/127\.0\.0\.1:\d+\/approvals#open=([0-9a-f]{64})\n$/.exec(argv)?.[1] ?? "";
    expect(code).not.toBe("");
    const redeem = () => fetch(`${s.endpoint}/approvals/api/open`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ code }) });
    const first = await redeem();
    expect([first.status, await first.json()]).toEqual([200, { key: s.pageKey }]);
    const again = await redeem();
    expect([again.status, ((await again.json()) as { error: string }).error]).toEqual([401, "this approvals link was used already or is too old: run thoughtgate approvals again"]);
  });

  test("approve refuses to run inside an agent that wrap governs (THOUGHTGATE_ACTIVE=1); deny still works", async () => {
    const s = await serve(policyDir());
    const task = await s.evaluate({ name: "delete_repo", arguments: { repo: "acme/site" } });
    const inside = { ...s.cliEnv, THOUGHTGATE_ACTIVE: "1" };
    const approve = await runBinary(["approve", task.task_id], { env: inside });
    expect(approve.exitCode).toBe(1);
    expect(approve.stderr).toContain("thoughtgate approve refuses to run inside an agent that thoughtgate wrap governs");
    expect((await s.task(task.task_id)).status).toBe("pending");
    expect((await decideAtTerminal(["deny", task.task_id], { env: inside })).exitCode).toBe(0);
    expect(await s.task(task.task_id)).toMatchObject({ status: "denied", decided_by: "cli" });
  });

  test("serve with an invalid config exits 1 with the problems; with none at all it uses the embedded default and says so", async () => {
    const dir = policyDir(NO_ETC, "schema: 1\nsources:\n  - { id: gh, expose: { mode: some } }\n");
    const bad = await runBinary(["serve", "--governance-port", "0", "--thoughtgate-config", join(dir, "thoughtgate.yaml")]);
    expect(bad.exitCode).toBe(1);
    expect(bad.stderr).toContain("sources[0].expose.mode: expected one of all|allowlist|blocklist");
    const missing = await runBinary(["serve", "--governance-port", "0", "--thoughtgate-config", join(dir, "nope.yaml")]);
    expect(missing.exitCode).toBe(1);
    expect(missing.stderr).toContain("nope.yaml: no such file");

    const empty = tempDir();
    cleanup.push(() => empty[Symbol.dispose]());
    const s = await ServeProcess.start([], { cwd: empty.path });
    cleanup.push(() => s.stop());
    expect(s.stderr).toContain("policy: the embedded default");
    expect(await s.evaluate({ name: "anything", annotations: { readOnlyHint: true } })).toMatchObject({ decision: "forward", rule_id: "default-read-only" });
    expect(await s.evaluate({ name: "unannotated" })).toMatchObject({ decision: "pending_approval", rule_id: "default-destructive" });
  });

  test("SIGHUP reloads: a broken Cedar file keeps the old policy, a fixed one takes effect", async () => {
    const dir = policyDir();
    const s = await serve(dir);
    const read = (path: string) => s.evaluate({ name: "read_file", arguments: { path } });
    expect(await read("/etc/passwd")).toMatchObject({ decision: "deny", policy_id: "no-etc", error: { code: -32003 } });
    expect((await read("/tmp/x")).decision).toBe("forward");

    const failures = () => s.stderr.split("failed; keeping the policy in force").length - 1;
    const before = failures();
    writeFileSync(join(dir, "policy.cedar"), "permit(principal, action, resource");
    s.proc.kill("SIGHUP");
    await waitFor(() => failures() > before, "the failed reload to be reported");
    expect(s.stderr).toMatch(/\[error\] reload of .*thoughtgate\.yaml failed; keeping the policy in force/);
    expect(await read("/etc/passwd")).toMatchObject({ decision: "deny", policy_id: "no-etc" });
    expect((await read("/tmp/x")).decision).toBe("forward");

    writeFileSync(join(dir, "policy.cedar"), NO_TMP);
    s.proc.kill("SIGHUP");
    await waitFor(async () => (await read("/tmp/x")).decision === "deny", "the fixed policy to take effect");
    expect(await read("/tmp/x")).toMatchObject({ policy_id: "no-tmp", error: { code: -32003 } });
    expect((await read("/etc/passwd")).decision).toBe("forward");
    expect(s.proc.exitCode).toBeNull();
  });
});

describe("validate-config", () => {
  test("a good file: ok; with --explain, the effective policy", async () => {
    const dir = policyDir();
    const file = join(dir, "thoughtgate.yaml");
    expect(await runBinary(["validate-config", file])).toMatchObject({ exitCode: 0, stdout: `ok: ${file}\n` });
    const explained = await runBinary(["validate-config", file, "--explain"]);
    expect(explained.exitCode).toBe(0);
    for (const line of [
      `policy: ${file} (given on the command line)`,
      "  gh: blocklist tools secret_tool",
      "  any other server: everything",
      "  1. deletes: tool delete_* → approve (workflow default)",
      "  2. files: tool read_file → Cedar decides",
      "  otherwise: forward",
      "  policy ids: allow, no-etc",
      "  default (built in, for approve rules that name none): any channel (elicitation, web page, CLI); after 15m without an answer: deny",
      "secret scanning (results on their way to the agent):",
      "  every server's results; every kind found replaced by [REDACTED:<kind>]",
    ]) {
      expect(explained.stdout).toContain(`${line}\n`);
    }
    const secrets = policyDir(NO_ETC, `${CONFIG}secrets:\n  kinds: { jwt: { action: detect }, url_password: { replacement: "<pw>" } }\n  servers: { vault: { scan: off } }\n`);
    const scanning = await runBinary(["validate-config", join(secrets, "thoughtgate.yaml"), "--explain"]);
    expect(scanning.stdout).toContain(
      ["  every server's results, unless said below", "  vault: not scanned", "  jwt: logged and forwarded", '  url_password: replaced by "<pw>"', ""].join("\n"),
    );
  });

  test("a bad file: each problem as `file:line:column: path: message`, exit 1; a broken Cedar file too", async () => {
    const dir = policyDir(NO_ETC, "schema: 1\nsources:\n  - { id: gh, expose: { mode: some } }\ngovernance:\n  rules: [{ match: x, action: nope }]\n");
    const file = join(dir, "thoughtgate.yaml");
    const bad = await runBinary(["validate-config", file]);
    expect(bad.exitCode).toBe(1);
    expect(bad.stdout.split("\n").slice(1, 3)).toEqual([
      `${file}:3:31: sources[0].expose.mode: expected one of all|allowlist|blocklist, got "some"`,
      `${file}:5:31: governance.rules[0].action: expected one of forward|deny|approve|policy, got "nope"`,
    ]);
    const cedar = await runBinary(["validate-config", join(policyDir("permit(principal, action, resource"), "thoughtgate.yaml")]);
    expect(cedar.exitCode).toBe(1);
    expect(cedar.stdout).toContain("cedar: ");
    expect(cedar.stdout).toContain("policy.cedar");
  });

  test("no path: the user's file and the project's are both checked, the project's as a project policy; --explain shows how they combine", async () => {
    using policy = policyHome();
    policy.writeUser("schema: 1\ngovernance:\n  rules: [{ id: user-no-delete, match: delete_repo, action: deny }]\n");
    policy.writeProject("schema: 1\ngovernance:\n  rules: [{ id: project-ask, match: push, action: approve }]\n");
    const ok = await runBinary(["validate-config", "--explain"], { cwd: policy.project, env: policy.env });
    expect(ok.exitCode).toBe(0);
    for (const line of [
      `ok: ${policy.userFile}`,
      `ok: ${policy.projectFile} (project policy)`,
      `policy: user policy ${policy.userFile}, restricted by project policy ${policy.projectFile}`,
      `user policy: ${policy.userFile} (found in the user config directory)`,
      "  1. user-no-delete: tool delete_repo → deny",
      `project policy: ${policy.projectFile} (found in the working directory; restricts the above)`,
      "  1. project-ask: tool push → approve (workflow default)",
    ]) {
      expect(ok.stdout).toContain(`${line}\n`);
    }
    policy.writeProject('schema: 1\ngovernance:\n  rules: [{ id: "r-${HOME}", match: push, action: deny }]\n');
    const bad = await runBinary(["validate-config"], { cwd: policy.project, env: policy.env });
    expect(bad).toMatchObject({ exitCode: 1 });
    expect(bad.stdout).toBe(
      `ok: ${policy.userFile}\n${policy.projectFile} (project policy): 1 problem\n` +
        `${policy.projectFile}:3:17: governance.rules[0].id: environment variables are not expanded in a project policy (found \${HOME}); write the value itself\n`,
    );
  });

  test("no file anywhere: the embedded default applies, shown with --explain", async () => {
    const empty = tempDir();
    cleanup.push(() => empty[Symbol.dispose]());
    const plain = await runBinary(["validate-config"], { cwd: empty.path });
    expect(plain.exitCode).toBe(0);
    expect(plain.stdout).toContain("no thoughtgate.yaml found");
    expect(plain.stdout).toContain("the embedded default policy applies");
    const explained = await runBinary(["validate-config", "--explain"], { cwd: empty.path });
    // The agent's own tools' rules come first (docs/governance.md, Built-in tools), then the MCP ones.
    expect(explained.stdout).toContain("1. agent-self-protection: tool {edit,write} on agent where path one of (within ${HOME}/.claude,");
    expect(explained.stdout).toContain("10. default-read-only: tool * with readOnlyHint=true → forward");
    expect(explained.stdout).toContain("11. default-destructive: tool * with destructiveHint=true → approve (workflow default)");
    const missing = await runBinary(["validate-config", join(empty.path, "nope.yaml")]);
    expect(missing).toMatchObject({ exitCode: 1, stdout: `${join(empty.path, "nope.yaml")}: no such file\n` });
  });
});
