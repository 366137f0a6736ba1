/**
 * The real Claude Code (`claude -p`, `claude mcp list`) through `thoughtgate wrap`: its MCP
 * servers run behind shims, the fake Anthropic API's tool calls are governed by the user's policy
 * (forwarded, denied, approved on the desktop and then for the session), servers given on the
 * command line (`--mcp-config FILE`, inline JSON) are governed as well, and every config is put
 * back. Between each shim and server-everything a recorder shows what the server actually got.
 */
import { describe, expect, setDefaultTimeout, test } from "bun:test";
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { agentBinary, agentSandbox, claudeCode, claudeToolName, describeRun, everythingServer, recordedServer, runAgent } from "../../support/agents.ts";
import { startFakeAnthropic } from "../../support/fake-models/anthropic.ts";
import { fakeNotifySend } from "../../support/fake-notify.ts";
import { waitFor } from "../../support/harness.ts";
import { bytes, decisions, runWrapped, shimCommandPattern, throughWrap, withRecord, writeUserPolicy } from "../../support/wrapped-agents.ts";

// A real agent, shims and servers on a shared 2-core box; bun 1.4.5 does not apply bunfig's [test] timeout.
setDefaultTimeout(90_000);

const ECHO = claudeToolName("everything", "echo");
const SUM = claudeToolName("everything", "get-sum");
const POLICY = `schema: 1
governance:
  rules:
    - { id: no-sums, match: get-sum, action: deny }
`;

const toolCalls = (sent: Array<Record<string, unknown>>) =>
  sent.filter((message) => message.method === "tools/call").map((message) => (message.params as { name: string }).name);

