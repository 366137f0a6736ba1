import { defineCommand } from "citty";
import { EXIT, ThoughtGateError, usageError } from "../core/errors.ts";
import { didYouMean } from "../core/suggest.ts";
import { showInvisible, showInvisibleInJson } from "../core/visible-text.ts";
import { visibleLines } from "../governance/verdict/definition-acceptance.ts";
import { KIND_WORDS, pretty } from "../governance/definitions/definition.ts";
import { describeFinding } from "../governance/definitions/findings.ts";
import { acceptPins, pinReport, resetPins, type DefinitionStatus, type PinChange, type ServerPins } from "../governance/definitions/pin-report.ts";
import { EngineHolder } from "../governance/engine/engine-holder.ts";
import { redactText } from "../telemetry/redact.ts";
import { commonArgs, rejectUnknownFlags } from "./_shared.ts";

const ACTIONS = ["list", "show", "accept", "reset"] as const;

const args = {
  action: { type: "positional", required: true, description: `${ACTIONS.join(" | ")}` },
  server: { type: "positional", required: false, description: "The server's --server-id" },
  name: { type: "positional", required: false, description: "A tool (prompt, resource template) name" },
  all: { type: "boolean", description: "accept: every changed or flagged definition of SERVER" },
  json: { type: "boolean", description: "list, show: print JSON" },
  "thoughtgate-config": { type: "string", description: "The policy whose pin settings apply (default: discovery, as the shim does)", valueHint: "PATH" },
  ...commonArgs,
} as const;

export default defineCommand({
  meta: { name: "pins", description: "The pinned tool definitions: pins list | show | accept | reset [SERVER [NAME]]" },
  args,
  async run({ rawArgs, args: parsed }) {
    rejectUnknownFlags(rawArgs, args);
    const action = parsed.action as (typeof ACTIONS)[number];
    if (!ACTIONS.includes(action)) throw usageError(`pins: expected one of ${ACTIONS.join("|")}, got ${JSON.stringify(parsed.action)}${didYouMean(parsed.action, ACTIONS)}`);
    const server = parsed.server ?? null;
    const name = parsed.name ?? null;
    if ((action === "accept" || action === "reset") && process.env.THOUGHTGATE_ACTIVE === "1") {
      // An agent that thoughtgate wrap governs must not accept (or forget) the definitions it is shown.
      throw new ThoughtGateError("CONFIG", `thoughtgate pins ${action} refuses to run inside an agent that thoughtgate wrap governs (THOUGHTGATE_ACTIVE=1): run it from your own terminal`);
    }
    const engines = await EngineHolder.load(parsed["thoughtgate-config"]);
    const threshold = (serverId: string) => engines.engine.pins(serverId).blockSeverity;
    let out: string;
    if (action === "accept") {
      if (server === null || (name === null && !parsed.all)) throw usageError("pins accept SERVER NAME (or SERVER --all)");
      out = changes(acceptPins(server, name, "cli", threshold(server)), "accepted", server);
    } else if (action === "reset") {
      if (server === null) throw usageError("pins reset SERVER [NAME]");
      const { forgotten, removedFiles } = resetPins(server, name);
      out = forgotten.length === 0 ? "" : changes(forgotten, "reset: pinned afresh when next seen:", server);
      for (const path of removedFiles) out += `reset: removed the unreadable pin file ${path}\n`;
      if (out === "") out = `reset: ${showInvisible(server)} had no pinned definitions left\n`;
    } else {
      const { servers, problems } = pinReport(server, threshold);
      if (server !== null && servers.length === 0 && problems.length === 0) throw new ThoughtGateError("CONFIG", `no pins for server ${JSON.stringify(server)}`);
      const picked = name === null ? servers : servers.map((s) => ({ ...s, definitions: s.definitions.filter((d) => d.name === name) }));
      if (name !== null && picked.every((s) => s.definitions.length === 0)) throw new ThoughtGateError("CONFIG", `server ${JSON.stringify(server)} has no pinned definition named ${JSON.stringify(name)}`);
      // The definitions are the server's: invisible characters escaped the JSON way (the same text once parsed).
      out = parsed.json ? `${showInvisibleInJson(JSON.stringify(asJson(picked, action === "show"), null, 2))}\n` : action === "list" ? renderList(picked) : renderShow(picked, name !== null);
      for (const problem of problems) out += `warning: ${problem}\n`;
    }
    await Bun.write(Bun.stdout, out);
    return EXIT.ok;
  },
});

