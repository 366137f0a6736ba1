import { keyKind } from "./secret-keys.ts";
import { redactedMarker } from "../core/secret-kinds.ts";
import { redact } from "./redact.ts";

/**
 * One word: a word that holds JSON (`{"token":…}`, or after a `name:` / `name=` prefix, as in
 * `--call tool:{…}`) is redacted as a value, key by key, then written back; any other word as text.
 */
function redactWord(word: string): string {
  const json = /^([^{[]*?[:=])?([{[].*)$/s.exec(word);
  if (json) {
    try {
      return `${json[1] ?? ""}${JSON.stringify(redact(JSON.parse(json[2] as string)))}`;
    } catch {
      // Not JSON after all: the text redactor below.
    }
  }
  return redact(word) as string;
}

/**
 * A command line as the record keeps it (`run_start.agent_command`): each word through the one
 * redactor (src/telemetry/redact.ts: `--api-key=sk-…`, `ghp_…`, `Bearer …`), and the word after a
 * flag that names a credential (`--password hunter2`, `--token abc`) replaced as the redactor
 * replaces the value of such a key: a command line is a list of words, so the pair `--token abc`
 * is two of them and the text redactor alone would keep `abc`.
 */
export function redactArgv(argv: readonly string[]): string[] {
  const out: string[] = [];
  for (let i = 0; i < argv.length; i++) {
    const word = argv[i] as string;
    out.push(redactWord(word));
    const flag = /^--?([A-Za-z][A-Za-z0-9_.-]*)$/.exec(word)?.[1];
    const kind = flag === undefined ? null : keyKind(flag, "display");
    const next = argv[i + 1];
    if (kind !== null && next !== undefined && !next.startsWith("-")) {
      out.push(redactedMarker(kind));
      i++;
    }
  }
  return out;
}
