/**
 * The bench's agent under `thoughtgate wrap`: reads the rewritten config (CONFIG, `mcpServers`),
 * starts its `bench` entry exactly as written with this process's stdio, so the bench's client
 * (which spawned wrap, whose stdio the agent inherits) talks straight to the session's shim, and
 * exits with the shim's code when the client closes its end.
 */
import { readFileSync } from "node:fs";

const configPath = process.argv[2];
if (!configPath) throw new Error("usage: wrap-exec-agent.ts CONFIG");
const entry = (JSON.parse(readFileSync(configPath, "utf8")) as { mcpServers: Record<string, { command: string; args?: string[]; env?: Record<string, string> }> }).mcpServers.bench;
if (!entry) throw new Error("no bench server in the config");
const shim = Bun.spawn([entry.command, ...(entry.args ?? [])], { stdin: "inherit", stdout: "inherit", stderr: "inherit", env: { ...process.env, ...(entry.env ?? {}) } });
process.exit(await shim.exited);
