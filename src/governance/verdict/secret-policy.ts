import type { SecretsConfig } from "../../core/config/schema.ts";
import { redactedMarker, SECRET_KIND_IDS, type SecretKind } from "../../core/secret-kinds.ts";

/**
 * What the policy says about secret scanning for one server (docs/governance.md, Secret scanning):
 * whether its results are scanned, and what happens to each kind found. The engine answers it
 * (`PolicyEngine.secretScan`); the governance service hands it to its shims with every heartbeat.
 * Plain data, so it crosses the wire as it is.
 */
export type KindAction = "redact" | "detect" | "off";

type KindSetting = { action: KindAction; replacement?: string };

export type SecretScanPolicy = {
  /** false: this server's results reach the agent unscanned (`secrets.servers.<id>.scan: off`). */
  scan: boolean;
  /** Kinds set differently from the default: redacted as `[REDACTED:<kind>]`. */
  kinds: Partial<Record<SecretKind, KindSetting>>;
};

/** No policy file, no `secrets:` section, or no answer from the service yet: everything is scanned and redacted. */
export const SCAN_EVERYTHING: SecretScanPolicy = Object.freeze({ scan: true, kinds: Object.freeze({}) });

export function secretScanOf(config: SecretsConfig | undefined, serverId: string): SecretScanPolicy {
  if (!config) return SCAN_EVERYTHING;
  const setting = Object.hasOwn(config.servers, serverId) ? config.servers[serverId]?.scan : undefined;
  const scan = (setting ?? config.scan) === "results";
  const kinds: SecretScanPolicy["kinds"] = {};
  for (const kind of SECRET_KIND_IDS) {
    const configured = config.kinds[kind];
    if (!configured || (configured.action === undefined && configured.replacement === undefined)) continue;
    kinds[kind] = { action: configured.action ?? "redact", ...(configured.replacement !== undefined ? { replacement: configured.replacement } : {}) };
  }
  return { scan, kinds };
}

export function actionOf(policy: SecretScanPolicy, kind: SecretKind): KindAction {
  return policy.kinds[kind]?.action ?? "redact";
}

export function replacementOf(policy: SecretScanPolicy, kind: SecretKind): string {
  return policy.kinds[kind]?.replacement ?? redactedMarker(kind);
}

const STRICTNESS: Record<KindAction, number> = { off: 0, detect: 1, redact: 2 };

/**
 * The user's policy restricted by a project's (StrictestOf): scanned when either scans, each kind
 * handled the stricter way (redact over detect over off). The replacement text is the one of the
 * policy whose action won, the user's on a tie: a repository cannot choose what the user's agent
 * reads in place of a secret the user's own policy redacts.
 */
export function stricterScan(base: SecretScanPolicy, restriction: SecretScanPolicy): SecretScanPolicy {
  const kinds: SecretScanPolicy["kinds"] = {};
  for (const kind of SECRET_KIND_IDS) {
    const a = base.kinds[kind];
    const b = restriction.kinds[kind];
    if (!a && !b) continue;
    const winner = STRICTNESS[actionOf(restriction, kind)] > STRICTNESS[actionOf(base, kind)] ? b : a;
    const action = winner?.action ?? "redact";
    if (action === "redact" && winner?.replacement === undefined) continue;
    kinds[kind] = winner ?? { action };
  }
  return { scan: base.scan || restriction.scan, kinds };
}
