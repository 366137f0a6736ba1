import { defineCommand } from "citty";
import { EXIT, usageError } from "../core/errors.ts";
import { journalPath } from "../core/paths.ts";
import { repair, type RepairOutcome } from "../wrap/repair.ts";
import { commonArgs, rejectUnknownFlags } from "./_shared.ts";

const args = {
  "config-path": { type: "string", description: "Repair only this agent config", valueHint: "PATH" },
  all: { type: "boolean", description: "Repair every config in the wrap journal (the default)" },
  "dry-run": { type: "boolean", description: "Show what would be restored, as a unified diff; change nothing" },
  ...commonArgs,
} as const;

export default defineCommand({
  meta: {
    name: "unwrap",
    description: "Restore agent configs a crashed or killed `thoughtgate wrap` left rewritten (running wraps are refused)",
  },
  args,
  run({ rawArgs, args: parsed }) {
    rejectUnknownFlags(rawArgs, args);
    const configPath = parsed["config-path"];
    if (configPath !== undefined && parsed.all === true) throw usageError("--config-path and --all exclude each other");
    const outcomes = repair({ configPath, dryRun: parsed["dry-run"] === true });
    const lines = outcomes.length === 0 ? [nothingToDo(configPath)] : outcomes.flatMap((outcome) => render(outcome));
    process.stdout.write(`${lines.join("\n")}\n`);
    const bad = outcomes.some((o) => o.status === "refused" || o.status === "failed" || o.status === "orphan-backup");
    return bad ? EXIT.error : EXIT.ok;
  },
});

function nothingToDo(configPath: string | undefined): string {
  return configPath === undefined
    ? `nothing to restore: the wrap journal (${journalPath()}) has no records`
    : `nothing to restore for ${configPath}: the wrap journal has no record of it`;
}

function render(outcome: RepairOutcome): string[] {
  switch (outcome.status) {
    case "restored":
    case "would-restore": {
      const would = outcome.status === "would-restore";
      const by = `left by wrap pid ${outcome.pid}, ${outcome.agentType}`;
      const line = {
        backup: `${would ? "would restore" : "restored"} ${outcome.configPath} from its backup, byte for byte (${by})`,
        "owned-keys": `${would ? "would restore" : "restored"} ${outcome.configPath}: the entries wrap rewrote get their original text back, other changes made since stay (${by})`,
        unchanged: `${outcome.configPath} already holds its original content; ${would ? "would remove" : "removed"} the backup (${by})`,
        "never-rewritten": `${outcome.configPath} was backed up but never rewritten; ${would ? "would remove" : "removed"} the backup (${by})`,
      }[outcome.kind];
      return outcome.status === "would-restore" && outcome.diff !== "" ? [line, outcome.diff.trimEnd()] : [line];
    }
    case "refused":
      return [`refused ${outcome.configPath}: ${outcome.reason}`];
    case "enrolled":
      return [`${outcome.configPath} stays rewritten: it is enrolled (${outcome.agentType}); \`thoughtgate unenroll\` puts it back`];
    case "failed":
      return [`FAILED ${outcome.configPath}: ${outcome.reason}`];
    case "orphan-backup":
      return [
        `${outcome.configPath}: the wrap journal has no record of it, but ${outcome.backupPath} exists; compare the two and keep the one you want (mv the backup over the config, or delete it)`,
      ];
  }
}
