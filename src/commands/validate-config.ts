import { defineCommand } from "citty";
import { existsSync } from "node:fs";
import { discoverPolicy, policyFiles, type PolicyFile } from "../core/config/discover.ts";
import { loadConfigFile, parseConfig, type LoadedConfig } from "../core/config/load.ts";
import { readPolicyFile } from "../core/config/read-file.ts";
import { EXIT, messageOf } from "../core/errors.ts";
import { EMBEDDED_DEFAULT_YAML } from "../governance/engine/default-policy.ts";
import { GovernanceEngine } from "../governance/engine/engine.ts";
import { explainPolicy } from "../governance/engine/explain.ts";
import { embeddedDefault, loadPolicyInForce, unboundAlwaysAllowRules } from "../governance/engine/policy.ts";
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
    await Bun.write(Bun.stdout, `${out.join("\n")}\n`);
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
    const result = await check(found);
    const name = found.origin === "project" ? `${found.file} (project policy)` : found.file;
    if ("unreadable" in result) out.push(result.unreadable);
    else if (result.problems.length > 0) out.push(`${name}: ${result.problems.length} problem${result.problems.length === 1 ? "" : "s"}`, ...result.problems);
    else out.push(`ok: ${name}`, ...(result.notes ?? []).map((note) => `note: ${note}`));
    failed ||= "unreadable" in result || result.problems.length > 0;
  }
  if (failed) return EXIT.error;
  if (explain) out.push("", ...explainPolicy(await loadPolicyInForce(discovery)));
  return EXIT.ok;
}

/** One file's problems as `path: message` lines, or one message naming the file when it cannot be read or placed. */
async function check(found: PolicyFile): Promise<{ problems: string[]; notes?: string[] } | { unreadable: string }> {
  if (!existsSync(found.file)) return { unreadable: `${found.file}: no such file` };
  let text: string;
  try {
    text = readPolicyFile(found.file);
  } catch (error) {
    return { unreadable: messageOf(error) };
  }
  const parsed = parseConfig(text, process.env, found.origin === "project" ? "project" : "user");
  if (!parsed.ok) return { problems: parsed.problems.map((p) => `${p.path}: ${p.message}`) };
  // The schema is fine; now where its files are, and the Cedar files it names must parse (and match their schema).
  let loaded: LoadedConfig;
  try {
    loaded = loadConfigFile(found);
  } catch (error) {
    return { unreadable: messageOf(error) };
  }
  try {
    await GovernanceEngine.fromConfig(loaded.config, loaded.file);
  } catch (error) {
    return { problems: [`cedar: ${messageOf(error)}`] };
  }
  return { problems: [], notes: unboundAlwaysAllowRules(loaded.config, loaded.file) };
}
