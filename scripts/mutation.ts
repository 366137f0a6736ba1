/**
 * Mutation testing of the security-critical code (docs/testing.md, Mutation testing), with StrykerJS.
 *
 *   bun run test:mutation                 every target below, one after another
 *   bun run test:mutation redact safe-open   the named targets only
 *   bun run test:mutation --list          the targets, their files and the tests that guard them
 *   bun run test:mutation definition-guard --mutate src/shim/definition-guard.ts:100-130
 *                                         a sample: only these files or line ranges (Stryker's
 *                                         `file:from-to` form) of the named targets are mutated
 *
 * Each target is one Stryker run (its own config, written to reports/mutation/<target>.stryker.json):
 * Stryker's command runner runs `bun run scripts/mutation.ts guard <target>` once per mutant, and that
 * runs only the test files that guard the target (test/run.ts: a fresh temp HOME). Stryker puts every
 * mutant of a file into one instrumented copy (in its sandbox) and picks the live one by the
 * environment variable __STRYKER_ACTIVE_MUTANT__. The unit tests import the sources, so they see it.
 * The compiled binary the e2e tests drive may not (the MCP SDK client starts a server with a short
 * list of variables): when a target's guards include e2e tests, `guard` first rebuilds
 * dist/thoughtgate from the instrumented sources with the mutant's id set before any module runs
 * (build.ts's banner; no bytecode: ~3 s).
 *
 * Stryker runs under Bun (`bun --bun`): Stryker 10 refuses Node older than 22. One mutant at a time
 * (concurrency 1): the tests start servers and agents of their own. After the runs, a table of the
 * scores (docs/testing.md's form) is printed; the survivors are in Stryker's output and in
 * reports/mutation/<target>.json.
 */
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { compileTarget } from "../build.ts";

type Target = { files: string[]; tests: string[] };

/**
 * What is mutated, and the test files that guard it: the unit tests that reach the code, and the e2e
 * tests (the compiled binary) that catch what they miss (json-shape's duplicate names through the
 * shim, coverage-gate's plugins of the real Claude Code). A target with an e2e guard rebuilds the
 * binary per mutant, so its run takes longer.
 */
const TARGETS: Record<string, Target> = {
  "json-shape": {
    files: ["src/stdio/json-shape.ts"],
    tests: ["test/stdio/json-shape.test.ts", "test/stdio/framer.test.ts", "test/e2e/attacks/duplicate-keys.test.ts"],
  },
  decider: { files: ["src/governance/verdict/decider.ts"], tests: ["test/governance/verdict/decider.test.ts"] },
  "strictest-of": {
    files: ["src/governance/engine/strictest-of.ts"],
    tests: ["test/governance/engine/strictest-of.test.ts", "test/governance/verdict/secret-policy.test.ts"],
  },
  "approval-form": { files: ["src/shim/approval-form.ts"], tests: ["test/shim/approval-form.test.ts"] },
  "input-asks": { files: ["src/shim/input-asks.ts"], tests: ["test/e2e/eras.test.ts", "test/e2e/eras-approvals.test.ts"] },
  "definition-guard": {
    files: ["src/shim/definition-guard.ts"],
    tests: ["test/e2e/attacks/tool-poisoning.test.ts", "test/e2e/attacks/tool-rug-pull.test.ts", "test/e2e/definition-pins.test.ts"],
  },
  redact: {
    files: ["src/telemetry/redact.ts"],
    tests: ["test/telemetry/redact.test.ts", "test/governance/verdict/approval-prompt.test.ts", "test/governance/approval/slack-message.test.ts"],
  },
  "secret-scanner": {
    files: ["src/telemetry/secret-*.ts"],
    tests: ["test/telemetry/secret-scan.test.ts", "test/telemetry/redact.test.ts", "test/shim/result-scanner.test.ts"],
  },
  "pipeline-stages": {
    files: ["src/pipeline/stages.ts", "src/pipeline/decide-stage.ts", "src/pipeline/decision-failed.ts", "src/pipeline/audit-stage.ts", "src/pipeline/call-record.ts"],
    tests: ["test/pipeline/stages.test.ts", "test/pipeline/security-stages.test.ts"],
  },
  "shim-stages": {
    files: ["src/shim/stages/*.ts"],
    tests: [
      "test/shim/stages.test.ts",
      "test/shim/stages/parse-stage.test.ts",
      "test/shim/stages/lists-stage.test.ts",
      "test/shim/stages/definitions-stage.test.ts",
      "test/shim/stages/decide-stage.test.ts",
      "test/shim/pipeline-walk.test.ts",
    ],
  },
  "hook-pipeline": { files: ["src/hook/hook-pipeline.ts"], tests: ["test/hook/hook-pipeline.test.ts"] },
  "arbiter-decider": { files: ["src/arbiter/arbiter-decider.ts"], tests: ["test/arbiter/arbiter-decider.test.ts", "test/arbiter/arbiter-pipeline.test.ts"] },
  "coverage-gate": { files: ["src/wrap/coverage-gate.ts"], tests: ["test/wrap/coverage-gate.test.ts", "test/e2e/attacks/claude-plugins.test.ts"] },
  "safe-open": {
    files: ["src/core/safe-open.ts"],
    tests: ["test/core/safe-open.test.ts", "test/core/atomic-write.test.ts", "test/wrap/lock.test.ts", "test/wrap/backup.test.ts"],
  },
};

