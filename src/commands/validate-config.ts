import { defineCommand } from "citty";
import { existsSync, readFileSync } from "node:fs";
import { discoverConfig, loadConfig, parseConfig } from "../core/config/load.ts";
import { EXIT, messageOf, ThoughtGateError } from "../core/errors.ts";
import { EMBEDDED_DEFAULT, EMBEDDED_DEFAULT_YAML } from "../governance/default-policy.ts";
import { GovernanceEngine } from "../governance/engine.ts";
import { explainPolicy } from "../governance/explain.ts";
import { commonArgs, rejectUnknownFlags } from "./_shared.ts";

const args = {
  path: { type: "positional", required: false, description: "The file to check (default: $THOUGHTGATE_CONFIG, ./thoughtgate.yaml, ~/.config/thoughtgate/thoughtgate.yaml)" },
  explain: { type: "boolean", description: "Also print the effective policy: sources, rules in order, default, workflows, Cedar policies" },
  ...commonArgs,
} as const;

export default defineCommand({
  meta: { name: "validate-config", description: "Check a thoughtgate.yaml (and its Cedar files): each problem as `path: message`, exit 0 or 1" },
  args,
  async run({ rawArgs, args: parsed }) {
    rejectUnknownFlags(rawArgs, args);
    const out: string[] = [];
    const code = await validate(parsed.path, parsed.explain === true, out);
    await Bun.write(Bun.stdout, `${out.join("\n")}\n`);
    return code;
  },
});

async function validate(path: string | undefined, explain: boolean, out: string[]): Promise<number> {
  const found = discoverConfig(path);
  if (!found) {
    out.push("no thoughtgate.yaml found ($THOUGHTGATE_CONFIG, ./thoughtgate.yaml, ~/.config/thoughtgate/thoughtgate.yaml): the embedded default policy applies");
    if (explain) out.push("", ...explainPolicy(EMBEDDED_DEFAULT, { file: null, origin: "embedded" }, []), "", "as a thoughtgate.yaml:", EMBEDDED_DEFAULT_YAML.trimEnd());
    return EXIT.ok;
  }
  if (!existsSync(found.file)) {
    out.push(`${found.file}: no such file`);
    return EXIT.error;
  }
  const parsed = parseConfig(readFileSync(found.file, "utf8"));
  if (!parsed.ok) {
    out.push(`${found.file}: ${parsed.problems.length} problem${parsed.problems.length === 1 ? "" : "s"}`, ...parsed.problems.map((p) => `${p.path}: ${p.message}`));
    return EXIT.error;
  }
  // The schema is fine; now the Cedar files it names must parse (and match their schema).
  let engine: GovernanceEngine;
  try {
    const loaded = loadConfig(found.file);
    if (!loaded) throw new ThoughtGateError("CONFIG", `${found.file}: disappeared while being checked`);
    engine = await GovernanceEngine.fromConfig(loaded.config, found.file);
  } catch (error) {
    out.push(`${found.file}: 1 problem`, `cedar: ${messageOf(error)}`);
    return EXIT.error;
  }
  out.push(`ok: ${found.file}`);
  if (explain) out.push("", ...explainPolicy(engine.config, found, engine.cedar?.policyIds ?? []));
  return EXIT.ok;
}
