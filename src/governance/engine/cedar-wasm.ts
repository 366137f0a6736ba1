/**
 * The Cedar engine, embedded in the executable.
 *
 * Which of cedar-wasm's three builds, and why:
 * - `nodejs` reads `${__dirname}/cedar_wasm_bg.wasm` with readFileSync at load time. In a compiled
 *   binary `__dirname` is the build machine's node_modules path, so it works on the build machine
 *   and fails with ENOENT everywhere else.
 * - the default (`esm`) build does `import * as wasm from "../cedar_wasm_bg.wasm"`; Bun's bundler turns
 *   a .wasm import into a file path, not an instantiated module, so `__wbindgen_start` is undefined.
 * - `web` exports `initSync({ module })`. Importing the .wasm `with { type: "file" }` embeds it in the
 *   executable (a `/$bunfs/...` path at run time, the real path when run from source), and we
 *   instantiate it from those bytes. The package's `exports` map hides the .wasm file, hence the
 *   relative path into node_modules.
 */
import * as cedar from "@cedar-policy/cedar-wasm/web";
import { readFileSync } from "node:fs";
import * as wasmFile from "../../../node_modules/@cedar-policy/cedar-wasm/web/cedar_wasm_bg.wasm" with { type: "file" };

export type CedarEngine = Omit<typeof cedar, "initSync" | "default">;

/**
 * Where the engine's wasm is read from; inside a compiled binary it starts with `/$bunfs/`.
 * TypeScript types the import from the package's `cedar_wasm_bg.wasm.d.ts` (the module's exports);
 * with `type: "file"` Bun's real value is `{ default: <path> }`, hence the cast.
 */
export const CEDAR_WASM_PATH: string = (wasmFile as unknown as { default: string }).default;

let memory: WebAssembly.Memory | null = null;

/** Instantiate the engine on first use (it costs tens of MB: keep it off `shim`'s forwarding path). */
export function loadCedar(): CedarEngine {
  memory ??= cedar.initSync({ module: readFileSync(CEDAR_WASM_PATH) }).memory;
  return cedar;
}

/** The engine's linear memory in bytes (it only grows; freed space is reused): 0 before it is loaded. */
export function cedarMemoryBytes(): number {
  return memory?.buffer.byteLength ?? 0;
}
