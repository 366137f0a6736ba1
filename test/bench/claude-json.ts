/**
 * A ~1 MB `~/.claude.json` like the one Claude Code keeps after months of use: settings, a cached
 * changelog, one `projects` entry per directory it was started in (prompt history with pasted
 * logs and code, per-session costs, now and then a local server), and a top-level `mcpServers`
 * with three stdio servers and one remote. Claude Code writes the file with
 * `JSON.stringify(config, null, 2)`, and so does this. The content is generated from a fixed seed,
 * so every run times the same bytes; the prompts carry what a JSON scanner must step over
 * correctly: braces, brackets, quotes and backslashes inside strings, newlines, non-ASCII text.
 */

export const CLAUDE_JSON_BYTES = 1024 * 1024;

type HistoryItem = { display: string; pastedContents: Record<string, { id: number; type: "text"; content: string }> };
type Project = Record<string, unknown> & { history: HistoryItem[]; lastSessionId: string };
export type ClaudeJson = Record<string, unknown> & { numStartups: number; projects: Record<string, Project> };

/** The three stdio servers wrap governs and the remote one it leaves alone, as `claude mcp add` writes them. */
export const USER_SERVERS = {
  filesystem: { type: "stdio", command: "npx", args: ["-y", "@modelcontextprotocol/server-filesystem", "/home/zoë/Documents"], env: {} },
  github: {
    type: "stdio",
    command: "docker",
    args: ["run", "-i", "--rm", "-e", "GITHUB_PERSONAL_ACCESS_TOKEN", "ghcr.io/github/github-mcp-server"],
    env: { GITHUB_PERSONAL_ACCESS_TOKEN: "${GITHUB_TOKEN}" },
  },
  memory: { type: "stdio", command: "npx", args: ["-y", "@modelcontextprotocol/server-memory"], env: {} },
  sentry: { type: "http", url: "https://mcp.sentry.dev/mcp" },
} as const;
/** The three stdio servers and the remote one (wrap runs it through `thoughtgate shim --url`). */
export const GOVERNED_SERVERS = 4;

