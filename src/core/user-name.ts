import { readFileSync } from "node:fs";

/**
 * The name of the user this process runs as, from the passwd entry of its uid: what the OTLP
 * export's `user.name` and the service's `decided_by.who` say. Not `os.userInfo()`: Bun answers
 * with `$USER` (or "unknown" when it is unset, as under cron, systemd or an MDM launcher) instead
 * of reading the passwd database. `/etc/passwd` first (no process to start); else `id -un`, which
 * also asks the directory services (NSS, LDAP, macOS's Open Directory); else `$USER`/`$LOGNAME`;
 * undefined when none of them knows.
 */
export function localUserName(env: NodeJS.ProcessEnv = process.env): string | undefined {
  const uid = process.getuid?.();
  if (uid !== undefined) {
    const fromFile = passwdName(uid);
    if (fromFile) return fromFile;
    const id = Bun.spawnSync(["id", "-un"], { stdin: "ignore", stdout: "pipe", stderr: "ignore", env: { PATH: "/usr/bin:/bin" } });
    const fromId = id.exitCode === 0 ? id.stdout.toString().trim() : "";
    if (fromId) return fromId;
  }
  return env.USER?.trim() || env.LOGNAME?.trim() || undefined;
}

/** The first `/etc/passwd` entry with this uid (`name:x:uid:…`), or undefined. */
function passwdName(uid: number): string | undefined {
  let text: string;
  try {
    text = readFileSync("/etc/passwd", "utf8");
  } catch {
    return undefined;
  }
  for (const line of text.split("\n")) {
    const [name, , id] = line.split(":");
    if (name && !name.startsWith("#") && id === String(uid)) return name;
  }
  return undefined;
}