describe("claude -p through thoughtgate wrap", () => {
  test("the user's servers: an allowed call's result reaches the model, a denied one never reaches the server, the record has both, the config is put back", async () => {
    await using sandbox = agentSandbox();
    writeUserPolicy(sandbox, POLICY);
    await using model = startFakeAnthropic({
      calls: [
        { tool: ECHO, arguments: { message: "through the shim" } },
        { tool: SUM, arguments: { a: 2, b: 3 } },
      ],
      finalText: "Done.",
    });
    const pipe = recordedServer(sandbox, everythingServer(sandbox));
    const launch = throughWrap(claudeCode(sandbox, { model, servers: { everything: pipe.server }, scope: "user", prompt: "Echo, then add.", allowedTools: [ECHO, SUM] }));
    const config = join(sandbox.home, ".claude.json");
    const before = JSON.parse(readFileSync(config, "utf8")) as { mcpServers: unknown };
    const run = await runWrapped(launch, sandbox);
    expect(
      {
        exitCode: run.exitCode,
        results: model.toolResults.map(({ tool, text, isError }) => ({ tool, text, isError })),
        reachedTheServer: toolCalls(pipe.sent()),
        decisions: decisions(run),
        leftovers: run.leftovers,
      },
      describeRun(launch, run, model),
    ).toEqual({
      exitCode: 0,
      results: [
        { tool: ECHO, text: "Echo: through the shim", isError: undefined },
        { tool: SUM, text: "ThoughtGate blocked tools/call get-sum: rule no-sums: deny", isError: true },
      ],
      reachedTheServer: ["echo"],
      decisions: ["everything.echo forward (defaults)", "everything.get-sum deny (no-sums)"],
      leftovers: [],
    });
    // Claude Code rewrites ~/.claude.json on every run: wrap keeps its changes and puts back only the server entry.
    expect(run.stderr).toContain(`restored ${config} (kept the agent's own changes)`);
    const after = readFileSync(config, "utf8");
    expect((JSON.parse(after) as { mcpServers: unknown }).mcpServers).toEqual(before.mcpServers);
    expect(after).not.toContain("shim --server-id");
  });

  test("--mcp-config FILE and inline JSON: both governed through copies, the given file untouched", async () => {
    await using sandbox = agentSandbox();
    writeUserPolicy(sandbox, POLICY);
    const inlineEcho = claudeToolName("inline", "echo");
    await using model = startFakeAnthropic({
      calls: [
        { tool: ECHO, arguments: { message: "from the file" } },
        { tool: inlineEcho, arguments: { message: "from the command line" } },
        { tool: claudeToolName("inline", "get-sum"), arguments: { a: 1, b: 1 } },
      ],
      finalText: "Done.",
    });
    const file = join(sandbox.root, "servers.json");
    writeFileSync(file, `${JSON.stringify({ mcpServers: { everything: everythingServer(sandbox) } }, null, 2)}\n`);
    const original = bytes(file);
    const inline = JSON.stringify({ mcpServers: { inline: everythingServer(sandbox) } });
    const base = claudeCode(sandbox, { model, servers: {}, scope: "user", prompt: "Echo twice, then add.", allowedTools: [ECHO, inlineEcho, claudeToolName("inline", "get-sum")] });
    const launch = throughWrap({ ...base, argv: [...base.argv, "--mcp-config", file, inline, "--strict-mcp-config"] });
    const run = await runWrapped(launch, sandbox);
    expect(
      { exitCode: run.exitCode, results: model.toolResults.map(({ tool, text }) => ({ tool, text })), decisions: decisions(run), leftovers: run.leftovers },
      describeRun(launch, run, model),
    ).toEqual({
      exitCode: 0,
      results: [
        { tool: ECHO, text: "Echo: from the file" },
        { tool: inlineEcho, text: "Echo: from the command line" },
        { tool: claudeToolName("inline", "get-sum"), text: "ThoughtGate blocked tools/call get-sum: rule no-sums: deny" },
      ],
      decisions: ["everything.echo forward (defaults)", "inline.echo forward (defaults)", "inline.get-sum deny (no-sums)"],
      leftovers: [],
    });
    expect(bytes(file).equals(original)).toBe(true);
  });

  test("an approval: -p answers no prompt, so the desktop notification asks; 'allow for this session' lets the next call through unasked", async () => {
    await using sandbox = agentSandbox();
    using notify = fakeNotifySend(sandbox.env.PATH);
    writeUserPolicy(sandbox, `schema: 1\ngovernance:\n  rules:\n    - { id: ask-echo, match: echo, action: approve }\n`);
    await using model = startFakeAnthropic({
      calls: [
        { tool: ECHO, arguments: { message: "first, asked" } },
        { tool: ECHO, arguments: { message: "second, under the grant" } },
      ],
      finalText: "Done.",
    });
    const pipe = recordedServer(sandbox, everythingServer(sandbox));
    const launch = throughWrap(claudeCode(sandbox, { model, servers: { everything: pipe.server }, scope: "project", prompt: "Echo twice.", allowedTools: [ECHO] }), { env: notify.env });
    const running = runAgent(launch, sandbox);
    const [shown] = await waitFor(() => (notify.notifications().length > 0 ? notify.notifications() : null), "the desktop notification");
    expect(shown?.title).toBe("ThoughtGate: allow everything.echo?");
    expect(shown?.body).toMatch(/^Task [0-9a-f]{12}, rule ask-echo\.\nDecide with the approvals page http:\/\/127\.0\.0\.1:\d+\/approvals \(open the link/);
    await notify.click(shown?.pid ?? 0, "session");
    const run = withRecord(await running);
    const pageKey = /\/approvals#key=([0-9a-f]{64})/.exec(run.stderr)?.[1] ?? "missing";
    const task = /^Task ([0-9a-f]{12})/.exec(shown?.body ?? "")?.[1];
    expect(
      {
        exitCode: run.exitCode,
        results: model.toolResults.map(({ text }) => text),
        reachedTheServer: toolCalls(pipe.sent()),
        decisions: decisions(run),
        notifications: notify.notifications().length,
        keyInANotification: notify.notifications().some((n) => n.args.join(" ").includes(pageKey)),
        leftovers: run.leftovers,
      },
      describeRun(launch, run, model),
    ).toEqual({
      exitCode: 0,
      results: ["Echo: first, asked", "Echo: second, under the grant"],
      reachedTheServer: ["echo", "echo"],
      // Approved by the desktop click: no elicitation was put to Claude Code, which would have
      // cancelled it unseen (and the approval would have been lost).
      decisions: [
        "everything.echo pending",
        "everything.echo forward (ask-echo) by desktop",
        "everything.echo pending",
        `everything.echo forward (ask-echo) by session_grant:${task}`,
      ],
      notifications: 1,
      keyInANotification: false,
      leftovers: [],
    });
    expect(run.stderr).toContain("answers no approval prompt itself");
    expect(run.stderr).toMatch(/forwarded +2 \(1 approved by a person\) \(1 allowed for the session by a person's earlier approval\)/);
  });
});

describe("claude mcp list through thoughtgate wrap", () => {
  test("reports the server connected through the shim; ~/.claude.json is byte-identical afterwards", async () => {
    await using sandbox = agentSandbox();
    const config = join(sandbox.home, ".claude.json");
    writeFileSync(config, `${JSON.stringify({ mcpServers: { everything: everythingServer(sandbox) } }, null, 2)}\n`);
    const list = { agent: "claude-code" as const, argv: [agentBinary("claude-code"), "mcp", "list"], cwd: sandbox.project, env: { ...sandbox.env, CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: "1", DISABLE_AUTOUPDATER: "1" } };
    // Claude Code adds its own keys (firstStartTime, userID, …) on its first run and leaves the file
    // alone after that: a user's file is one it has run with before.
    expect((await runAgent(list, sandbox)).stdout).toContain("everything: node");
    const original = bytes(config);
    const run = withRecord(await runAgent(throughWrap(list), sandbox));
    expect({ exitCode: run.exitCode, leftovers: run.leftovers }, run.stderr).toEqual({ exitCode: 0, leftovers: [] });
    expect(run.stdout).toMatch(new RegExp(`everything: ${shimCommandPattern(sandbox, "everything")}.* - ✔ Connected`));
    expect(run.events("run_start")).toHaveLength(1);
    expect(bytes(config).equals(original)).toBe(true);
  });
});
