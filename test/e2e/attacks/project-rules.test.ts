/**
 * Attack: a rule kept to one project (`project: /x/app`, what "always allow in this project"
 * writes) stretched to another. A repository next to it whose path starts the same way
 * (`/x/app-evil`), or a repository of its own nested inside it (`/x/app/vendor/dep` with its own
 * `.git`), is another project: the rule must not apply there. Through the compiled binary: a
 * standalone shim started in each directory, under the user's policy.
 */
import { afterAll, describe, expect, setDefaultTimeout, test } from "bun:test";
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { fixture, tempDir } from "../../support/harness.ts";
import { RawAgent } from "../../support/raw-agent.ts";

setDefaultTimeout(60_000);

const dir = tempDir("thoughtgate-project-rules-");
afterAll(() => dir[Symbol.dispose]());

const home = join(dir.path, "home");
const app = join(dir.path, "x", "app");
const places = {
  app,
  "a folder of app": join(app, "lib"),
  "app-evil beside it": join(dir.path, "x", "app-evil"),
  "a repository nested in app": join(app, "vendor", "dep"),
  "a folder of the nested repository": join(app, "vendor", "dep", "src"),
};
for (const repo of [app, places["app-evil beside it"], places["a repository nested in app"]]) mkdirSync(join(repo, ".git"), { recursive: true });
for (const place of Object.values(places)) mkdirSync(place, { recursive: true });
mkdirSync(join(home, ".config", "thoughtgate"), { recursive: true });
writeFileSync(
  join(home, ".config", "thoughtgate", "thoughtgate.yaml"),
  `schema: 1
governance:
  rules:
    - { id: always-app, match: echo, project: ${JSON.stringify(app)}, action: forward }
    - { id: not-elsewhere, match: echo, action: deny }
`,
);

const env: Record<string, string> = {};
for (const [key, value] of Object.entries(process.env)) if (value !== undefined && !key.startsWith("THOUGHTGATE_")) env[key] = value;
Object.assign(env, { HOME: home, XDG_CONFIG_HOME: join(home, ".config"), XDG_STATE_HOME: join(home, ".state") });

/** The rule that decided `echo` for a shim started in `cwd`. */
async function decidingRule(cwd: string): Promise<string> {
  const agent = new RawAgent(["--server-id", "notes", "--events", "none", "--", ...fixture("scripted-server-fixture.ts")], env, undefined, cwd);
  try {
    const answer = await agent.request(1, "tools/call", { name: "echo", arguments: { text: "hi" } });
    return answer.error ? String(answer.error.data?.rule_id) : "forwarded";
  } finally {
    await agent.close();
  }
}

describe("a rule's project: is that project, exactly", () => {
  test("it applies in the project and its folders; not in a directory whose path starts the same, nor in a repository nested inside", async () => {
    const decided: Record<string, string> = {};
    for (const [name, cwd] of Object.entries(places)) decided[name] = await decidingRule(cwd);
    expect(decided).toEqual({
      app: "forwarded",
      "a folder of app": "forwarded",
      "app-evil beside it": "not-elsewhere",
      "a repository nested in app": "not-elsewhere",
      "a folder of the nested repository": "not-elsewhere",
    });
  });
});
