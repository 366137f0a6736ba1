import type { CommandDef, SubCommandsDef } from "citty";
import { usageError, type ThoughtGateError } from "../core/errors.ts";
import { closest } from "../core/suggest.ts";
import { showInvisible } from "../core/visible-text.ts";
import { detectAgent } from "../wrap/adapters/detect.ts";
import { shellWord } from "./_shared.ts";

/**
 * The usage error for `thoughtgate <word>` when no command has that name: the command it most
 * likely meant (`approv` → approve), or, when the word is an agent wrap knows (`thoughtgate
 * claude -p hi`), the `wrap` line that governs it. Loaded only on this error path.
 */
export function unknownCommand(word: string, rest: readonly string[], commands: readonly string[]): ThoughtGateError {
  const shown = showInvisible(JSON.stringify(word));
  if (word.startsWith("-")) return usageError(`unknown flag ${showInvisible(word)}: thoughtgate takes --help or --version, or a command first`);
  const visible = commands.filter((name) => !name.startsWith("__"));
  const meant = closest(word, visible);
  if (meant !== null) return usageError(`unknown command ${shown}: did you mean \`thoughtgate ${meant}\`?`);
  if (detectAgent([word]) !== null) {
    const line = ["thoughtgate", "wrap", "--", word, ...rest].map(shellWord).join(" ");
    return usageError(`unknown command ${shown}: to govern that agent, did you mean \`${line}\`?`);
  }
  return usageError(`unknown command ${shown}; the commands: ${visible.join(", ")}`);
}

/** For a command with commands of its own (`auth list|login|logout`): the usage error when none or an unknown one is given. */
export async function unknownSubcommand(parent: string, command: CommandDef, rest: readonly string[]): Promise<ThoughtGateError | null> {
  const subs = command.subCommands;
  if (subs === undefined) return null;
  const names = Object.keys(typeof subs === "function" ? await subs() : await (subs as SubCommandsDef | Promise<SubCommandsDef>));
  const word = rest[0];
  if (word === undefined || word.startsWith("-")) return usageError(`${parent} needs one of: ${names.join(", ")}`);
  if (names.includes(word)) return null;
  const meant = closest(word, names);
  return usageError(`unknown command ${showInvisible(JSON.stringify(`${parent} ${word}`))}${meant === null ? `; ${parent} has: ${names.join(", ")}` : `: did you mean \`thoughtgate ${parent} ${meant}\`?`}`);
}
