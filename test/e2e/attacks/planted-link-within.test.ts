/**
 * Attack: the user's policy lets writes inside the project through (`within: "${PROJECT}"`), and a
 * cloned repository plants a link that leads out of it (`docs -> ~/.ssh`, or a dangling
 * `keys -> ~/.ssh/authorized_keys`). The agent, prompt-injected, writes through the link. The rule
 * judges the path where it leads, so the write is not "inside the project": it gets what the rest
 * of the policy says (here: denied), and nothing is written outside. Through the compiled shim and
 * the real server-filesystem, which is allowed both directories.
 */
import { afterEach, expect, setDefaultTimeout, test } from "bun:test";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { McpError } from "@modelcontextprotocol/sdk/types.js";
import { existsSync, mkdirSync, readFileSync, symlinkSync } from "node:fs";
import { join } from "node:path";
import { FILESYSTEM_SERVER_JS, requireBinary } from "../../support/harness.ts";
import { policyHome } from "../../support/policy-home.ts";

setDefaultTimeout(60_000);

const open: Array<{ close(): Promise<void> }> = [];
afterEach(async () => {
  for (const client of open.splice(0)) await client.close();
});

test("a link out of the project is judged where it leads: the write is refused and nothing lands outside", async () => {
  using home = policyHome();
  mkdirSync(join(home.project, ".git"));
  const ssh = join(home.project, "..", "ssh");
  mkdirSync(ssh);
  symlinkSync(ssh, join(home.project, "docs"));
  symlinkSync(join(ssh, "authorized_keys"), join(home.project, "keys"));
  home.writeUser(`schema: 1
governance:
  defaults: { action: deny }
  rules:
    - { id: writes-in-project, match: write_file, arguments: { path: { within: "\${PROJECT}" } }, action: forward }
`);
  const transport = new StdioClientTransport({
    command: requireBinary(),
    args: ["shim", "--server-id", "filesystem", "--events", "none", "--", "node", FILESYSTEM_SERVER_JS, home.project, ssh],
    env: { PATH: process.env.PATH ?? "/usr/bin:/bin", HOME: join(home.project, ".."), ...home.env },
    cwd: home.project,
    stderr: "pipe",
  });
  const client = new Client({ name: "attack", version: "1" }, { capabilities: {} });
  await client.connect(transport);
  open.push(client);
  const write = async (path: string) => {
    try {
      await client.callTool({ name: "write_file", arguments: { path, content: "ssh-ed25519 AAAA attacker\n" } });
      return "written";
    } catch (error) {
      return error instanceof McpError ? `${error.code} ${String((error.data as { rule_id?: unknown })?.rule_id)}` : String(error);
    }
  };
  expect(await write(join(home.project, "docs", "authorized_keys"))).toBe("-32014 defaults");
  expect(await write(join(home.project, "keys"))).toBe("-32014 defaults");
  expect(await write("docs/authorized_keys")).toBe("-32014 defaults");
  expect(existsSync(join(ssh, "authorized_keys"))).toBe(false);
  // The rule itself works: a write really inside the project goes through.
  expect(await write(join(home.project, "notes.md"))).toBe("written");
  expect(readFileSync(join(home.project, "notes.md"), "utf8")).toBe("ssh-ed25519 AAAA attacker\n");
});