/** mulberry32: a small seeded generator, so the file is the same in every run. */
function generator(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const WORDS = (
  "the build script fails on ci when the cache is cold can you explain why refactor this function to return a result " +
  "instead of throwing add a test for the empty case update the readme rename the flag keep the old one as an alias " +
  "why does the migration lock the table check the logs below fix the flaky test in the parser module"
).split(" ");
const SNIPPETS = [
  'const config = { "mcpServers": { "x": { "command": "npx" } } };',
  "if (a[i] === '}' && depth > 0) { depth--; } // closing brace",
  'path = "C:\\\\Users\\\\zoë\\\\AppData\\\\Roaming\\\\Claude"',
  "SELECT id, name FROM projects WHERE name LIKE '%[tmp]%';",
  "regex: /\\{\\s*\"projects\"\\s*:/ matches the start",
  "日本語のコメントを英語に翻訳して — and keep the émojis 🎉",
];
const LOG_LINES = [
  "error: expected '}' at line 12, column 4",
  '  at parse (src/config.ts:88:17) {"code":"ERR_PARSE","path":["projects","/srv/app"]}',
  "warn: retrying request [attempt 3/5] after 250ms",
  "PASS test/parser.test.ts (1.204 s)",
  '{"level":30,"msg":"listening","port":8080,"tags":["http","api"]}',
];

/**
 * The file's content, with `projectDir` (the directory wrap runs in) among the projects, halfway
 * through, with no servers of its own, as Claude Code leaves a project where `claude mcp add` was
 * never run. Projects are added until the formatted file reaches `CLAUDE_JSON_BYTES`.
 */
export function claudeJson(projectDir: string): ClaudeJson {
  const random = generator(0x7467);
  const pick = <T>(items: readonly T[]): T => items[Math.floor(random() * items.length)] as T;
  const words = (n: number) => Array.from({ length: n }, () => pick(WORDS)).join(" ");
  const hex = (words32: number) => Array.from({ length: words32 }, () => Math.floor(random() * 0x1_0000_0000).toString(16).padStart(8, "0")).join("");
  const id = () => hex(4).replace(/^(.{8})(.{4})(.{4})(.{4})/, "$1-$2-$3-$4-");

  const history = (): HistoryItem[] =>
    Array.from({ length: 10 + Math.floor(random() * 40) }, (_, i): HistoryItem => {
      const display = random() < 0.3 ? `${words(8)}\n\n\`\`\`\n${pick(SNIPPETS)}\n\`\`\`` : words(6 + Math.floor(random() * 30));
      if (random() >= 0.15) return { display: i % 7 === 0 ? `[Image #1] ${display}` : display, pastedContents: {} };
      const content = Array.from({ length: 10 + Math.floor(random() * 40) }, () => pick(LOG_LINES)).join("\n");
      return { display: `[Pasted text #1 +${content.split("\n").length} lines] ${display}`, pastedContents: { "1": { id: 1, type: "text", content } } };
    });
  const project = (servers: Record<string, unknown>): Project => ({
    allowedTools: random() < 0.3 ? ["Bash(npm test:*)", "Edit", "mcp__github__get_issue"] : [],
    history: history(),
    mcpContextUris: [],
    mcpServers: servers,
    enabledMcpjsonServers: [],
    disabledMcpjsonServers: [],
    hasTrustDialogAccepted: true,
    projectOnboardingSeenCount: Math.floor(random() * 5),
    hasClaudeMdExternalIncludesApproved: false,
    hasClaudeMdExternalIncludesWarningShown: false,
    lastCost: Math.round(random() * 400) / 100,
    lastAPIDuration: Math.floor(random() * 600_000),
    lastDuration: Math.floor(random() * 3_600_000),
    lastLinesAdded: Math.floor(random() * 900),
    lastLinesRemoved: Math.floor(random() * 400),
    lastTotalInputTokens: Math.floor(random() * 90_000),
    lastTotalOutputTokens: Math.floor(random() * 40_000),
    lastTotalCacheCreationInputTokens: Math.floor(random() * 200_000),
    lastTotalCacheReadInputTokens: Math.floor(random() * 2_000_000),
    lastSessionId: id(),
    exampleFiles: ["src/index.ts", "src/config.ts", "README.md", "package.json"].filter(() => random() < 0.7),
    exampleFilesGeneratedAt: 1_760_000_000_000 + Math.floor(random() * 10_000_000_000),
  });
  const localServer = { db: { type: "stdio", command: "uvx", args: ["mcp-server-sqlite", "--db-path", "./dev.db"], env: {} } };

  const projects: [string, Project][] = [];
  // Formatted size of the projects so far: each line of an entry is indented 4 more in the file.
  let bytes = 40_000;
  while (bytes < CLAUDE_JSON_BYTES) {
    const dir = `/home/zoë/src/${words(2).replaceAll(" ", "-")}-${projects.length}`;
    const entry = project(random() < 0.1 ? localServer : {});
    const text = JSON.stringify(entry, null, 2);
    bytes += text.length + 4 * text.split("\n").length + dir.length + 8;
    projects.push([dir, entry]);
  }
  projects.splice(Math.floor(projects.length / 2), 0, [projectDir, project({})]);

  return {
    numStartups: 412,
    installMethod: "native",
    autoUpdates: true,
    theme: "dark",
    verbose: false,
    tipsHistory: { "new-user-warmup": 7, "memory-command": 12, "shift-tab": 31, "git-worktrees": 4 },
    userID: hex(8),
    firstStartTime: "2026-02-11T08:14:03.511Z",
    projects: Object.fromEntries(projects),
    hasCompletedOnboarding: true,
    lastOnboardingVersion: "2.1.4",
    cachedChangelog: Array.from({ length: 120 }, (_, i) => `## 2.${Math.floor(i / 10)}.${i % 10}\n\n- ${words(12)}\n- ${words(9)}`).join("\n\n"),
    oauthAccount: { accountUuid: id(), emailAddress: "zoë@example.com", organizationUuid: id(), organizationName: "Zoë's Org" },
    // `claude mcp add --scope user` creates the key when the first server is added: at the end.
    mcpServers: USER_SERVERS,
  };
}

/** The file as Claude Code writes it; `startups` makes each text differ from the last. */
export function claudeJsonText(config: ClaudeJson, startups: number): string {
  return JSON.stringify({ ...config, numStartups: startups }, null, 2);
}

/**
 * What Claude Code does to the file during a session, applied to the parsed text: counts the
 * start, records the prompt in the project's history (newest first) and the session's id, and
 * saves the whole file again with `JSON.stringify`.
 */
export function agentSaves(text: string, projectDir: string, session: number): string {
  const config = JSON.parse(text) as ClaudeJson;
  config.numStartups += 1;
  const project = config.projects[projectDir];
  if (!project) throw new Error(`no project ${projectDir} in the generated ~/.claude.json`);
  project.history.unshift({ display: `bench session ${session}: list the open issues`, pastedContents: {} });
  project.lastSessionId = `00000000-0000-4000-8000-${String(session).padStart(12, "0")}`;
  return JSON.stringify(config, null, 2);
}
