/**
 * What tracing costs a hook that does not trace: nothing is loaded (docs/governance.md, "Traces").
 * One call decided as `thoughtgate hook` decides it, in a fresh process (test/fixtures/hook-modules-fixture.ts),
 * with and without `telemetry.otlp` in the user's policy; with it, the same check sees the
 * exporter, so it can fail.
 */
import { afterAll, describe, expect, test } from "bun:test";
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { FakeOtlpCollector } from "../support/fake-otlp-collector.ts";
import { fixture, tempDir } from "../support/harness.ts";

const collector = new FakeOtlpCollector();
afterAll(() => collector.stop());

async function decideWith(policy: string): Promise<{ decision: string; loaded: string[] }> {
  using dir = tempDir();
  const config = join(dir.path, "config");
  mkdirSync(join(config, "thoughtgate"), { recursive: true });
  writeFileSync(join(config, "thoughtgate", "thoughtgate.yaml"), policy);
  const env: Record<string, string> = { PATH: process.env.PATH ?? "/usr/bin:/bin", HOME: dir.path, XDG_CONFIG_HOME: config, XDG_STATE_HOME: join(dir.path, "state"), OTEL_EXPORTER_OTLP_ENDPOINT: collector.endpoint };
  const proc = Bun.spawn(fixture("hook-modules-fixture.ts"), { cwd: dir.path, env, stdout: "pipe", stderr: "pipe" });
  const [stdout, stderr, code] = await Promise.all([new Response(proc.stdout).text(), new Response(proc.stderr).text(), proc.exited]);
  expect(code, stderr).toBe(0);
  return JSON.parse(stdout) as { decision: string; loaded: string[] };
}

const POLICY = "schema: 1\ngovernance:\n  defaults: { action: forward }\n";

describe("a hook call's tracing", () => {
  test("off (no telemetry.otlp, whatever OTEL_* says): neither the tracer, the exporter nor OpenTelemetry is loaded, and nothing is sent", async () => {
    expect(await decideWith(POLICY)).toEqual({ decision: "forward", loaded: [] });
    expect(collector.requests).toEqual([]);
  });

  test("on: the hook's spans and the exporter are loaded, and the call's span is sent before the call returns", async () => {
    const { decision, loaded } = await decideWith(`${POLICY}telemetry:\n  otlp: {}\n`);
    expect(decision).toBe("forward");
    expect(loaded).toEqual(["@opentelemetry", "hook/hook-trace", "pipeline/call-spans", "telemetry/tracing/otlp-export", "telemetry/tracing/start"]);
    expect(collector.spans.map((span) => span.name)).toEqual(["tools/call read"]);
  });
});
