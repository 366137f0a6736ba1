import { defineCommand } from "citty";
import { discoverPolicy, policyFiles } from "../core/config/discover.ts";
import { EXIT } from "../core/errors.ts";
import { showInvisible } from "../core/visible-text.ts";
import { EMBEDDED_DEFAULT_YAML } from "../governance/engine/default-policy.ts";
import { explainPolicy } from "../governance/engine/explain.ts";
import { checkPolicyFile, embeddedDefault, loadPolicyInForce, unboundAlwaysAllowRules } from "../governance/engine/policy.ts";
import { commonArgs, rejectUnknownFlags } from "./_shared.ts";

const args = {
  path: {
    type: "positional",
    required: false,
    description: "The file to check, alone (default: $THOUGHTGATE_CONFIG, else ~/.config/thoughtgate/thoughtgate.yaml and ./thoughtgate.yaml, the project's checked as a project policy)",
  },
  explain: { type: "boolean", description: "Also print the effective policy: which files, sources, rules in order, default, workflows, Cedar policies" },
  ...commonArgs,
} as const;

export default defineCommand({
  meta: { name: "validate-config", description: "Check a thoughtgate.yaml (and its Cedar files): each problem as `path: message`, exit 0 or 1" },
  args,
  async run({ rawArgs, args: parsed }) {
    rejectUnknownFlags(rawArgs, args);
    const out: string[] = [];
    const code = await validate(parsed.path, parsed.explain === true, out);
    // A project's policy comes with the repository: its keys and values are shown escaped (src/core/visible-text.ts).
    await Bun.write(Bun.stdout, `${out.join("\n").split("\n").map(showInvisible).join("\n")}\n`);
    return code;
  },
});

async function validate(path: string | undefined, explain: boolean, out: string[]): Promise<number> {
  const discovery = discoverPolicy(path);
  const files = policyFiles(discovery);
  if (files.length === 0) {
    out.push("no thoughtgate.yaml found ($THOUGHTGATE_CONFIG, ~/.config/thoughtgate/thoughtgate.yaml, ./thoughtgate.yaml): the embedded default policy applies");
    if (explain) out.push("", ...explainPolicy(embeddedDefault()), "", "as a thoughtgate.yaml:", EMBEDDED_DEFAULT_YAML.trimEnd());
    return EXIT.ok;
  }
  // Every file is checked, so one run lists the problems of both the user's and the project's.
  let failed = false;
  for (const found of files) {
    const result = await checkPolicyFile(found);
    const name = found.origin === "project" ? `${found.file} (project policy)` : found.file;
    if ("unreadable" in result) out.push(result.unreadable);
    else if ("problems" in result) out.push(`${name}: ${result.problems.length} problem${result.problems.length === 1 ? "" : "s"}`, ...result.problems);
    else out.push(`ok: ${name}`, ...unboundAlwaysAllowRules(result.loaded.config, result.loaded.file).map((note) => `note: ${note}`));
    failed ||= !result.ok;
  }
  if (failed) return EXIT.error;
  if (explain) out.push("", ...explainPolicy(await loadPolicyInForce(discovery)));
  return EXIT.ok;
}
