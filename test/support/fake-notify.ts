/**
 * A fake `notify-send` on PATH that records every notification: its arguments (one `<pid>.args`
 * file each, NUL-separated), `--action` in its `--help` (as libnotify 0.7.9+ has), and with
 * `--wait` it blocks until the test "clicks" an action (written into its `<pid>.click` FIFO) and
 * prints it, as the real one prints the action a person clicked. SIGINT or SIGTERM end it and
 * leave `<pid>.ended` saying so, so a test sees the notification withdrawn.
 */
import { chmodSync, existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { tempDir, waitFor } from "./harness.ts";

const SCRIPT = `#!/bin/sh
dir="\${FAKE_NOTIFY_DIR:?}"
if [ "$1" = "--help" ]; then
  echo "  -A, --action=[NAME=]Text...       Specifies the actions to display to the user."
  exit 0
fi
wait=no
for arg in "$@"; do [ "$arg" = "--wait" ] && wait=yes; done
[ "$wait" = yes ] && mkfifo "$dir/$$.click"
# Before the notification is seen: a withdrawal right after it shows must find the trap set.
[ "$wait" = yes ] && trap 'echo signal > "$dir/$$.ended"; exit 0' INT TERM
printf '%s\\0' "$@" > "$dir/$$.args.tmp" && mv "$dir/$$.args.tmp" "$dir/$$.args"
[ "$wait" = yes ] || exit 0
read -r action < "$dir/$$.click" 2>/dev/null
echo "$action"
echo "$action" > "$dir/$$.ended"
`;

export type Notification = { pid: number; args: string[]; waiting: boolean; title: string; body: string };

export type FakeNotifySend = Disposable & {
  /** PATH with the fake first, and where it records. */
  env: Record<string, string>;
  notifications(): Notification[];
  /** Click an action (`once`, `session`, `deny`) on a notification that waits for one. */
  click(pid: number, action: string): Promise<void>;
  /** What ended a waiting notification: the action clicked, `signal`, or null while it waits. */
  ended(pid: number): string | null;
};

export function fakeNotifySend(path = process.env.PATH ?? "/usr/bin:/bin"): FakeNotifySend {
  const dir = tempDir("thoughtgate-notify-");
  const bin = join(dir.path, "bin");
  const records = join(dir.path, "records");
  mkdirSync(bin);
  mkdirSync(records);
  writeFileSync(join(bin, "notify-send"), SCRIPT);
  chmodSync(join(bin, "notify-send"), 0o755);
  return {
    env: { PATH: `${bin}:${path}`, FAKE_NOTIFY_DIR: records },
    notifications: () =>
      readdirSync(records)
        .filter((name) => name.endsWith(".args"))
        .map((name) => {
          const args = readFileSync(join(records, name), "utf8").split("\0").slice(0, -1);
          const positional = args.slice(args.indexOf("--") + 1);
          return { pid: Number(name.split(".")[0]), args, waiting: args.includes("--wait"), title: positional[0] ?? "", body: positional[1] ?? "" };
        })
        .sort((a, b) => a.pid - b.pid),
    click: async (pid, action) => {
      // The notification's `.args` appear just before it opens its FIFO to read: until it has,
      // opening the FIFO to write fails with ENXIO. Wait for the reader, not a fixed time.
      const fifo = join(records, `${pid}.click`);
      await waitFor(async () => {
        try {
          await Bun.write(fifo, `${action}\n`);
          return true;
        } catch (error) {
          if ((error as { code?: string }).code === "ENXIO") return false;
          throw error;
        }
      }, `notification ${pid} reading its click`);
    },
    ended: (pid) => {
      const file = join(records, `${pid}.ended`);
      return existsSync(file) ? readFileSync(file, "utf8").trim() : null;
    },
    [Symbol.dispose]: () => dir[Symbol.dispose](),
  };
}
