import { dlopen, FFIType } from "bun:ffi";
import { closeSync, openSync, readSync, writeSync } from "node:fs";
import { bestEffort, messageOf } from "./errors.ts";

/**
 * The process's controlling terminal (`/dev/tty`), where a person sitting at it can be asked
 * something that no pipe, file or agent's tool call can answer for them: an agent's shell tool runs
 * its commands with no controlling terminal at all (measured: Claude Code's Bash tool starts `bash`
 * in a session of its own, `tty` says "not a tty"), so opening it fails there. A process in the
 * terminal's background group would be stopped (SIGTTIN) by reading it, so that is refused too.
 */
type Terminal = {
  /**
   * Drop what was typed before now, show `question`, and read one line typed after it (without its
   * newline); null at end of input.
   */
  ask(question: string): string | null;
  close(): void;
};

export type TerminalResult = { ok: true; terminal: Terminal } | { ok: false; why: string };

type Libc = { tcgetpgrp(fd: number): number; getpgrp(): number; tcflush(fd: number, queue: number): number };
let libc: Libc | undefined;

// <termios.h>: the input queue (Linux TCIFLUSH 0, macOS 1).
const TCIFLUSH = process.platform === "darwin" ? 1 : 0;

/** Loaded on first use: only the commands that ask a person pay for dlopen. */
function loadLibc(): Libc {
  if (libc) return libc;
  const symbols = {
    tcgetpgrp: { args: [FFIType.i32], returns: FFIType.i32 },
    getpgrp: { args: [], returns: FFIType.i32 },
    tcflush: { args: [FFIType.i32, FFIType.i32], returns: FFIType.i32 },
  } as const;
  const lib = dlopen(process.platform === "darwin" ? "libSystem.B.dylib" : "libc.so.6", symbols);
  libc = { tcgetpgrp: (fd) => lib.symbols.tcgetpgrp(fd), getpgrp: () => lib.symbols.getpgrp(), tcflush: (fd, queue) => lib.symbols.tcflush(fd, queue) };
  return libc;
}

export function openControllingTerminal(path = "/dev/tty"): TerminalResult {
  let fd: number;
  try {
    fd = openSync(path, "r+");
  } catch (error) {
    return { ok: false, why: `no controlling terminal (${messageOf(error).replace(/,.*$/, "")})` };
  }
  const c = loadLibc();
  if (c.tcgetpgrp(fd) !== c.getpgrp()) {
    bestEffort(() => closeSync(fd));
    return { ok: false, why: "not in the foreground of its terminal" };
  }
  const buffer = Buffer.alloc(1024);
  return {
    ok: true,
    terminal: {
      ask(question) {
        // Typed ahead, or pushed into the terminal before the question was shown: never an answer to it.
        c.tcflush(fd, TCIFLUSH);
        bestEffort(() => writeSync(fd, question));
        let line = "";
        for (;;) {
          const read = readSync(fd, buffer, 0, buffer.length, null);
          if (read <= 0) return line === "" ? null : line;
          line += buffer.toString("utf8", 0, read);
          const newline = line.indexOf("\n");
          if (newline !== -1) return line.slice(0, newline).replace(/\r$/, "");
        }
      },
      close: () => void bestEffort(() => closeSync(fd)),
    },
  };
}
