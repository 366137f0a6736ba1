/**
 * What a shell command line runs, command by command, read with a real bash parser (tree-sitter-bash,
 * shell-parser.ts), never split by hand: lists (`&&`, `||`, `;`), pipelines, subshells, `{ …; }`,
 * `$(…)`, backticks, `<(…)`, if/while/for/case bodies and function bodies each give their commands.
 * Commands that run others are unwrapped and the inner ones read too: `bash -c`/`sh -c` (and other
 * shells), `eval`, `env`, `sudo`/`doas`, `xargs`, `find -exec`, and the plain prefixes `nice`,
 * `nohup`, `time`, `timeout`, `command`, `builtin`, `exec`, `stdbuf`.
 *
 * Each command is one line of words as the shell would see them before expansion (quotes removed
 * from static words; a word with an expansion is kept as written). What a rule may forward must be
 * judged by every line (docs/governance.md, "Built-in tools"), so the lines are built to be judged
 * that way:
 * - a command run with a privilege change keeps its own line (`sudo rm x` beside `rm x`), so a rule
 *   on `rm *` cannot let `sudo` through;
 * - a write redirection is a line of its own (`> out.txt`), so `ls > x` is not a read-only `ls`;
 *   redirections to /dev/null and between descriptors are not writes;
 * - assignments before a command stay in its line (`PATH=/tmp ls` is not `ls`).
 *
 * Anything the parser cannot read (a syntax error, a command whose name is an expansion, a `-c`
 * script that is not a plain string, nesting past MAX_DEPTH) makes the whole line unreadable: the
 * caller asks a person, never allows.
 */
import type { Node } from "./shell-parser.ts";
import { bashParser } from "./shell-parser.ts";

export type ShellReading = { ok: true; commands: string[] } | { ok: false; why: string };

/** `bash -c "bash -c '…'"` nested deeper than this is not read. */
const MAX_DEPTH = 8;
/** Longer command lines are not parsed (a hook input is bounded anyway). */
const MAX_COMMAND_CHARS = 100_000;

const SHELLS = new Set(["bash", "sh", "zsh", "dash", "ksh", "mksh", "ash", "busybox-sh"]);
/** Run their argument vector as a command, with options of their own first (`PREFIX_OPTIONS`). */
const PREFIXES = new Set(["nice", "nohup", "time", "timeout", "command", "builtin", "exec", "stdbuf", "ionice"]);
/** Run a command as someone else: their own line stays, and the inner command is read too. */
const PRIVILEGED = new Set(["sudo", "doas", "pkexec", "runuser"]);
/** Options of sudo that take a value (sudo(8)). */
const SUDO_VALUE_OPTIONS = new Set(["-u", "-g", "-h", "-p", "-C", "-D", "-r", "-t", "-U", "-T", "--user", "--group", "--host", "--prompt", "--chdir", "--role", "--type", "--other-user", "--close-from", "--command-timeout"]);
/** Options of xargs that take a value (GNU and BSD). */
const XARGS_VALUE_OPTIONS = new Set(["-I", "-i", "-n", "-P", "-L", "-l", "-s", "-d", "-E", "-e", "-a", "-J", "-R", "-S", "--max-args", "--max-procs", "--max-lines", "--max-chars", "--delimiter", "--eof", "--arg-file", "--replace", "--process-slot-var"]);
const FIND_EXEC = new Set(["-exec", "-execdir", "-ok", "-okdir"]);

class Unreadable extends Error {}

/** Read a command line: its commands, or why it cannot be read. */
export async function readShellCommand(command: string): Promise<ShellReading> {
  return readWith(await bashParser(), command);
}

/**
 * A reader with the parser loaded once, for a process that reads many lines (the governance
 * service): each line is then read at once, without waiting. Rejects when the parser cannot load.
 */
export async function shellReader(): Promise<(command: string) => ShellReading> {
  const parser = await bashParser();
  return (command) => readWith(parser, command);
}

function readWith(parser: BashParser, command: string): ShellReading {
  if (command.length > MAX_COMMAND_CHARS) return { ok: false, why: `the command is longer than ${MAX_COMMAND_CHARS} characters` };
  const lines: string[] = [];
  try {
    readScript(parser, command, lines, 0);
  } catch (error) {
    if (error instanceof Unreadable) return { ok: false, why: error.message };
    throw error;
  }
  if (lines.length === 0) return { ok: false, why: "the command runs nothing the parser could find" };
  return { ok: true, commands: lines };
}

type BashParser = Awaited<ReturnType<typeof bashParser>>;

function readScript(parser: BashParser, script: string, lines: string[], depth: number): void {
  if (depth > MAX_DEPTH) throw new Unreadable(`shells nested more than ${MAX_DEPTH} deep`);
  const tree = parser.parse(script);
  if (!tree) throw new Unreadable("the shell parser gave up");
  try {
    if (tree.rootNode.hasError) throw new Unreadable(`bash syntax error near ${JSON.stringify(firstError(tree.rootNode) ?? script.slice(0, 40))}`);
    walk(parser, tree.rootNode, lines, depth);
  } finally {
    tree.delete();
  }
}

