import { readFileSync } from "node:fs";
import { CallAssembler } from "./call-assembler.ts";
import type { LogCall } from "./log-call.ts";

/**
 * Every call of one record file, assembled in memory (no index): what wrap's end summary lists
 * (the calls a person approved, the calls denied). A file that cannot be read has no calls.
 */
export function callsOfFile(path: string, session: string | null): LogCall[] {
  let text: string;
  try {
    text = readFileSync(path, "utf8");
  } catch {
    return [];
  }
  const assembler = new CallAssembler({ session, fileKey: path, loadCall: () => null, loadRun: () => null });
  for (const line of text.split("\n")) {
    if (line === "") continue;
    try {
      const event = JSON.parse(line) as Record<string, unknown>;
      if (event !== null && typeof event === "object") assembler.add(event);
    } catch {
      // A line cut short by a crash: the rest still counts.
    }
  }
  return [...assembler.changed.values()].toSorted((a, b) => a.time.localeCompare(b.time));
}
