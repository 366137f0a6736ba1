import { defineCommand } from "citty";
import { EXIT } from "../core/errors.ts";
import { DEFAULT_REQUEST_TIMEOUT_MS } from "../mcp/client.ts";
import { showInvisible, showInvisibleInJson } from "../core/visible-text.ts";
import { definitionDigest, type DefinitionKind } from "../governance/definitions/definition.ts";
import { describeFinding, FindingContext, findingsOf, worstSeverity, type Finding, type OtherDefinition } from "../governance/definitions/findings.ts";
import { allPinFiles } from "../governance/definitions/pin-store.ts";
import { inspectServer, type Hint, type InspectReport } from "../mcp/inspect.ts";
import { commonArgs, optionalDuration, splitChildCommand } from "./_shared.ts";

const args = {
  json: { type: "boolean", description: "Print one JSON document (with each tool's full definition) instead of tables" },
  timeout: { type: "string", description: "Wait this long for each answer from the server (default 30s)", valueHint: "DURATION" },
  "server-id": { type: "string", description: "The server's id in your pins: its own pinned tools are not taken for another server's when checking for shadowing", valueHint: "ID" },
  ...commonArgs,
} as const;

export default defineCommand({
  meta: {
    name: "inspect",
    description: "Start an MCP server, list its tools (annotations, definition hash), prompts and resources, stop it",
  },
  args,
  async run({ rawArgs, args: parsed }) {
    const { child } = splitChildCommand(rawArgs, args, "inspect");
    const timeoutMs = optionalDuration(parsed.timeout, "--timeout") ?? DEFAULT_REQUEST_TIMEOUT_MS;
    const report = withFindings(await inspectServer({ command: child, timeoutMs }), parsed["server-id"]);
    // Bun.write waits until a slow pipe took everything: the CLI exits right after we return.
    // Every string in the report is the server's: shown escaped, so nothing in it drives the terminal
    // (`\u001b[8m` would conceal every line after it, the findings included). The JSON escapes are
    // JSON's own, so the document parses to exactly what the server sent.
    await Bun.write(Bun.stdout, parsed.json ? `${showInvisibleInJson(JSON.stringify(report, null, 2))}\n` : renderTables(report));
    return EXIT.ok;
  },
});

type Checked = Omit<InspectReport, "tools" | "prompts"> & { tools: Array<InspectReport["tools"][number] & { findings: Finding[] }>; prompts: Array<InspectReport["prompts"][number] & { findings: Finding[] }> };

/**
 * The poisoning checks the shim runs on every list (docs/governance.md, "Pinned definitions"), on
 * what the server serves: its tools against each other and against the tools other servers have
 * pinned (shadowing), its prompts against each other.
 */
function withFindings(report: InspectReport, serverId: string | undefined): Checked {
  const others: OtherDefinition[] = allPinFiles().files.flatMap(({ file }) =>
    file.server_id === serverId ? [] : Object.values(file.definitions).filter((e) => e.kind === "tool").map((e) => ({ serverId: file.server_id, name: e.name, digest: e.digest })),
  );
  const check = <T extends { name: string; definition: unknown }>(kind: DefinitionKind, items: T[], pinned: OtherDefinition[]) => {
    const lengths = items.map((item) => ((item.definition as { description?: unknown })?.description as string | undefined)?.length ?? 0);
    const context = new FindingContext(new Set(items.map((item) => item.name)), lengths, pinned);
    return items.map((item) => ({ ...item, findings: findingsOf(kind, item.name, item.definition, definitionDigest(item.definition), context) }));
  };
  return { ...report, tools: check("tool", report.tools, others), prompts: check("prompt", report.prompts, []) };
}

/** Plain-text tables; no colour, so the output reads the same in a terminal, a pipe or a file. */
function renderTables(report: Checked): string {
  const { server } = report;
  const out: string[] = [];
  out.push(showInvisible(`Server    ${server.title ?? server.name} ${server.version}${server.title ? ` (${server.name})` : ""}`));
  out.push(showInvisible(`Protocol  ${server.protocolVersion}`));
  out.push("");
  out.push(`Tools (${report.tools.length})`);
  if (report.tools.length > 0) {
    out.push(
      ...table(
        ["NAME", "READ-ONLY", "DESTRUCTIVE", "IDEMPOTENT", "OPEN-WORLD", "FINDINGS", "DEFINITION HASH"],
        report.tools.map((tool) => [
          tool.name,
          hint(tool.annotations.readOnlyHint),
          hint(tool.annotations.destructiveHint),
          hint(tool.annotations.idempotentHint),
          hint(tool.annotations.openWorldHint),
          tool.findings.length === 0 ? "-" : `${worstSeverity(tool.findings)} (${tool.findings.length})`,
          tool.definition_hash,
        ]),
      ),
    );
    if (report.tools.some((tool) => Object.values(tool.annotations).includes(null))) {
      out.push("  - = not declared; MCP then assumes read-only no, destructive yes, idempotent no, open-world yes");
    }
  }
  out.push("");
  out.push(`Prompts (${report.prompts.length})`);
  if (report.prompts.length > 0) {
    out.push(
      ...table(
        ["NAME", "ARGUMENTS", "DESCRIPTION"],
        report.prompts.map((prompt) => [
          prompt.name,
          prompt.arguments.map((arg) => (arg.required ? `${arg.name}*` : arg.name)).join(", ") || "-",
          oneLine(prompt.description ?? ""),
        ]),
      ),
    );
    if (report.prompts.some((prompt) => prompt.arguments.some((arg) => arg.required))) out.push("  * = required");
  }
  out.push("");
  out.push(`Resources (${report.resources.length})`);
  if (report.resources.length > 0) {
    out.push(
      ...table(
        ["URI", "NAME", "MIME TYPE"],
        report.resources.map((resource) => [resource.uri, resource.name, resource.mimeType ?? "-"]),
      ),
    );
  }
  const flagged = [...report.tools.map((t) => ({ what: `tool ${t.name}`, findings: t.findings })), ...report.prompts.map((p) => ({ what: `prompt ${p.name}`, findings: p.findings }))].filter((x) => x.findings.length > 0);
  out.push("");
  out.push(flagged.length === 0 ? "Poisoning checks: nothing found" : `Poisoning checks: findings in ${flagged.length} definition(s)`);
  for (const item of flagged) {
    out.push(`  ${showInvisible(item.what)}`);
    for (const finding of item.findings) out.push(`    ${describeFinding(finding)}`);
  }
  return `${out.join("\n")}\n`;
}

/** The cells come from the server: escaped before they are measured, so the columns line up as shown. */
function table(header: string[], serverRows: string[][]): string[] {
  const rows = serverRows.map((row) => row.map(showInvisible));
  const widths = header.map((title, column) => Math.max(title.length, ...rows.map((row) => (row[column] ?? "").length)));
  const line = (cells: string[]) => `  ${cells.map((cell, column) => cell.padEnd(widths[column] ?? 0)).join("  ")}`.trimEnd();
  return [line(header), ...rows.map(line)];
}

function hint(value: Hint): string {
  return value === null ? "-" : value ? "yes" : "no";
}

const DESCRIPTION_CHARS = 60;

function oneLine(text: string): string {
  const flat = text.replace(/\s+/g, " ").trim();
  return flat.length > DESCRIPTION_CHARS ? `${flat.slice(0, DESCRIPTION_CHARS - 1)}…` : flat;
}