function firstError(node: Node): string | null {
  if (node.type === "ERROR" || node.isMissing) return node.text.slice(0, 40) || node.type;
  for (const child of node.children) {
    if (!child) continue;
    const found = child.hasError ? firstError(child) : null;
    if (found !== null) return found;
  }
  return null;
}

/** Every command under `node`, in order. */
function walk(parser: BashParser, node: Node, lines: string[], depth: number): void {
  switch (node.type) {
    case "command":
      return readCommand(parser, node, lines, depth);
    case "file_redirect":
      return readRedirect(parser, node, lines, depth);
    case "declaration_command":
    case "unset_command":
    case "variable_assignment":
    case "variable_assignments":
    case "test_command":
      // Not a program run, but it changes or tests the shell's state: a line of its own (never
      // read-only to a rule), and its values may hold commands of their own.
      lines.push(node.text);
      return walkChildren(parser, node, lines, depth);
    case "heredoc_body":
    case "comment":
      return;
    default:
      return walkChildren(parser, node, lines, depth);
  }
}

function walkChildren(parser: BashParser, node: Node, lines: string[], depth: number): void {
  for (const child of node.namedChildren) if (child) walk(parser, child, lines, depth);
}

/** `> file`, `>> file`, `&> file`, `<> file`: a write (its own line) unless to /dev/null or another descriptor. */
function readRedirect(parser: BashParser, node: Node, lines: string[], depth: number): void {
  const destination = node.childForFieldName("destination");
  if (destination) walk(parser, destination, lines, depth);
  const operator = node.children.find((child) => child !== null && !child.isNamed && /[<>]/.test(child.type))?.type ?? "";
  if (!operator.includes(">")) return;
  if (operator === ">&" || operator === "<&" || operator === ">&-") {
    if (destination && /^\d+-?$|^-$/.test(destination.text)) return;
  }
  const target = destination ? staticWord(destination) ?? destination.text : "";
  if (target === "/dev/null" || target === "/dev/stdout" || target === "/dev/stderr") return;
  lines.push(`${operator} ${target}`);
}

/** One simple command: its words, then whatever it runs in turn. */
function readCommand(parser: BashParser, node: Node, lines: string[], depth: number): void {
  const prefix: string[] = [];
  const words: Word[] = [];
  for (const child of node.namedChildren) {
    if (!child) continue;
    if (child.type === "variable_assignment") prefix.push(child.text);
    else if (child.type === "file_redirect" || child.type === "herestring_redirect") readRedirect(parser, child, lines, depth);
    else if (child.type === "command_name") {
      const name = staticWord(child.firstNamedChild ?? child);
      if (name === null) throw new Unreadable(`the command's name ${JSON.stringify(child.text)} is only known when it runs`);
      words.push({ text: name, known: true });
    } else {
      const value = staticWord(child);
      words.push(value === null ? { text: child.text, known: false } : { text: value, known: true });
    }
    // `$(…)`, backticks and `<(…)` inside a word or an assignment run commands of their own.
    for (const inner of substitutions(child)) walk(parser, inner, lines, depth);
  }
  if (words.length === 0) {
    if (prefix.length > 0) lines.push(prefix.join(" "));
    return;
  }
  unwrap(parser, words, prefix, lines, depth);
}

/** The command substitutions and process substitutions anywhere in a word. */
function substitutions(node: Node): Node[] {
  if (node.type === "command_substitution" || node.type === "process_substitution") return [node];
  const found: Node[] = [];
  for (const child of node.namedChildren) if (child) found.push(...substitutions(child));
  return found;
}

/** A word of a command: its value, or as written when it has an expansion (`known` false). */
type Word = { text: string; known: boolean };

/**
 * A command's line, and the commands it runs. `command` is the command and its arguments; `prefix`
 * the assignments before it.
 */
function unwrap(parser: BashParser, command: Word[], prefix: string[], lines: string[], depth: number): void {
  const words = command.map((word) => word.text);
  const program = basename(words[0] as string);
  const rest = words.slice(1);
  const own = [...prefix, ...words].join(" ");
  if (SHELLS.has(program)) {
    const at = shellScript(rest);
    if (at === undefined) return void lines.push(own);
    if (!command[at + 1]?.known) throw new Unreadable(`the script of ${program} -c is only known when it runs`);
    if (prefix.length > 0) lines.push(own);
    return readScript(parser, rest[at] as string, lines, depth + 1);
  }
  if (program === "eval") {
    if (command.some((word) => !word.known)) throw new Unreadable("what eval runs is only known when it runs");
    if (prefix.length > 0) lines.push(own);
    return readScript(parser, rest.join(" "), lines, depth + 1);
  }
  if (program === "env") {
    const inner = afterEnvOptions(rest);
    if (inner.command.length === 0) return void lines.push(own);
    return unwrap(parser, command.slice(command.length - inner.command.length), [...prefix, ...inner.assignments], lines, depth + 1);
  }
  if (PRIVILEGED.has(program)) {
    lines.push(own);
    const inner = afterOptions(rest, SUDO_VALUE_OPTIONS);
    if (inner.length > 0) unwrap(parser, command.slice(command.length - inner.length), [], lines, depth + 1);
    return;
  }
  if (PREFIXES.has(program)) {
    const inner = afterPrefixOptions(program, rest);
    if (inner.length === 0) return void lines.push(own);
    return unwrap(parser, command.slice(command.length - inner.length), prefix, lines, depth + 1);
  }
  lines.push(own);
  if (program === "xargs") {
    const inner = afterOptions(rest, XARGS_VALUE_OPTIONS);
    // No command: xargs runs echo.
    if (inner.length > 0) unwrap(parser, command.slice(command.length - inner.length), [], lines, depth + 1);
    return;
  }
  if (program === "find") {
    for (let i = 0; i < rest.length; i++) {
      if (!FIND_EXEC.has(rest[i] as string)) continue;
      const end = rest.findIndex((word, j) => j > i && (word === ";" || word === "+"));
      const inner = command.slice(i + 2, end === -1 ? command.length : end + 1);
      if (inner.length > 0) unwrap(parser, inner, [], lines, depth + 1);
      if (end === -1) break;
      i = end;
    }
  }
}

