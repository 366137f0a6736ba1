import { afterEach, beforeEach, expect, test } from "bun:test";
import { mkdirSync, symlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { discover, type AgentContext, type ConfigFile } from "../../src/wrap/adapters/index.ts";
import { projectEscape, realConfigPath } from "../../src/wrap/config-path.ts";
import { tempDir } from "../support/harness.ts";

const SERVERS = '{ "mcpServers": { "fs": { "command": "node", "args": ["server.js"] } } }\n';

let dir: ReturnType<typeof tempDir>;
let ctx: AgentContext;
let elsewhere: string;
beforeEach(() => {
  dir = tempDir();
  const home = join(dir.path, "home");
  const project = join(dir.path, "work", "repo");
  elsewhere = join(dir.path, "elsewhere");
  for (const d of [home, project, elsewhere]) mkdirSync(d, { recursive: true });
  ctx = { home, cwd: project, env: { HOME: home }, platform: "linux" };
});
afterEach(() => dir[Symbol.dispose]());

const fileAt = (files: ConfigFile[], path: string) => files.find((file) => file.path === path);
const governed = (file: ConfigFile | undefined) => file?.entries.filter((entry) => entry.governed).map((entry) => entry.name);

test("a project .mcp.json that links out of the project is a problem of the file; its servers are not governed", () => {
  writeFileSync(join(elsewhere, "servers.json"), SERVERS);
  symlinkSync(join(elsewhere, "servers.json"), join(ctx.cwd, ".mcp.json"));
  const file = fileAt(discover("claude-code", ctx), join(ctx.cwd, ".mcp.json"));
  expect(file?.problems).toEqual([
    `resolves through a symbolic link to ${join(elsewhere, "servers.json")}, outside the project directory ${ctx.cwd}`,
  ]);
  expect(file?.entries.map((entry) => entry.status)).toEqual(["file-problem"]);
});

test("a project file reached through a directory symlink out of the project is refused too", () => {
  writeFileSync(join(elsewhere, "mcp.json"), '{ "servers": { "fs": { "command": "node" } } }\n');
  symlinkSync(elsewhere, join(ctx.cwd, ".vscode"));
  const file = fileAt(discover("vscode", ctx), join(ctx.cwd, ".vscode", "mcp.json"));
  expect(file?.problems[0]).toStartWith(`resolves through a symbolic link to ${join(elsewhere, "mcp.json")}, outside the project directory ${ctx.cwd}`);
  expect(governed(file)).toEqual([]);
});

test("a project link inside the project, and a user config linked anywhere (dotfiles), are used as they are", () => {
  mkdirSync(join(ctx.cwd, "config"));
  writeFileSync(join(ctx.cwd, "config", "mcp.json"), SERVERS);
  symlinkSync(join(ctx.cwd, "config", "mcp.json"), join(ctx.cwd, ".mcp.json"));
  writeFileSync(join(elsewhere, "claude.json"), SERVERS.replace('"fs"', '"user-fs"'));
  symlinkSync(join(elsewhere, "claude.json"), join(ctx.home, ".claude.json"));
  const files = discover("claude-code", ctx);
  expect(files.flatMap((file) => file.problems)).toEqual([]);
  expect({ project: governed(fileAt(files, join(ctx.cwd, ".mcp.json"))), user: governed(fileAt(files, join(ctx.home, ".claude.json"))) }).toEqual({ project: ["fs"], user: ["user-fs"] });
  expect(realConfigPath(join(ctx.home, ".claude.json"))).toBe(join(elsewhere, "claude.json"));
});

test("a parent directory's .mcp.json may link within that parent; a link the parent does not hold is refused", () => {
  const parent = join(dir.path, "work");
  writeFileSync(join(parent, "shared.json"), SERVERS);
  symlinkSync(join(parent, "shared.json"), join(parent, ".mcp.json"));
  expect(projectEscape(join(parent, ".mcp.json"), ctx.cwd)).toBeUndefined();
  writeFileSync(join(elsewhere, "x.json"), SERVERS);
  symlinkSync(join(elsewhere, "x.json"), join(ctx.cwd, "x.json"));
  expect(projectEscape(join(ctx.cwd, "x.json"), ctx.cwd)).toContain("outside the project directory");
  expect(projectEscape(join(ctx.cwd, "missing.json"), ctx.cwd)).toBeUndefined();
});

test("a project .mcp.json that is a FIFO, /dev/zero or a directory is a problem of the file, found without blocking", () => {
  expect(Bun.spawnSync(["mkfifo", join(ctx.cwd, ".mcp.json")]).exitCode).toBe(0);
  expect(fileAt(discover("claude-code", ctx), join(ctx.cwd, ".mcp.json"))?.problems).toEqual(["is a FIFO (named pipe), not a regular file"]);
  const zero = { ...ctx, cwd: join(dir.path, "zero") };
  mkdirSync(zero.cwd);
  symlinkSync("/dev/zero", join(zero.cwd, ".mcp.json"));
  // /dev/zero is outside the project too; both are said, the link first.
  expect(fileAt(discover("claude-code", zero), join(zero.cwd, ".mcp.json"))?.problems).toEqual([
    `resolves through a symbolic link to /dev/zero, outside the project directory ${zero.cwd}`,
    "is a character device, not a regular file",
  ]);
  mkdirSync(join(ctx.home, ".claude.json"));
  expect(fileAt(discover("claude-code", ctx), join(ctx.home, ".claude.json"))?.problems).toEqual(["is a directory, not a regular file"]);
});
