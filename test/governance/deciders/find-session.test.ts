/**
 * Which session a shim belongs to (src/governance/deciders/find-session.ts): from its ancestors, else
 * from THOUGHTGATE_SESSION, else none, only ever in the user's own state directory; a session whose wrap is gone, or a variable that names no
 * session, is an ended session (the shim must not govern on its own).
 */
import { describe, expect, test } from "bun:test";
import { chmodSync, mkdirSync, readFileSync, renameSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { findSession } from "../../../src/governance/deciders/find-session.ts";
import { sessionPaths } from "../../../src/core/session-file.ts";
import { indexSessionPid } from "../../../src/governance/wire/session-index.ts";
import { processStartId } from "../../../src/core/process-identity.ts";
import { tempDir } from "../../support/harness.ts";

const ID = "0199a1b2-c3d4-7e5f-8a9b-0c1d2e3f4a5b";

function state() {
  const dir = tempDir();
  const env = { HOME: dir.path, XDG_STATE_HOME: join(dir.path, "state") };
  return { dir, env };
}

function writeDescriptor(env: NodeJS.ProcessEnv, id: string, wrapPid: number, agentPid: number | null = null) {
  const paths = sessionPaths(id, env);
  mkdirSync(paths.dir, { recursive: true });
  const descriptor = {
    version: "9.9.9",
    target: "bun-linux-x64",
    pid: wrapPid,
    startId: processStartId(wrapPid),
    binary: "/b",
    shim: "/pins/thoughtgate",
    startedAt: "2026-11-28T10:00:00Z",
    endpoint: "http://127.0.0.1:4321",
    profile: "development",
    agent: { type: "claude-code", command: ["claude", "-p", "hi"], pid: agentPid, startId: agentPid === null ? null : processStartId(agentPid) },
    cwd: "/work/project/sub",
    project: "/work/project",
  };
  writeFileSync(paths.descriptor, JSON.stringify(descriptor));
  return paths;
}

/** A pid that was a process and is no more. */
async function deadPid(): Promise<number> {
  const proc = Bun.spawn(["true"]);
  await proc.exited;
  return proc.pid;
}

describe("findSession", () => {
  test("no variable and no wrap running: no session", async () => {
    const { dir, env } = state();
    using _ = dir;
    expect(await findSession(env)).toEqual({ kind: "none" });
  });

  test("THOUGHTGATE_SESSION naming a session whose wrap runs: joined, with what its shims need", async () => {
    const { dir, env } = state();
    using _ = dir;
    const paths = writeDescriptor(env, ID, process.pid);
    expect(await findSession({ ...env, THOUGHTGATE_SESSION: ID })).toEqual({
      kind: "joined",
      session: {
        id: ID,
        via: "environment",
        dir: paths.dir,
        events: paths.events,
        secretFile: paths.secret,
        endpoint: "http://127.0.0.1:4321",
        profile: "development",
        agent: { type: "claude-code", command: ["claude", "-p", "hi"] },
        cwd: "/work/project/sub",
        project: "/work/project",
        version: "9.9.9",
        target: "bun-linux-x64",
        shim: "/pins/thoughtgate",
        wrap: { pid: process.pid, startId: processStartId(process.pid) },
        governedServers: [],
      },
    });
  });

  test("THOUGHTGATE_SESSION naming a session whose wrap is gone, no session, or no run id: ended, saying why", async () => {
    const { dir, env } = state();
    using _ = dir;
    const gone = await deadPid();
    writeDescriptor(env, ID, gone);
    expect(await findSession({ ...env, THOUGHTGATE_SESSION: ID })).toEqual({ kind: "ended", id: ID, via: "environment", why: `the thoughtgate wrap of session ${ID} (pid ${gone}) has ended` });
    const other = "0199a1b2-c3d4-7e5f-8a9b-000000000000";
    expect(await findSession({ ...env, THOUGHTGATE_SESSION: other })).toMatchObject({ kind: "ended", id: other, why: expect.stringContaining(`no thoughtgate wrap session ${other} can be read`) });
    for (const value of ["", "../../etc", "yes"]) {
      expect(await findSession({ ...env, THOUGHTGATE_SESSION: value })).toMatchObject({ kind: "ended", why: `$THOUGHTGATE_SESSION is ${JSON.stringify(value)}, which names no thoughtgate wrap session` });
    }
  });

  test("no variable: the session whose wrap is an ancestor (the agent passed no environment)", async () => {
    const { dir, env } = state();
    using _ = dir;
    // This test process stands for the wrap, a child of it for the shim.
    writeDescriptor(env, ID, process.pid);
    indexSessionPid(process.pid, sessionPaths(ID, env).dir, env);
    const child = await childLookup(env);
    expect(child).toMatchObject({ kind: "joined", session: { id: ID, via: "ancestry" } });
  });

  test("ancestry before the variable: an entry's THOUGHTGATE_SESSION naming another of the user's sessions does not move a shim out of the session it runs in", async () => {
    const { dir, env } = state();
    using _ = dir;
    const other = "0199a1b2-c3d4-7e5f-8a9b-000000000000";
    writeDescriptor(env, ID, process.pid);
    writeDescriptor(env, other, process.pid);
    indexSessionPid(process.pid, sessionPaths(ID, env).dir, env);
    expect(await childLookup({ ...env, THOUGHTGATE_SESSION: other })).toMatchObject({ kind: "joined", session: { id: ID, via: "ancestry" } });
  });

  test("a descriptor naming pid 1 with no start stamp is no running wrap: ended", async () => {
    const { dir, env } = state();
    using _ = dir;
    const paths = writeDescriptor(env, ID, process.pid);
    writeFileSync(paths.descriptor, JSON.stringify({ ...JSON.parse(readFileSync(paths.descriptor, "utf8")), pid: 1, startId: null }));
    expect(await findSession({ ...env, THOUGHTGATE_SESSION: ID })).toEqual({ kind: "ended", id: ID, via: "environment", why: `the thoughtgate wrap of session ${ID} (pid 1) has ended` });
  });

  test("a session directory others can write, or a descriptor that is a symbolic link, is not the user's: ended, saying why; such an index is not read", async () => {
    const { dir, env } = state();
    using _ = dir;
    const paths = writeDescriptor(env, ID, process.pid);
    chmodSync(paths.dir, 0o777);
    expect(await findSession({ ...env, THOUGHTGATE_SESSION: ID })).toEqual({ kind: "ended", id: ID, via: "environment", why: `session ${ID} is not one of this user's thoughtgate wrap sessions: ${paths.dir} can be written by anyone (mode 777)` });
    chmodSync(paths.dir, 0o700);
    renameSync(paths.descriptor, join(dir.path, "elsewhere.json"));
    symlinkSync(join(dir.path, "elsewhere.json"), paths.descriptor);
    expect(await findSession({ ...env, THOUGHTGATE_SESSION: ID })).toMatchObject({ kind: "ended", why: `session ${ID} is not one of this user's thoughtgate wrap sessions: ${paths.descriptor} is a symbolic link` });
    rmSync(paths.descriptor);
    renameSync(join(dir.path, "elsewhere.json"), paths.descriptor);
    indexSessionPid(process.pid, paths.dir, env);
    chmodSync(join(env.XDG_STATE_HOME, "thoughtgate", "session-pids"), 0o775);
    expect(await childLookup(env)).toEqual({ kind: "none" });
  });

  test("no variable: the session whose agent is an ancestor, after its wrap was killed: ended", async () => {
    const { dir, env } = state();
    using _ = dir;
    const gone = await deadPid();
    // This test process stands for the agent whose wrap died, a child of it for the shim.
    writeDescriptor(env, ID, gone, process.pid);
    indexSessionPid(process.pid, sessionPaths(ID, env).dir, env);
    expect(await childLookup(env)).toMatchObject({ kind: "ended", id: ID, via: "ancestry" });
  });

  test("an index entry for a pid that is not the session's wrap or agent (a reused pid) is no session", async () => {
    const { dir, env } = state();
    using _ = dir;
    writeDescriptor(env, ID, await deadPid());
    indexSessionPid(process.pid, sessionPaths(ID, env).dir, env);
    expect(await childLookup(env)).toEqual({ kind: "none" });
  });
});

/** findSession as a child process of this one sees it (no THOUGHTGATE_SESSION). */
async function childLookup(env: NodeJS.ProcessEnv): Promise<unknown> {
  const script = `import { findSession } from ${JSON.stringify(join(import.meta.dir, "../../../src/governance/deciders/find-session.ts"))};
console.log(JSON.stringify(await findSession(${JSON.stringify(env)})));`;
  const proc = Bun.spawn([process.execPath, "-e", script], { stdout: "pipe", stderr: "inherit", env: { PATH: process.env.PATH ?? "/usr/bin:/bin" } });
  const out = await new Response(proc.stdout).text();
  await proc.exited;
  return JSON.parse(out) as unknown;
}