/** Where the script of `sh -c SCRIPT` is in `args` (options such as `-e`, `-x`, `-l` may come first, or combine: `-lc`); undefined without `-c`. */
function shellScript(args: string[]): number | undefined {
  for (let i = 0; i < args.length; i++) {
    const word = args[i] as string;
    if (word === "--" || !word.startsWith("-") || word === "-") return undefined;
    if (word.startsWith("--")) continue;
    if (word.slice(1).includes("c")) {
      if (args[i + 1] === undefined) throw new Unreadable(`${word} without a script`);
      return i + 1;
    }
    // `-o OPTION` takes a value.
    if (word === "-o" || word === "+o") i += 1;
  }
  return undefined;
}

/** env's options (-i, -u NAME, -C DIR, -S STRING) and assignments, then the command. */
function afterEnvOptions(args: string[]): { assignments: string[]; command: string[] } {
  const assignments: string[] = [];
  let i = 0;
  for (; i < args.length; i++) {
    const word = args[i] as string;
    if (word === "--") {
      i += 1;
      break;
    }
    if (word === "-S" || word.startsWith("--split-string")) throw new Unreadable("env -S splits a string of its own");
    if (word === "-u" || word === "-C" || word === "--unset" || word === "--chdir") {
      assignments.push(`${word} ${args[i + 1] ?? ""}`);
      i += 1;
      continue;
    }
    if (word.startsWith("-")) {
      assignments.push(word);
      continue;
    }
    if (/^[A-Za-z_][A-Za-z0-9_]*=/.test(word)) {
      assignments.push(word);
      continue;
    }
    break;
  }
  return { assignments, command: args.slice(i) };
}

/** The command after a program's options; `valued` lists the options that take the next word. */
function afterOptions(args: string[], valued: ReadonlySet<string>): string[] {
  for (let i = 0; i < args.length; i++) {
    const word = args[i] as string;
    if (word === "--") return args.slice(i + 1);
    if (!word.startsWith("-") || word === "-") return args.slice(i);
    if (valued.has(word)) i += 1;
  }
  return [];
}

/** `timeout DURATION cmd`, `nice -n 5 cmd`, `stdbuf -oL cmd`, `ionice -c 3 cmd`, `time -p cmd`. */
function afterPrefixOptions(program: string, args: string[]): string[] {
  const valued = new Set(program === "nice" ? ["-n", "--adjustment"] : program === "ionice" ? ["-c", "-n", "-p", "-P", "-u", "--class", "--classdata"] : program === "timeout" ? ["-s", "-k", "--signal", "--kill-after"] : program === "time" ? ["-f", "-o", "--format", "--output"] : []);
  const inner = afterOptions(args, valued);
  // timeout's duration comes before the command.
  return program === "timeout" ? inner.slice(1) : inner;
}

/**
 * A word's value when it has no expansion: `foo`, `'foo'`, `"foo"`, `$'a\nb'` and concatenations of
 * them; null when part of it is only known when the shell runs it (`$HOME`, `$(…)`, `${x}`).
 */
export function staticWord(node: Node): string | null {
  switch (node.type) {
    case "word":
    case "number":
      return unescapeWord(node.text);
    case "raw_string":
      return node.text.slice(1, -1);
    case "ansi_c_string":
      return node.text.slice(2, -1);
    case "string": {
      let value = "";
      for (const child of node.namedChildren) {
        if (!child) continue;
        if (child.type !== "string_content") return null;
        value += child.text.replace(/\\([$`"\\\n])/g, "$1");
      }
      return value;
    }
    case "concatenation": {
      let value = "";
      for (const child of node.namedChildren) {
        const part = child ? staticWord(child) : null;
        if (part === null) return null;
        value += part;
      }
      return value;
    }
    default:
      return null;
  }
}

function unescapeWord(text: string): string {
  return text.replace(/\\(.)/gs, "$1");
}

function basename(path: string): string {
  const slash = path.lastIndexOf("/");
  return slash === -1 ? path : path.slice(slash + 1);
}