function changes(done: PinChange[], verb: string, server: string): string {
  if (done.length === 0) return `nothing to do: no definition of ${showInvisible(server)} is waiting to be accepted\n`;
  return done.map((c) => `${verb} ${KIND_WORDS[c.kind]} ${showInvisible(`${c.serverId}.${c.name}`)}${c.what === "reset" ? "" : ` (${c.what})`}\n`).join("");
}

function renderList(servers: ServerPins[]): string {
  if (servers.length === 0) return "no pinned definitions yet (a server's are pinned the first time a shim sees its lists)\n";
  const lines: string[] = [];
  for (const { file, definitions } of servers) {
    const count = (status: DefinitionStatus["status"]) => definitions.filter((d) => d.status === status).length;
    const runs = file.url ?? redactText(file.command.join(" "));
    lines.push(`${showInvisible(file.server_id)}  ${definitions.length} pinned, ${count("changed")} changed, ${count("flagged")} flagged  (${showInvisible(runs)})`);
    for (const d of definitions.filter((x) => x.status !== "pinned")) {
      const why = d.status === "changed" ? `changed: ${d.changed.join(", ")}` : `flagged: ${[...new Set(d.findings.map((f) => f.rule))].join(", ")}`;
      lines.push(`  ${d.status === "changed" ? "CHANGED" : "FLAGGED"} ${KIND_WORDS[d.kind]} ${showInvisible(d.name)} (${why}): thoughtgate pins accept ${showInvisible(file.server_id)} ${showInvisible(d.name)}`);
    }
  }
  return `${lines.join("\n")}\n`;
}

function renderShow(servers: ServerPins[], whole: boolean): string {
  const lines: string[] = [];
  for (const { file, definitions } of servers) {
    lines.push(`${showInvisible(file.server_id)} (${showInvisible(file.url ?? redactText(file.command.join(" ")))})`);
    for (const d of definitions) {
      const by = d.entry.accepted_by === null ? "trusted on first use" : `accepted by ${d.entry.accepted_by}`;
      lines.push(`  ${d.status.toUpperCase()} ${KIND_WORDS[d.kind]} ${showInvisible(d.name)}: pinned ${d.entry.pinned_at}, ${by}, digest ${d.entry.digest.slice(0, 16)}`);
      for (const finding of d.findings) lines.push(`    ${describeFinding(finding)}`);
      if (d.diff) lines.push(...visibleLines(redactText(d.diff)).split("\n").map((l) => `    ${l}`));
      if (whole && !d.diff) lines.push(...visibleLines(redactText(pretty(d.entry.definition))).trimEnd().split("\n").map((l) => `    ${l}`));
    }
  }
  return `${lines.join("\n")}\n`;
}

function asJson(servers: ServerPins[], withDefinitions: boolean): unknown {
  return servers.map(({ file, definitions }) => ({
    server_id: file.server_id,
    command: file.command,
    url: file.url,
    definitions: definitions.map((d) => ({
      kind: d.kind,
      name: d.name,
      status: d.status,
      digest: d.entry.digest,
      pinned_at: d.entry.pinned_at,
      accepted_by: d.entry.accepted_by,
      changed: d.changed,
      findings: d.findings,
      ...(withDefinitions ? { definition: d.entry.definition, served: d.entry.served ?? null, diff: d.diff } : {}),
    })),
  }));
}
