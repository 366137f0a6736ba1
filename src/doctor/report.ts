/** What `thoughtgate doctor` reports: one result per check, shared by the checks and the renderer. */

/**
 * `info` reports without judging (which agents are installed is not a health question); `warn`
 * is something to look at that does not fail the report (an agent config that does not parse).
 */
type CheckStatus = "pass" | "fail" | "info" | "warn";

export type CheckResult = {
  id: "binary" | "agent-configs" | "wrap-journal" | "enrolled-agents" | "agent-hooks" | "running-wraps" | "governance-bind" | "cedar" | "policy" | "approval-channels";
  title: string;
  status: CheckStatus;
  summary: string;
  /** Extra lines for the text report (one per finding). */
  details: string[];
  /** The same facts for `--json` consumers. */
  data: Record<string, unknown>;
};

export type DoctorReport = { ok: boolean; version: string; target: string; checks: CheckResult[] };

export type DoctorContext = { env: NodeJS.ProcessEnv; home: string; cwd: string; platform: NodeJS.Platform; execPath: string };

/** What one check returns; `runDoctor` adds its id and title. */
export type CheckBody = Omit<CheckResult, "id" | "title">;
