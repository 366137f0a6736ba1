import { afterEach, beforeEach, describe, expect, test } from "bun:test";
import { closeSync, constants, existsSync, fstatSync, linkSync, mkdirSync, readdirSync, readFileSync, readlinkSync, statSync, symlinkSync, writeFileSync, writeSync } from "node:fs";
import { join } from "node:path";
import { ThoughtGateError } from "../../src/core/errors.ts";
import { createExclusive, openOwnFile, readOwnFile, readRegularFile, refusal } from "../../src/core/safe-open.ts";
import { fixture, tempDir } from "../support/harness.ts";

let dir: ReturnType<typeof tempDir>;
let victim: string;
beforeEach(() => {
  dir = tempDir();
  victim = join(dir.path, "victim.txt");
  writeFileSync(victim, "the user's file\n");
});
afterEach(() => dir[Symbol.dispose]());

const at = (name: string) => join(dir.path, name);
const problemOf = (path: string, follow: boolean, maxBytes?: number) => {
  const read = readRegularFile(path, { follow, ...(maxBytes === undefined ? {} : { maxBytes }) });
  return read.ok ? "ok" : read.missing ? "missing" : read.problem;
};

function mkfifo(path: string): void {
  expect(Bun.spawnSync(["mkfifo", path]).exitCode).toBe(0);
}

describe("readRegularFile", () => {
  test("reads a regular file whole, through a symlink only when asked to follow", () => {
    symlinkSync(victim, at("link"));
    const read = readRegularFile(at("link"), { follow: true });
    expect(read.ok && read.bytes.toString()).toBe("the user's file\n");
    expect(problemOf(at("link"), false)).toBe("is a symbolic link, not a regular file");
    expect(problemOf(at("absent"), true)).toBe("missing");
    symlinkSync(at("nowhere"), at("dangling"));
    expect(problemOf(at("dangling"), true)).toBe("missing");
  });

  test("a FIFO with no writer is refused at once instead of blocking the read", () => {
    mkfifo(at("fifo"));
    const started = performance.now();
    expect(problemOf(at("fifo"), true)).toBe("is a FIFO (named pipe), not a regular file");
    expect(performance.now() - started).toBeLessThan(1_000);
  });

  test("/dev/zero, a directory and a socket are refused by what they are, without reading them", async () => {
    symlinkSync("/dev/zero", at("zero"));
    expect(problemOf(at("zero"), true)).toBe("is a character device, not a regular file");
    mkdirSync(at("dir"));
    expect(problemOf(at("dir"), true)).toBe("is a directory, not a regular file");
    const server = Bun.listen({ unix: at("sock"), socket: { data() {} } });
    try {
      expect(problemOf(at("sock"), true)).toBe("is a socket, not a regular file");
    } finally {
      server.stop(true);
    }
  });

  test("the size cap holds whether fstat tells the size or not (/proc files say 0)", () => {
    writeFileSync(at("ten"), "0123456789");
    expect(problemOf(at("ten"), false, 10)).toBe("ok");
    writeFileSync(at("eleven"), "0123456789A");
    expect(problemOf(at("eleven"), false, 10)).toMatch(/^is larger than/);
    expect(problemOf("/proc/self/status", true, 16)).toMatch(/^is larger than/);
    const status = readRegularFile("/proc/self/status", { follow: true });
    expect(status.ok && status.bytes.toString()).toContain("VmHWM");
  });
});

describe("openOwnFile", () => {
  test("creates a missing file and opens a regular one", () => {
    const fd = openOwnFile(at("own.lock"), "the lock file", constants.O_RDWR | constants.O_CREAT);
    writeSync(fd, "1234\n");
    closeSync(fd);
    closeSync(openOwnFile(at("own.lock"), "the lock file", constants.O_RDWR | constants.O_CREAT));
    expect(readFileSync(at("own.lock"), "utf8")).toBe("1234\n");
  });

  test("a symlink (to a file, or dangling), a hard link or a FIFO is refused with one line naming it; nothing is written", () => {
    symlinkSync(victim, at("to-victim"));
    symlinkSync(at("not-yet"), at("dangling"));
    linkSync(victim, at("hard"));
    mkfifo(at("fifo"));
    const open = (name: string) => () => openOwnFile(at(name), "the lock file", constants.O_RDWR | constants.O_CREAT);
    expect(open("to-victim")).toThrow(`refusing the lock file ${at("to-victim")}: it is a symbolic link, not a regular file; wrap neither reads nor writes through it (remove it, then run wrap again)`);
    expect(open("dangling")).toThrow("it is a symbolic link");
    expect(open("hard")).toThrow(`refusing the lock file ${at("hard")}: it has 2 hard links`);
    expect(open("fifo")).toThrow("it is a FIFO (named pipe)");
    expect({ victim: readFileSync(victim, "utf8"), created: existsSync(at("not-yet")), link: readlinkSync(at("to-victim")) }).toEqual({ victim: "the user's file\n", created: false, link: victim });
  });
});

