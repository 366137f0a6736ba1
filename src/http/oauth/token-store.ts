import { chmodSync, closeSync, fsyncSync, lstatSync, mkdirSync, openSync, readdirSync, readFileSync, renameSync, rmSync, writeSync } from "node:fs";
import { join } from "node:path";
import * as v from "valibot";
import { stateDir } from "../../core/paths.ts";

/**
 * OAuth credentials for remote MCP servers, one file per server under the state directory
 * (`~/.local/state/thoughtgate/oauth/`, the directory 0700, each file 0600, written whole by
 * rename). Not the OS keychain: reaching it without a native module means the `security` or
 * `secret-tool` commands, which take the secret on their command line (visible to every user in
 * the process list) or need a desktop session to unlock, which a headless box does not have. A
 * file that others could read, or that is a link, is refused rather than used.
 */
const StoredAuth = v.object({
  server: v.string(),
  issuer: v.string(),
  tokenEndpoint: v.string(),
  resource: v.string(),
  client: v.object({ id: v.string(), secret: v.optional(v.string()), registered: v.boolean() }),
  scope: v.nullable(v.string()),
  accessToken: v.string(),
  refreshToken: v.nullable(v.string()),
  /** Epoch milliseconds; null when the server did not say. */
  expiresAt: v.nullable(v.number()),
  savedAt: v.string(),
});
export type StoredAuth = v.InferOutput<typeof StoredAuth>;

function oauthDir(env: NodeJS.ProcessEnv = process.env): string {
  return join(stateDir(env), "oauth");
}

/** The file of one server: named by a digest of its canonical URL (no URL in a file name). */
export function tokenPath(server: string, env: NodeJS.ProcessEnv = process.env): string {
  const digest = new Bun.CryptoHasher("sha256").update(server).digest("hex").slice(0, 32);
  return join(oauthDir(env), `${digest}.json`);
}

export function loadAuth(server: string, env: NodeJS.ProcessEnv = process.env): StoredAuth | null {
  const path = tokenPath(server, env);
  let stat;
  try {
    stat = lstatSync(path);
  } catch {
    return null;
  }
  if (!stat.isFile()) throw new Error(`${path} is not a regular file: not used`);
  if ((stat.mode & 0o077) !== 0) throw new Error(`${path} can be read by others (mode ${(stat.mode & 0o777).toString(8)}): not used; remove it and log in again`);
  if (process.getuid && stat.uid !== process.getuid()) throw new Error(`${path} belongs to another user: not used`);
  const parsed = v.safeParse(StoredAuth, JSON.parse(readFileSync(path, "utf8")));
  if (!parsed.success) throw new Error(`${path} is not a ThoughtGate token file: not used`);
  if (parsed.output.server !== server) throw new Error(`${path} holds the tokens of ${parsed.output.server}, not ${server}: not used`);
  return parsed.output;
}

export function saveAuth(auth: StoredAuth, env: NodeJS.ProcessEnv = process.env): string {
  const dir = oauthDir(env);
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  chmodSync(dir, 0o700);
  const path = tokenPath(auth.server, env);
  const temp = `${path}.${process.pid}.tmp`;
  const fd = openSync(temp, "wx", 0o600);
  try {
    writeSync(fd, `${JSON.stringify(auth, null, 2)}\n`);
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
  renameSync(temp, path);
  return path;
}

export function removeAuth(server: string, env: NodeJS.ProcessEnv = process.env): boolean {
  const path = tokenPath(server, env);
  try {
    lstatSync(path);
  } catch {
    return false;
  }
  rmSync(path);
  return true;
}

/** Every stored server (files that cannot be read are reported, not skipped). */
export function listAuth(env: NodeJS.ProcessEnv = process.env): Array<{ path: string; auth: StoredAuth | null; problem: string | null }> {
  const dir = oauthDir(env);
  let names: string[];
  try {
    names = readdirSync(dir).filter((name) => name.endsWith(".json"));
  } catch {
    return [];
  }
  return names.sort().map((name) => {
    const path = join(dir, name);
    try {
      const raw = JSON.parse(readFileSync(path, "utf8")) as { server?: unknown };
      const auth = typeof raw.server === "string" ? loadAuth(raw.server, env) : null;
      return { path, auth, problem: auth ? null : "not a ThoughtGate token file" };
    } catch (error) {
      return { path, auth: null, problem: (error as Error).message };
    }
  });
}
