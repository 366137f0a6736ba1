import type { ArgDef, ArgsDef, CommandDef, CommandMeta, SubCommandsDef } from "citty";
import { CHILD_COMMANDS } from "./_shared.ts";

/**
 * `--help`: the usage, each flag and argument with its description wrapped to the terminal's width
 * (80 columns when stdout is not a terminal), no colours and no line padded with spaces: citty's
 * own `renderUsage` pads every description to the longest one, over 200 columns for `wrap`, and
 * colours its output even into a pipe.
 */

/** Columns used when stdout is not a terminal, and the range a terminal's width is held to. */
const DEFAULT_COLUMNS = 80;
const MIN_COLUMNS = 60;
const MAX_COLUMNS = 100;
/** A flag column wider than this puts its description on the next line. */
const MAX_LEFT_COLUMN = 30;

export function helpWidth(stdout: { isTTY?: boolean; columns?: number } = process.stdout): number {
  if (!stdout.isTTY || !stdout.columns) return DEFAULT_COLUMNS;
  return Math.min(MAX_COLUMNS, Math.max(MIN_COLUMNS, stdout.columns));
}

/** The root's help: what it is, how to call it, every command that is not hidden. */
export async function renderRootHelp(root: CommandDef, width = helpWidth()): Promise<string> {
  const meta = await resolve(root.meta);
  const rows = await commandRows(root);
  return [
    `${meta?.name ?? "thoughtgate"} ${meta?.version ?? ""}: ${meta?.description ?? ""}`.trim(),
    "",
    `Usage: ${meta?.name} COMMAND [OPTIONS]`,
    "",
    "Commands:",
    ...table(rows, width),
    "",
    `Each command's options: ${meta?.name} COMMAND --help`,
    `To see it work, with nothing else installed: ${meta?.name} demo`,
    "",
  ].join("\n");
}

/** Each visible command of `parent` and its description. */
async function commandRows(parent: CommandDef): Promise<Array<[string, string]>> {
  const commands: SubCommandsDef = (await resolve(parent.subCommands)) ?? {};
  const rows: Array<[string, string]> = [];
  for (const [name, load] of Object.entries(commands)) {
    const command = (await resolve(load)) as CommandDef;
    const meta = await resolve(command.meta);
    if (!meta?.hidden) rows.push([name, meta?.description ?? ""]);
  }
  return rows;
}

/**
 * One command's help: description, usage line (with `-- CMD` where it runs one), arguments,
 * options; for a command with commands of its own (`auth`), the one `rest` names, else the list.
 */
export async function renderCommandHelp(command: CommandDef, rest: readonly string[], prefix: string, width = helpWidth()): Promise<string> {
  const meta = (await resolve(command.meta)) ?? ({} as CommandMeta);
  const args = (await resolve(command.args)) ?? ({} as ArgsDef);
  const name = meta.name ?? "";
  const subs: SubCommandsDef | undefined = await resolve(command.subCommands);
  if (subs !== undefined) {
    const [word, ...more] = rest;
    const sub = word === undefined ? undefined : subs[word];
    if (sub !== undefined) return renderCommandHelp((await resolve(sub)) as CommandDef, more, `${prefix} ${name}`, width);
    return [...wrap(meta.description ?? "", width), "", `Usage: ${prefix} ${name} COMMAND [OPTIONS]`, "", "Commands:", ...table(await commandRows(command), width), ""].join("\n");
  }
  const positionals = Object.entries(args).filter(([, def]) => def.type === "positional");
  const flags = Object.entries(args).filter(([, def]) => def.type !== "positional");
  const child = CHILD_COMMANDS[name];
  const usage = [
    `${prefix} ${name}`,
    flags.length > 0 ? "[OPTIONS]" : "",
    ...positionals.map(([key, def]) => (def.required === false ? `[${key.toUpperCase()}]` : `<${key.toUpperCase()}>`)),
    child ? child.usage : "",
  ].filter((part) => part !== "");
  const lines = [...wrap(meta.description ?? "", width), "", ...wrap(`Usage: ${usage.join(" ")}`, width, "  ", "")];
  if (positionals.length > 0) lines.push("", "Arguments:", ...table(positionals.map(([key, def]) => [key.toUpperCase(), describe(def)]), width));
  if (flags.length > 0) lines.push("", "Options:", ...table(flags.map(([key, def]) => [flagLabel(key, def), describe(def)]), width));
  return `${lines.join("\n")}\n`;
}

function flagLabel(key: string, def: ArgDef): string {
  const aliases = "alias" in def && def.alias !== undefined ? (Array.isArray(def.alias) ? def.alias : [def.alias]) : [];
  const names = [...aliases.map((alias) => (alias.length === 1 ? `-${alias}` : `--${alias}`)), `--${key}`].join(", ");
  if (def.type === "boolean") return names;
  return `${names}=${def.valueHint ?? "VALUE"}`;
}

function describe(def: ArgDef): string {
  const text = def.description ?? "";
  return def.type === "positional" && def.required !== false ? `${text} (required)` : text;
}

/** Two columns: names on the left, descriptions wrapped beside them (or below, for a long name). */
function table(rows: Array<[string, string]>, width: number): string[] {
  const left = Math.min(MAX_LEFT_COLUMN, Math.max(0, ...rows.map(([name]) => name.length)));
  const indent = " ".repeat(2 + left + 2);
  const out: string[] = [];
  for (const [name, text] of rows) {
    const body = wrap(text, width, indent);
    if (name.length > left) {
      out.push(`  ${name}`, ...body);
      continue;
    }
    const [first = "", ...rest] = body;
    out.push(`  ${name.padEnd(left)}  ${first.trimStart()}`.trimEnd(), ...rest);
  }
  return out;
}

/**
 * Words filled into lines of at most `width` columns, the first starting with `first`, the others
 * with `indent`; a word longer than a line gets a line of its own.
 */
export function wrap(text: string, width: number, indent = "", first = indent): string[] {
  const lines: string[] = [];
  let line = "";
  for (const word of text.split(/\s+/).filter((w) => w !== "")) {
    const next = line === "" ? `${lines.length === 0 ? first : indent}${word}` : `${line} ${word}`;
    if (line !== "" && next.length > width) {
      lines.push(line);
      line = `${indent}${word}`;
    } else line = next;
  }
  if (line !== "") lines.push(line);
  return lines;
}

async function resolve<T>(value: T | Promise<T> | (() => T) | (() => Promise<T>) | undefined): Promise<T | undefined> {
  return typeof value === "function" ? await (value as () => T | Promise<T>)() : await value;
}