describe("createExclusive and readOwnFile", () => {
  test("a new file is created; a regular file already there is reported as null, untouched", () => {
    const fd = createExclusive(at("backup"), "the backup");
    expect(fd).toBeNumber();
    closeSync(fd as number);
    expect(createExclusive(victim, "the backup")).toBeNull();
    expect(readFileSync(victim, "utf8")).toBe("the user's file\n");
  });

  test("a symlink where the file must be new is refused, and its target is neither created nor written", () => {
    symlinkSync(victim, at("to-victim"));
    symlinkSync(at("not-yet"), at("dangling"));
    expect(() => createExclusive(at("to-victim"), "the backup")).toThrow(`refusing the backup ${at("to-victim")}: it is a symbolic link`);
    expect(() => createExclusive(at("dangling"), "the backup")).toThrow("it is a symbolic link");
    expect({ victim: readFileSync(victim, "utf8"), created: existsSync(at("not-yet")) }).toEqual({ victim: "the user's file\n", created: false });
  });

  test("readOwnFile: null when missing, the bytes of a regular file, a refusal for a symlink", () => {
    symlinkSync(victim, at("journal.json"));
    expect(readOwnFile(at("absent"), "the wrap journal")).toBeNull();
    expect(readOwnFile(victim, "the wrap journal")?.toString()).toBe("the user's file\n");
    expect(() => readOwnFile(at("journal.json"), "the wrap journal")).toThrow(`refusing the wrap journal ${at("journal.json")}: it is a symbolic link`);
  });
});

describe("a link swapped in between the look and the open", () => {
  // Another process puts, as fast as it can, a regular file and then a symlink to the victim at the
  // path. The check before the open sees one, the open now and then the other: the open itself must
  // refuse the link (O_NOFOLLOW), or the lock write or the backup read lands in the victim.
  async function race(check: (path: string, victim: string) => void): Promise<void> {
    using dir = tempDir();
    const victim = join(dir.path, "victim");
    writeFileSync(victim, "the user's own file\n");
    const path = join(dir.path, "planted");
    await using flipper = Bun.spawn([...fixture("link-flipper-fixture.ts", path, victim)], { stdout: "pipe", stderr: "inherit" });
    const reader = flipper.stdout.getReader();
    await reader.read();
    reader.releaseLock();
    const deadline = performance.now() + 1_500;
    let tries = 0;
    while (performance.now() < deadline || tries < 2_000) {
      tries++;
      check(path, victim);
    }
    flipper.kill();
    await flipper.exited;
  }

  test("openOwnFile (a lock file): never an open descriptor of the victim", async () => {
    await race((path, victim) => {
      let fd: number | null = null;
      try {
        fd = openOwnFile(path, "the lock file", constants.O_RDWR | constants.O_CREAT);
      } catch {
        return; // refused: a link, or the path changing under it
      }
      try {
        expect(fstatSync(fd).ino).not.toBe(statSync(victim).ino);
      } finally {
        closeSync(fd);
      }
    });
  });

  test("readOwnFile (a backup, the journal): never the victim's bytes", async () => {
    await race((path) => {
      let bytes: Buffer | null = null;
      try {
        bytes = readOwnFile(path, "the backup");
      } catch {
        return;
      }
      expect(bytes?.toString() ?? "").not.toContain("the user's own file");
    });
  });
});

describe("what the user is told, and what is left open", () => {
  const openDescriptors = () => readdirSync("/proc/self/fd").length;

  test("a refused or read file leaves no descriptor open, however many times wrap looks", () => {
    linkSync(victim, at("hard"));
    mkfifo(at("fifo"));
    writeFileSync(at("big"), "x".repeat(100));
    const before = openDescriptors();
    for (let n = 0; n < 200; n++) {
      expect(readRegularFile(victim, { follow: false }).ok).toBe(true);
      expect(problemOf(at("big"), false, 10)).toStartWith("is larger than");
      expect(() => openOwnFile(at("hard"), "the lock file", constants.O_RDWR)).toThrow("hard links");
    }
    expect(openDescriptors()).toBe(before);
  });

  test("a cap in MiB is said in MiB", () => {
    writeFileSync(at("big"), Buffer.alloc(1024 * 1024 + 1));
    expect(problemOf(at("big"), false, 1024 * 1024)).toBe("is larger than 1 MiB, the most wrap reads of one file");
    expect(problemOf(at("big"), false, 2 * 1024 * 1024)).toBe("ok");
  });

  test("a path through a regular file cannot be looked at: one line naming it, for a read and an open", () => {
    const through = join(victim, "lock");
    expect(problemOf(through, false)).toStartWith("cannot be read: ");
    expect(problemOf(through, false)).toContain("ENOTDIR");
    let thrown: unknown;
    try {
      openOwnFile(through, "the lock file", constants.O_RDWR | constants.O_CREAT);
    } catch (error) {
      thrown = error;
    }
    expect(thrown).toBeInstanceOf(ThoughtGateError);
    expect((thrown as ThoughtGateError).code).toBe("IO");
    expect((thrown as ThoughtGateError).message).toStartWith(`cannot look at the lock file ${through}: `);
  });

  test("a file that cannot be opened (its directory is gone) is named with the reason, not taken for a refusal", () => {
    const gone = join(dir.path, "no-such-dir", "backup");
    expect(() => openOwnFile(gone, "the lock file", constants.O_RDWR)).toThrow(`cannot open the lock file ${gone}: `);
    let thrown: unknown;
    try {
      createExclusive(gone, "the backup");
    } catch (error) {
      thrown = error;
    }
    expect((thrown as ThoughtGateError).code).toBe("IO");
    expect((thrown as ThoughtGateError).message).toStartWith(`cannot open the backup ${gone}: `);
    expect((thrown as ThoughtGateError).message).toContain("ENOENT");
  });

  test("a refusal ends with what to do, or with nothing when there is nothing to say", () => {
    expect(refusal("/p", "the backup", "is a FIFO (named pipe), not a regular file").message).toBe(
      "refusing the backup /p: it is a FIFO (named pipe), not a regular file; wrap neither reads nor writes through it (remove it, then run wrap again)",
    );
    expect(refusal("/p", "the backup", "is a directory, not a regular file", "").message).toBe("refusing the backup /p: it is a directory, not a regular file; wrap neither reads nor writes through it");
  });
});
