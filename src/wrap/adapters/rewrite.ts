import type { JSONPath, Node } from "jsonc-parser";
import { ThoughtGateError } from "../../core/errors.ts";
import { detectFormatting } from "../merge-owned-keys.ts";
import { jsoncProblem, locateValues, parseSpan, propertiesOf, spliceAll, type Subtree } from "./jsonc.ts";
import type { ServerEntry, ShimCommand } from "./types.ts";

/**
 * Put a shim in front of every governed entry , changing only the keys wrap owns (docs/architecture.md,
 * decision 8): the command (Zed nested form: `command.path`) becomes `shim.command`, `args`
 * becomes `shim.args`, and `shim.env` is added to the entry's `env` next to what is already there.
 * Everything else (comments, other keys, other entries, the rest of the file) stays byte for byte.
 *
 * `owned` lists the JSON paths written, one key each (`[..., "command"]`, `[..., "args"]`,
 * `[..., "env", "THOUGHTGATE_X"]`, or `[..., "env"]` when the entry had none), for
 * `restoreOwnedKeys`: keeping ownership per key means a change the agent makes to an entry during
 * the session (Zed `enabled`, Windsurf `disabledTools`) survives the restore. A key that was
 * missing is inserted as `,<newline><indent>"key": value` right after the object's last
 * property, so removing it again gives back the original bytes.
 *
 * Throws a CONFIG error when the text does not parse or an entry is no longer what discovery saw.
 */
export function rewrite(
  text: string,
  entries: readonly ServerEntry[],
  shimFor: (entry: ServerEntry) => ShimCommand,
): { text: string; owned: JSONPath[] } {
  const governed = entries.filter((entry) => entry.governed);
  const [first] = governed;
  if (!first) return { text, owned: [] };
  const problem = jsoncProblem(text);
  if (problem) throw new ThoughtGateError("CONFIG", `${first.file} ${problem}: not rewritten`);
  const { spans, duplicates } = locateValues(
    text,
    governed.map((entry) => entry.jsonPath),
  );
  if (duplicates.length > 0) throw new ThoughtGateError("CONFIG", `${first.file} has "${duplicates[0]}" twice: not rewritten`);
  const writer = new EntryWriter(text);
  governed.forEach((entry, i) => {
    const span = spans[i];
    const tree = span ? parseSpan(text, span) : undefined;
    if (!tree || tree.node.type !== "object") throw changedSinceRead(entry);
    writer.write(entry, tree, shimFor(entry));
  });
  return { text: writer.apply(), owned: writer.owned };
}

function changedSinceRead(entry: ServerEntry): ThoughtGateError {
  return new ThoughtGateError("CONFIG", `${entry.file}: the server "${entry.name}" changed since it was read; not rewritten`);
}

type Edit = { offset: number; length: number; content: string };

class EntryWriter {
  readonly owned: JSONPath[] = [];
  private readonly edits: Edit[] = [];
  private readonly eol: string;
  private readonly unit: string;

  constructor(private readonly text: string) {
    const { insertSpaces, tabSize, eol } = detectFormatting(text);
    this.eol = eol;
    this.unit = insertSpaces ? " ".repeat(tabSize) : "\t";
  }

  write(entry: ServerEntry, tree: Subtree, shim: ShimCommand): void {
    // Zed's nested form keeps command, args and env inside `command: {path, args, env}`.
    const nested = entry.form === "nested";
    const outer = fieldsOf(tree.node, entry);
    const target = nested ? outer.get("command") : tree.node;
    if (!target || target.type !== "object") throw changedSinceRead(entry);
    const path = nested ? [...entry.jsonPath, "command"] : entry.jsonPath;
    const fields = nested ? fieldsOf(target, entry) : outer;
    const commandKey = nested ? "path" : "command";
    const command = fields.get(commandKey);
    if (command?.type !== "string" || command.value !== entry.command) throw changedSinceRead(entry);

    const missing: [string, unknown][] = [];
    const set = (key: string, value: unknown) => {
      this.owned.push([...path, key]);
      const node = fields.get(key);
      if (node) this.replace(tree.base, node, value);
      else missing.push([key, value]);
    };
    set(commandKey, shim.command);
    set("args", shim.args);
    const extra = Object.entries(shim.env);
    const env = fields.get("env");
    if (extra.length > 0 && env?.type === "object" && (env.children?.length ?? 0) > 0) {
      const envFields = fieldsOf(env, entry);
      const missingEnv: [string, unknown][] = [];
      for (const [key, value] of extra) {
        this.owned.push([...path, "env", key]);
        const node = envFields.get(key);
        if (node) this.replace(tree.base, node, value);
        else missingEnv.push([key, value]);
      }
      this.insert(tree.base, env, missingEnv);
    } else if (extra.length > 0) {
      // No env, or `{}`: the whole object is ours to write.
      set("env", Object.fromEntries(extra));
    }
    this.insert(tree.base, target, missing);
  }

  /** The text with every edit applied, in one pass. */
  apply(): string {
    return spliceAll(this.text, this.edits);
  }

  private replace(base: number, node: Node, value: unknown): void {
    const offset = base + node.offset;
    const multiline = this.text.slice(offset, offset + node.length).includes("\n");
    this.edits.push({ offset, length: node.length, content: this.render(value, multiline, indentOf(this.text, offset)) });
  }

  /** Add properties after the object's last one, laid out like the object (one per line, or inline). */
  private insert(base: number, object: Node, properties: [string, unknown][]): void {
    const children = object.children ?? [];
    const firstChild = children[0];
    const last = children.at(-1);
    if (properties.length === 0 || !firstChild || !last) return;
    const multiline = this.text.slice(base + object.offset, base + firstChild.offset).includes("\n");
    const indent = multiline ? indentOf(this.text, base + last.offset) : "";
    const separator = multiline ? this.eol + indent : " ";
    const content = properties.map(([key, value]) => `,${separator}${JSON.stringify(key)}: ${this.render(value, multiline, indent)}`).join("");
    this.edits.push({ offset: base + last.offset + last.length, length: 0, content });
  }

  private render(value: unknown, multiline: boolean, indent: string): string {
    const inner = indent + this.unit;
    const layout = (open: string, close: string, items: string[]) => {
      if (items.length === 0) return open + close;
      if (!multiline) return open === "{" ? `{ ${items.join(", ")} }` : `[${items.join(", ")}]`;
      return `${open}${this.eol}${inner}${items.join(`,${this.eol}${inner}`)}${this.eol}${indent}${close}`;
    };
    if (Array.isArray(value)) return layout("[", "]", value.map((item) => this.render(item, multiline, inner)));
    if (typeof value === "object" && value !== null) {
      return layout("{", "}", Object.entries(value).map(([key, item]) => `${JSON.stringify(key)}: ${this.render(item, multiline, inner)}`));
    }
    return JSON.stringify(value);
  }
}

function fieldsOf(node: Node, entry: ServerEntry): Map<string, Node> {
  const { props, duplicate } = propertiesOf(node);
  if (duplicate !== undefined) throw new ThoughtGateError("CONFIG", `${entry.file}: the server "${entry.name}" has "${duplicate}" twice; not rewritten`);
  return props;
}

/** The whitespace a line starts with, for the line that holds `offset`. */
function indentOf(text: string, offset: number): string {
  const lineStart = text.lastIndexOf("\n", offset - 1) + 1;
  return /^[ \t]*/.exec(text.slice(lineStart, offset))?.[0] ?? "";
}
