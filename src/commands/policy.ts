import { defineCommand } from "citty";
import { existsSync, writeFileSync } from "node:fs";
import { isAbsolute, join, normalize, resolve } from "node:path";
import { MACHINE_ORGANISATION_FILE } from "../core/config/discover.ts";
import { parseConfig } from "../core/config/load.ts";
import { readPolicyFile } from "../core/config/read-file.ts";
import { formatDuration } from "../core/duration.ts";
import { EXIT, ThoughtGateError, usageError } from "../core/errors.ts";
import { generateKeyPair, signBundle } from "../core/policy-bundle.ts";
import { EngineHolder } from "../governance/engine/engine-holder.ts";
import { GovernanceEngine } from "../governance/engine/engine.ts";
import { summarisePolicy, type PolicySummary } from "../governance/engine/policy.ts";
import { commonArgs, rejectUnknownFlags } from "./_shared.ts";

const ACTIONS = ["status", "pull", "sign", "keygen"] as const;

const args = {
  action: { type: "positional", required: true, description: ACTIONS.join(" | ") },
  dir: { type: "positional", required: false, description: "sign: the directory holding the organisation's thoughtgate.yaml and the Cedar files it names" },
  key: { type: "string", description: "sign: the private key keygen wrote", valueHint: "FILE" },
  version: { type: "string", description: "sign: the bundle's version, higher than every one signed before (default: the time in seconds)", valueHint: "N" },
  out: { type: "string", description: "sign: where the bundle goes (default: stdout); keygen: where the private key goes", valueHint: "FILE" },
  json: { type: "boolean", description: "status, pull: print JSON" },
  "thoughtgate-config": { type: "string", description: "status, pull: the policy file whose policy.organisation applies (default: discovery)", valueHint: "PATH" },
  ...commonArgs,
} as const;

export default defineCommand({
  meta: {
    name: "policy",
    description: "The organisation's policy: policy status | pull (this machine's), policy sign DIR --key K | keygen --out K (the administrator's)",
  },
  args,
  async run({ rawArgs, args: parsed }) {
    rejectUnknownFlags(rawArgs, args);
    const action = parsed.action as (typeof ACTIONS)[number];
    if (!ACTIONS.includes(action)) throw usageError(`policy: expected one of ${ACTIONS.join("|")}, got ${JSON.stringify(parsed.action)}`);
    if (action === "keygen") return keygen(parsed.out);
    if (action === "sign") return sign(parsed.dir, parsed.key, parsed.version, parsed.out);
    // Loading the policy in force asks the organisation's URL once: `pull` and `status` alike see it now.
    const holder = await EngineHolder.load(parsed["thoughtgate-config"]);
    const summary = summarisePolicy(holder.policy);
    if (action === "pull" && !summary.organisation) {
      throw new ThoughtGateError("CONFIG", `no organisation policy is configured (${MACHINE_ORGANISATION_FILE}, $THOUGHTGATE_ORG_POLICY_URL and $THOUGHTGATE_ORG_POLICY_KEY_FILE, or policy.organisation in your policy)`);
    }
    await Bun.write(Bun.stdout, parsed.json ? `${JSON.stringify(summary, null, 2)}\n` : render(summary, action));
    return summary.organisation?.state === "refused" ? EXIT.error : EXIT.ok;
  },
});

function render(summary: PolicySummary, action: "status" | "pull"): string {
  const org = summary.organisation;
  if (!org) return `no organisation policy\npolicy in force: ${summary.label}\n`;
  const lines = [`organisation policy: ${org.url} (from ${org.from})`];
  if (org.state === "refused") lines.push(`  REFUSED: ${org.reason}`, "  every governed call is refused until it is fixed");
  else {
    lines.push(`  ${action === "pull" ? "pulled" : "in force"}: version ${org.version}, signed ${org.issuedAt}, last confirmed by the URL ${org.confirmedAt}`);
    if (org.note) lines.push(`  ${org.note}`);
  }
  lines.push(`  fetched again every ${formatDuration(org.refreshMs)}; usable offline for ${formatDuration(org.maxStaleMs)}`, `policy in force: ${summary.label}`);
  return `${lines.join("\n")}\n`;
}

async function keygen(out: string | undefined): Promise<number> {
  if (!out) throw usageError("policy keygen --out FILE: where the private key goes (keep it; it signs the organisation's policy)");
  if (existsSync(out)) throw new ThoughtGateError("CONFIG", `${out} already exists: keygen never overwrites a key`);
  const { privatePem, publicKey } = await generateKeyPair();
  writeFileSync(out, privatePem, { mode: 0o600, flag: "wx" });
  await Bun.write(Bun.stdout, `private key: ${out} (keep it secret: it signs the organisation's policy)\npublic key (every machine's policy.organisation.public_key):\n${publicKey}\n`);
  return EXIT.ok;
}

/**
 * Sign DIR's `thoughtgate.yaml` and the Cedar files it names, after loading them as every machine
 * will (a policy that does not load is never signed).
 */
async function sign(dir: string | undefined, keyFile: string | undefined, versionFlag: string | undefined, out: string | undefined): Promise<number> {
  if (!dir || !keyFile) throw usageError("policy sign DIR --key FILE [--version N] [--out FILE]");
  const version = versionFlag === undefined ? Math.floor(Date.now() / 1000) : Number(versionFlag);
  if (!Number.isSafeInteger(version) || version < 1) throw usageError(`--version: expected a whole number of at least 1, got ${JSON.stringify(versionFlag)}`);
  const root = resolve(dir);
  const text = readPolicyFile(join(root, "thoughtgate.yaml"));
  // Checked as a machine will load it, with this environment standing in for the machines' (a field
  // that expands `${VAR}` needs the variable set here too, to a sample value if need be).
  const parsed = parseConfig(text, process.env, "user");
  if (!parsed.ok) throw new ThoughtGateError("CONFIG", `${join(root, "thoughtgate.yaml")}: ${parsed.problems.map((p) => `${p.path}: ${p.message}`).join("; ")}`);
  if (parsed.config.policy) throw new ThoughtGateError("CONFIG", `${join(root, "thoughtgate.yaml")}: policy: an organisation's policy cannot name another one`);
  const files: Record<string, string> = { "thoughtgate.yaml": text };
  const cedar = parsed.config.cedar;
  if (cedar) {
    for (const path of [...cedar.policies, ...(cedar.schema ? [cedar.schema] : [])]) {
      const name = normalize(path);
      if (isAbsolute(name) || name.startsWith("..")) throw new ThoughtGateError("CONFIG", `cedar: ${path} is not inside ${root}: a bundle holds only the policy directory's files`);
      files[name] = readPolicyFile(join(root, name), "Cedar file");
    }
    await GovernanceEngine.fromConfig({ ...parsed.config, cedar: { policies: cedar.policies.map((p) => join(root, p)), ...(cedar.schema ? { schema: join(root, cedar.schema) } : {}) } }, root);
  }
  const bundle = await signBundle(files, version, readPolicyFile(keyFile, "private key"));
  const json = `${JSON.stringify(bundle, null, 1)}\n`;
  if (out) writeFileSync(out, json, { mode: 0o644 });
  else await Bun.write(Bun.stdout, json);
  if (out) await Bun.write(Bun.stderr, `signed version ${version} (${Object.keys(files).length} files) into ${out}\n`);
  return EXIT.ok;
}
