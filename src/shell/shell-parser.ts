/**
 * The bash parser, embedded in the executable: tree-sitter-bash's grammar run by web-tree-sitter,
 * both WebAssembly. Loaded only where a shell call is read (a few tens of ms and a few MB): by the
 * governance service on its first one, kept for the session, and by the hook command outside a
 * session; never by a shim.
 *
 * The two .wasm files are imported `with { type: "file" }`, which embeds them in a compiled binary
 * (a `/$bunfs/...` path at run time, the real path when run from source), and are handed over as
 * bytes: web-tree-sitter would otherwise look for its wasm next to its script, which in a compiled
 * binary is the build machine's node_modules (the same reason as engine/cedar-wasm.ts).
 */
import { readFileSync } from "node:fs";
import { Language, Parser } from "web-tree-sitter";
import runtimePath from "../../node_modules/web-tree-sitter/web-tree-sitter.wasm" with { type: "file" };
import bashPath from "../../node_modules/tree-sitter-bash/tree-sitter-bash.wasm" with { type: "file" };

export type { Node } from "web-tree-sitter";

let loading: Promise<Parser> | null = null;

/** The bash parser, made on first use and kept for the process. */
export function bashParser(): Promise<Parser> {
  loading ??= (async () => {
    await Parser.init({ wasmBinary: readFileSync(runtimePath) });
    const bash = await Language.load(readFileSync(bashPath));
    const parser = new Parser();
    parser.setLanguage(bash);
    return parser;
  })();
  return loading;
}
