import { expect, test } from "bun:test";
import { chmodSync, existsSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { findServices, publishService, resolveApprovalTarget, servicesDir, sessionName, type ServiceDescriptor } from "../../../src/governance/wire/service-descriptor.ts";
import { tempDir } from "../../support/harness.ts";

const KEY_A = "a".repeat(64);
const KEY_B = "b".repeat(64);
const descriptor = (pid: number, key: string, port = 4000 + pid): ServiceDescriptor => ({
  endpoint: `http://127.0.0.1:${port}`,
  pid,
  start_id: `start-${pid}`,
  kind: "wrap",
  cli_key: key,
  started_at: "2026-01-01T00:00:00.000Z",
});

function fresh() {
  const dir = tempDir();
  return { dir, env: { XDG_STATE_HOME: dir.path } as NodeJS.ProcessEnv };
}

test("a descriptor is 0600 in a 0700 directory of the state dir, and removing it is idempotent", () => {
  const { dir, env } = fresh();
  using _ = dir;
  const remove = publishService(descriptor(11, KEY_A), env);
  const path = join(servicesDir(env), "11.json");
  expect(servicesDir(env)).toBe(join(dir.path, "thoughtgate", "services"));
  expect(statSync(path).mode & 0o777).toBe(0o600);
  expect(statSync(servicesDir(env)).mode & 0o777).toBe(0o700);
  expect(JSON.parse(readFileSync(path, "utf8"))).toEqual(descriptor(11, KEY_A));
  remove();
  remove();
  expect(existsSync(path)).toBe(false);
});

test("only live services count; a dead one's descriptor is removed, a loose or broken one is skipped and said", () => {
  const { dir, env } = fresh();
  using _ = dir;
  publishService(descriptor(11, KEY_A), env);
  publishService(descriptor(12, KEY_B), env);
  publishService(descriptor(13, KEY_B), env);
  chmodSync(join(servicesDir(env), "13.json"), 0o644);
  writeFileSync(join(servicesDir(env), "14.json"), '{"endpoint":"http://evil.example:80"}', { mode: 0o600 });
  const alive = (pid: number, start: string | null) => pid !== 12 && start === `start-${pid}`;
  const found = findServices(alive, env);
  expect(found.live.map((d) => d.pid)).toEqual([11]);
  expect(found.ignored).toHaveLength(2);
  expect(found.ignored[0]).toContain("13.json: mode 644: readable by others, not used");
  expect(found.ignored[1]).toContain("14.json: endpoint: expected a loopback http URL");
  expect(existsSync(join(servicesDir(env), "12.json"))).toBe(false);
});

test("the CLI target: flags or environment first, else the one live service; several need --endpoint", () => {
  const { dir, env } = fresh();
  using _ = dir;
  const always = () => true;
  const none = { endpoint: undefined, key: undefined };
  expect(() => resolveApprovalTarget(none, always, env)).toThrow("no running governance service found");
  expect(resolveApprovalTarget({ endpoint: "http://127.0.0.1:9/", key: "k" }, always, env)).toEqual({ endpoint: "http://127.0.0.1:9", key: "k" });
  expect(resolveApprovalTarget(none, always, { ...env, THOUGHTGATE_GOVERNANCE_ENDPOINT: "http://127.0.0.1:9", THOUGHTGATE_APPROVAL_KEY: "k" })).toEqual({ endpoint: "http://127.0.0.1:9", key: "k" });

  publishService(descriptor(11, KEY_A), env);
  expect(resolveApprovalTarget(none, always, env)).toEqual({ endpoint: "http://127.0.0.1:4011", key: KEY_A });
  publishService(descriptor(12, KEY_B), env);
  expect(() => resolveApprovalTarget(none, always, env)).toThrow(
    "2 governance services are running: http://127.0.0.1:4011 (wrap, pid 11), http://127.0.0.1:4012 (wrap, pid 12); pass --endpoint URL to choose one",
  );
  expect(resolveApprovalTarget({ endpoint: "http://127.0.0.1:4012", key: undefined }, always, env)).toEqual({ endpoint: "http://127.0.0.1:4012", key: KEY_B });
  expect(resolveApprovalTarget({ endpoint: undefined, key: KEY_A }, always, env)).toEqual({ endpoint: "http://127.0.0.1:4011", key: KEY_A });
  expect(() => resolveApprovalTarget({ endpoint: "http://127.0.0.1:1", key: undefined }, always, env)).toThrow("no running governance service found at http://127.0.0.1:1 to take its approval key from");
});

test("a session is named as a person tells sessions apart: agent, project directory, start; a serve by its pid", () => {
  expect(sessionName({ kind: "wrap", agent: "claude", project: "/home/ada/site", started_at: "2026-11-29T08:01:13.000Z", pid: 42 })).toBe("claude in /home/ada/site, started 2026-11-29 08:01 UTC (thoughtgate wrap, pid 42)");
  expect(sessionName({ kind: "serve", started_at: "2026-11-29T08:01:13.000Z", pid: 7 })).toBe("thoughtgate serve, started 2026-11-29 08:01 UTC (pid 7)");
  expect(sessionName({ kind: "wrap", agent: "codex", project: "/p", started_at: "2026-11-29T08:01:13.000Z" })).toBe("codex in /p, started 2026-11-29 08:01 UTC (thoughtgate wrap)");
});
