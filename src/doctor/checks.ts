/**
 * `thoughtgate doctor`: checks that this install can do its job. Each check returns a result instead
 * of throwing; an unexpected exception inside a check is that check failing (fail closed), never a
 * crash of the whole report. Rendering lives in `src/commands/doctor.ts`.
 */
import { realpathSync } from "node:fs";
import { homedir } from "node:os";
import { messageOf } from "../core/errors.ts";
import { TARGET, VERSION } from "../version.ts";
import { checkAgentConfigs } from "./agent-configs.ts";
import { checkApprovalChannels } from "./approval-channels.ts";
import { checkEnrollment, checkWrapJournal } from "./enrollment.ts";
import { checkAgentHooks } from "./agent-hooks.ts";
import { checkPolicy, type PolicyFound } from "./policy.ts";
import { checkRunningWraps, npmInstall } from "./upgrade.ts";
import type { CheckBody, CheckResult, DoctorContext, DoctorReport } from "./report.ts";

export type { CheckResult, DoctorContext, DoctorReport } from "./report.ts";

function currentContext(): DoctorContext {
  return { env: process.env, home: process.env.HOME || homedir(), cwd: process.cwd(), platform: process.platform, execPath: process.execPath };
}

const SERVICE_PROBE_TIMEOUT_MS = 5_000;

export async function runDoctor(context: DoctorContext = currentContext()): Promise<DoctorReport> {
  let policy: PolicyFound | null = null;
  const bind = await guarded("governance-bind", "governance service", () => checkGovernanceBind());
  const checks = [
    await guarded("binary", "binary", () => checkBinary(context)),
    await guarded("agent-configs", "agent configs", () => checkAgentConfigs(context)),
    await guarded("policy", "policy", async () => (policy = await checkPolicy(context)).body),
    await guarded("wrap-journal", "wrap journal", () => checkWrapJournal(context)),
    // Read after the policy check ran: TypeScript cannot see the assignment inside the closure.
    await guarded("enrolled-agents", "enrolled agents", () => checkEnrollment(context, (policy as PolicyFound | null)?.valid !== false)),
    await guarded("agent-hooks", "agents' own tools", () => checkAgentHooks(context)),
    await guarded("running-wraps", "running wraps", () => checkRunningWraps(context)),
    bind,
    await guarded("approval-channels", "approval channels", () =>
      checkApprovalChannels(context, { serviceCanBind: bind.status === "pass", configs: policy?.valid ? policy.configs : null }),
    ),
    await guarded("cedar", "cedar engine", () => checkCedar()),
  ];
  return { ok: checks.every((check) => check.status !== "fail"), version: VERSION, target: TARGET, checks };
}

async function guarded(id: CheckResult["id"], title: string, body: () => CheckBody | Promise<CheckBody>): Promise<CheckResult> {
  try {
    return { id, title, ...(await body()) };
  } catch (error) {
    return { id, title, status: "fail", summary: `check crashed: ${messageOf(error)}`, details: [], data: { error: messageOf(error) } };
  }
}

function checkBinary({ env, execPath }: DoctorContext): CheckBody {
  // A compiled binary runs its bundled entry from Bun's embedded file system.
  const compiled = Bun.main.startsWith("/$bunfs/");
  const onPath = Bun.which("thoughtgate", { PATH: env.PATH ?? "" });
  const npm = npmInstall(execPath, onPath);
  const shadowed = onPath !== null && compiled && safeRealpath(onPath) !== safeRealpath(execPath) && !npm.launchedBy;
  const details = [
    compiled ? "compiled binary" : `running from source under ${execPath}`,
    ...npm.details,
    onPath === null ? "not on PATH: add its directory to PATH (see the README's Install section)" : `on PATH as ${onPath}`,
  ];
  if (shadowed) details.push(`note: \`thoughtgate\` on PATH is a different file (${onPath}) than this one`);
  return {
    status: "pass",
    summary: compiled ? `${execPath} (${VERSION}, ${TARGET})` : `${Bun.main} (${VERSION}, ${TARGET})`,
    details,
    data: { path: execPath, version: VERSION, target: TARGET, compiled, onPath, shadowed, ...npm.data },
  };
}

async function checkGovernanceBind(): Promise<CheckBody> {
  // The same kind of listener the governance service uses: loopback only, a port the kernel picks.
  const server = Bun.serve({ hostname: "127.0.0.1", port: 0, fetch: () => new Response("thoughtgate-doctor") });
  try {
    const response = await fetch(`http://127.0.0.1:${server.port}/`, { signal: AbortSignal.timeout(SERVICE_PROBE_TIMEOUT_MS) });
    const body = await response.text();
    if (body !== "thoughtgate-doctor") return { status: "fail", summary: `bound 127.0.0.1:${server.port} but got an unexpected answer`, details: [], data: { port: server.port } };
    return { status: "pass", summary: `can bind 127.0.0.1 (got port ${server.port}) and answer`, details: [], data: { port: server.port } };
  } finally {
    await server.stop(true);
  }
}

/** Ids are ours so the answers' reasons can be checked, not just the decisions. */
const PROBE_POLICIES = {
  "permit-read": `permit(principal, action == ThoughtGate::Action::"tools/call", resource == ThoughtGate::ToolCall::"read_file");`,
  "permit-delete": `permit(principal, action, resource == ThoughtGate::ToolCall::"delete_file");`,
  "forbid-delete": `forbid(principal, action, resource == ThoughtGate::ToolCall::"delete_file");`,
};

async function checkCedar(): Promise<CheckBody> {
  const started = performance.now();
  // Loaded here, not at the top: a broken engine must fail this check, not the whole doctor.
  const { loadCedar, CEDAR_WASM_PATH } = await import("../governance/engine/cedar-wasm.ts");
  const cedar = loadCedar();
  const version = cedar.getCedarVersion();
  const decide = (tool: string) => {
    const answer = cedar.isAuthorized({
      principal: { type: "ThoughtGate::App", id: "doctor" },
      action: { type: "ThoughtGate::Action", id: "tools/call" },
      resource: { type: "ThoughtGate::ToolCall", id: tool },
      context: {},
      policies: { staticPolicies: PROBE_POLICIES },
      entities: [],
    });
    if (answer.type === "failure") throw new Error(answer.errors.map((e) => e.message).join("; "));
    return { decision: answer.response.decision, reasons: answer.response.diagnostics.reason.toSorted() };
  };
  const decisions = { read_file: decide("read_file"), delete_file: decide("delete_file") };
  const elapsedMs = Math.round(performance.now() - started);
  const embedded = CEDAR_WASM_PATH.startsWith("/$bunfs/");
  const data = { version, embedded, wasmPath: CEDAR_WASM_PATH, decisions, elapsedMs };
  const expected =
    decisions.read_file.decision === "allow" &&
    decisions.delete_file.decision === "deny" &&
    decisions.delete_file.reasons.join(",") === "forbid-delete";
  if (!expected) return { status: "fail", summary: `cedar ${version} loaded but decided wrongly: ${JSON.stringify(decisions)}`, details: [], data };
  return {
    status: "pass",
    summary: `cedar ${version} evaluates policies: permit → allow, forbid → deny (${elapsedMs} ms)`,
    details: [embedded ? "engine embedded in the binary" : `engine read from ${CEDAR_WASM_PATH}`],
    data,
  };
}

function safeRealpath(path: string): string {
  try {
    return realpathSync(path);
  } catch {
    return path;
  }
}
