import { join, resolve } from "node:path";
import { geminiFamily } from "./gemini.ts";
import type { AgentContext } from "./types.ts";

/** Qwen Code (`qwen`), a fork of Gemini CLI with the same settings files under `.qwen`: see `gemini.ts`. */
export const qwen = geminiFamily({
  agent: "qwen",
  label: "Qwen Code",
  userDir: qwenHome,
  homeDir: (ctx) => ctx.home,
  projectDir: ".qwen",
  syntax: "qwen",
  manifests: ["qwen-extension.json", "gemini-extension.json"],
});

/** `$QWEN_HOME` (`~` expanded, relative to the working directory) or `~/.qwen`. */
function qwenHome(ctx: AgentContext): string {
  const dir = ctx.env.QWEN_HOME;
  if (!dir) return join(ctx.home, ".qwen");
  if (dir === "~" || dir.startsWith("~/")) return join(ctx.home, dir.slice(2));
  return resolve(ctx.cwd, dir);
}