const ROOT = resolve(import.meta.dir, "..");
const REPORTS = join(ROOT, "reports", "mutation");
const ACTIVE_MUTANT = "__STRYKER_ACTIVE_MUTANT__";

function targetNamed(name: string): Target {
  const target = TARGETS[name];
  if (!target) throw new Error(`no mutation target "${name}" (known: ${Object.keys(TARGETS).join(", ")})`);
  return target;
}

const needsBinary = (target: Target): boolean => target.tests.some((file) => file.startsWith("test/e2e/"));

/** Stryker's command, once per mutant (and once without one, the dry run), in its sandbox. */
async function guard(name: string): Promise<number> {
  const target = targetNamed(name);
  if (needsBinary(target)) {
    const mutant = process.env[ACTIVE_MUTANT];
    const banner = mutant === undefined ? undefined : `globalThis.__stryker__ = { activeMutant: ${JSON.stringify(mutant)} };`;
    await compileTarget({ bunTarget: "host", outfile: "dist/thoughtgate", bytecode: false, ...(banner === undefined ? {} : { banner }) });
  }
  const tests = Bun.spawn([process.execPath, "run", "test/run.ts", ...target.tests], { stdio: ["ignore", "inherit", "inherit"] });
  return await tests.exited;
}

type Counts = { killed: number; timeout: number; survived: number; noCoverage: number; errors: number };

/** Stryker's mutation score: detected (killed or timed out) over all valid mutants. */
function scoresOf(reportPath: string): Map<string, Counts> {
  const report = JSON.parse(readFileSync(reportPath, "utf8")) as { files: Record<string, { mutants: { status: string }[] }> };
  const out = new Map<string, Counts>();
  for (const [file, { mutants }] of Object.entries(report.files)) {
    const counts: Counts = { killed: 0, timeout: 0, survived: 0, noCoverage: 0, errors: 0 };
    for (const { status } of mutants) {
      if (status === "Killed") counts.killed += 1;
      else if (status === "Timeout") counts.timeout += 1;
      else if (status === "Survived") counts.survived += 1;
      else if (status === "NoCoverage") counts.noCoverage += 1;
      else if (status === "CompileError" || status === "RuntimeError") counts.errors += 1;
    }
    out.set(file, counts);
  }
  return out;
}

function scoreText(c: Counts): string {
  const valid = c.killed + c.timeout + c.survived + c.noCoverage;
  return valid === 0 ? "—" : `${((100 * (c.killed + c.timeout)) / valid).toFixed(1)}%`;
}

async function run(names: string[], only: string[]): Promise<number> {
  mkdirSync(REPORTS, { recursive: true });
  const rows: string[] = [];
  let failed = 0;
  for (const name of names) {
    const target = targetNamed(name);
    const config = join(REPORTS, `${name}.stryker.json`);
    const report = join(REPORTS, `${name}.json`);
    writeFileSync(
      config,
      `${JSON.stringify(
        {
          testRunner: "command",
          commandRunner: { command: `bun run scripts/mutation.ts guard ${name}` },
          mutate: only.length > 0 ? only : target.files,
          concurrency: 1,
          reporters: ["clear-text", "json", "progress-append-only"],
          jsonReporter: { fileName: report },
          tempDirName: ".stryker-tmp",
          ignorePatterns: ["dist", "reports"],
          cleanTempDir: true,
        },
        null,
        2,
      )}\n`,
    );
    const started = performance.now();
    const stryker = Bun.spawn([process.execPath, "--bun", join(ROOT, "node_modules/.bin/stryker"), "run", config], {
      cwd: ROOT,
      stdio: ["ignore", "inherit", "inherit"],
    });
    const code = await stryker.exited;
    const minutes = ((performance.now() - started) / 60_000).toFixed(1);
    if (code !== 0) {
      failed += 1;
      rows.push(`| ${name} | Stryker failed (exit ${code}) | | | | | ${minutes} min |`);
      continue;
    }
    for (const [file, c] of scoresOf(report)) {
      rows.push(`| ${file} | ${scoreText(c)} | ${c.killed} | ${c.timeout} | ${c.survived} | ${c.noCoverage} | ${minutes} min (${name}) |`);
    }
  }
  console.log("\n| File | Score | Killed | Timed out | Survived | No coverage | Run |\n|---|---|---|---|---|---|---|");
  for (const row of rows) console.log(row);
  return failed === 0 ? 0 : 1;
}

function list(): void {
  for (const [name, target] of Object.entries(TARGETS)) {
    console.log(`${name}${needsBinary(target) ? " (e2e: rebuilds the binary per mutant)" : ""}`);
    console.log(`  mutates: ${target.files.join(" ")}`);
    console.log(`  guarded by: ${target.tests.join(" ")}`);
  }
}

const args = Bun.argv.slice(2);
if (args[0] === "guard" && args[1] !== undefined) process.exitCode = await guard(args[1]);
else if (args[0] === "--list") list();
else {
  const names: string[] = [];
  const only: string[] = [];
  for (let i = 0; i < args.length; i++) {
    const arg = args[i] as string;
    if (arg === "--mutate") {
      const pattern = args[++i];
      if (pattern === undefined) throw new Error("--mutate needs a file or file:from-to");
      only.push(pattern);
    } else {
      names.push(arg);
    }
  }
  process.exitCode = await run(names.length > 0 ? names : Object.keys(TARGETS), only);
}
