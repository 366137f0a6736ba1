import { defineCommand } from "citty";
import { EXIT } from "../core/errors.ts";
import { showInvisibleInJson } from "../core/visible-text.ts";
import { runDoctor, type CheckResult, type DoctorReport } from "../doctor/checks.ts";
import { commonArgs, rejectUnknownFlags } from "./_shared.ts";

const args = {
  json: { type: "boolean", description: "Print the report as JSON" },
  ...commonArgs,
} as const;

export default defineCommand({
  meta: {
    name: "doctor",
    description: "Check this install: binary, agent configs, the policy in force, a left-over wrap journal, the governance service, which approval channels work here, the Cedar engine",
  },
  args,
  async run({ rawArgs, args: parsed }) {
    rejectUnknownFlags(rawArgs, args);
    const report = await runDoctor();
    // A project policy's problem is in the report: invisible characters escaped the JSON way.
    process.stdout.write(parsed.json ? `${showInvisibleInJson(JSON.stringify(report, null, 2))}\n` : renderText(report));
    return report.ok ? EXIT.ok : EXIT.error;
  },
});

const MARK: Record<CheckResult["status"], string> = { pass: "ok  ", fail: "FAIL", info: "info", warn: "warn" };

function renderText(report: DoctorReport): string {
  const width = Math.max(...report.checks.map((check) => check.title.length));
  const lines = [`thoughtgate ${report.version} (${report.target})`];
  for (const check of report.checks) {
    lines.push(`${MARK[check.status]}  ${check.title.padEnd(width)}  ${check.summary}`);
    for (const detail of check.details) lines.push(`${" ".repeat(width + 8)}${detail}`);
  }
  const titles = (status: CheckResult["status"]) => report.checks.filter((check) => check.status === status).map((check) => check.title);
  const [failed, warned] = [titles("fail"), titles("warn")];
  const verdict = failed.length === 0 ? (warned.length === 0 ? "all checks passed" : "no check failed") : `failed: ${failed.join(", ")}`;
  lines.push(warned.length === 0 ? verdict : `${verdict}; warnings: ${warned.join(", ")}`);
  return `${lines.join("\n")}\n`;
}
