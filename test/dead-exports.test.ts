/**
 * No export that nothing imports: knip (knip.json: the entry points are the CLI, build.ts, scripts/
 * and every test) lists each export of `src/` that no other file uses. One used only in its own
 * file is module-private instead; one used nowhere is gone. So the face of a module is what others
 * use of it, and dead code does not sit behind an `export`. Fails naming each one.
 */
import { expect, test } from "bun:test";
import { join, resolve } from "node:path";

const ROOT = resolve(import.meta.dir, "..");

/** What knip's JSON reporter gives per file: each kind of issue, a list of names. */
type KnipReport = { issues: Array<{ file: string } & Record<string, Array<{ name: string }> | string>> };

/**
 * Constants of the shim and the arbiter exported for no one, left as they were while that code is
 * being restructured (docs/architecture.md, "One `tools/call`"): remove each entry with its export.
 */
const LEFT_FOR_NOW = new Set([
  "src/arbiter/call-table.ts: REMEMBERED_CALLS",
  "src/arbiter/protocol.ts: PROTOCOL_VERSION",
  "src/arbiter/protocol.ts: CAPABILITIES",
  "src/arbiter/run-arbiter.ts: WRITE_FAILURE_GRACE_MS",
  "src/shim/era.ts: META_CAPABILITIES",
  "src/shim/era.ts: META_CLIENT_INFO",
  "src/shim/input-asks.ts: APPROVAL_INPUT_KEY",
  "src/shim/proxy.ts: MAX_PENDING_DECISIONS",
  "src/shim/proxy.ts: SENDER_UNREAD_LIMIT_BYTES",
  "src/shim/proxy.ts: ORPHAN_TIMEOUT_MS",
  "src/shim/pump.ts: MAX_PENDING_DECISIONS",
  "src/shim/result-scanner.ts: SCANNED_METHODS",
]);

test("every export of src/ is imported by another file (knip)", async () => {
  // --cache keeps what knip learnt of unchanged files in node_modules/.cache/knip: ~3 s instead of ~6.
  await using knip = Bun.spawn([process.execPath, join(ROOT, "node_modules", "knip", "bin", "knip-bun.js"), "--cache", "--reporter", "json", "--no-progress"], {
    cwd: ROOT,
    stdout: "pipe",
    stderr: "pipe",
  });
  const [out, err] = await Promise.all([new Response(knip.stdout).text(), new Response(knip.stderr).text()]);
  await knip.exited;
  if (!out.startsWith("{")) throw new Error(`knip gave no report: ${err || out}`);
  const report = JSON.parse(out) as KnipReport;
  const found: string[] = [];
  for (const { file, ...kinds } of report.issues) {
    for (const [kind, items] of Object.entries(kinds)) {
      if (!Array.isArray(items)) continue;
      for (const item of items) {
        const entry = `${file}: ${item.name}`;
        if (!LEFT_FOR_NOW.has(entry)) found.push(`${entry} (${kind})`);
      }
    }
  }
  expect(found).toEqual([]);
});
