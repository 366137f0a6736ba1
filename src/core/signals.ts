import { constants } from "node:os";

/**
 * A shell's exit code for a process that a signal ended: 128 + the signal's number on this
 * platform (128 when unknown).
 */
export function exitCodeForSignal(signal: string | number | null | undefined): number {
  if (typeof signal === "number") return 128 + signal;
  const number = signal ? constants.signals[signal as NodeJS.Signals] : undefined;
  return 128 + (number ?? 0);
}
