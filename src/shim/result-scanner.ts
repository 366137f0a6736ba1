import { messageOf } from "../core/errors.ts";
import { errorResponse, RPC } from "../core/jsonrpc.ts";
import type { Logger } from "../core/log.ts";
import type { Profile } from "../core/profile.ts";
import type { SecretKind, Span } from "../core/secret-kinds.ts";
import { actionOf, replacementOf, type SecretScanPolicy } from "../governance/verdict/secret-policy.ts";
import type { EventStream } from "../telemetry/events.ts";
import { countKinds, redactSpans, scanSecrets, type ScanOptions } from "../telemetry/secret-scan.ts";
import type { PendingRequest } from "./request-tracker.ts";

/**
 * Secret scanning on the shim's path (docs/governance.md, Secret scanning), a collaborator of the
 * router. Two calls:
 *
 * - `scanResult`: a server's response to a tools/call, resources/read or prompts/get on its way to
 *   the agent. In production every credential found (of a kind whose action is `redact`) is
 *   replaced by `[REDACTED:<kind>]` or the configured text, in the line's own bytes: the JSON stays
 *   valid and nothing else of it changes. In development nothing changes and the findings are
 *   logged `WOULD_REDACT`. A line with no finding is returned as it came (no copy).
 * - `scanRequest`: a governed request's line, for the audit only: what the server receives is
 *   exactly what was decided on, so arguments are never changed here (every display of them is
 *   redacted by src/telemetry/redact.ts). Skipped when nobody reads the audit.
 *
 * Either way the audit gets a `secrets_found` event with the kinds and counts, never a value.
 */
export const SCANNED_METHODS: ReadonlySet<string> = new Set(["tools/call", "resources/read", "prompts/get"]);

export type ScannedResult = {
  /** What the agent receives: the original bytes, or a redacted copy. */
  bytes: Uint8Array;
  /** Every finding, in the original bytes. */
  findings: Span[];
  /** How many of them were replaced. */
  redacted: number;
};

export type ResultScannerOptions = {
  profile: Profile;
  events: EventStream;
  log: Logger;
  /** The policy for this server, asked per message so a reload (or the service's next heartbeat) applies at once. */
  policy: () => SecretScanPolicy;
};

/** A configured replacement is spliced into a JSON string as it is; the schema allows nothing that would need escaping, and this checks again. */
const SPLICE_SAFE = /^[^"\\\u0000-\u001f\u007f]+$/;

export class ResultScanner {
  constructor(private readonly options: ResultScannerOptions) {}

  /**
   * The response to `entry` (an agent request the server answered), before it is sent to the agent.
   * Should the scan itself fail (a bug), production answers the request with an error rather than
   * forward what was not scanned (docs/architecture.md, decision 3); development forwards it.
   */
  scanResult(bytes: Uint8Array, entry: Pick<PendingRequest, "id" | "method" | "call">): ScannedResult {
    if (!SCANNED_METHODS.has(entry.method)) return { bytes, findings: [], redacted: 0 };
    try {
      return this.scan(bytes, entry);
    } catch (error) {
      const why = `the secret scan of the result of ${entry.method} failed (${messageOf(error)})`;
      if (this.options.profile === "development") {
        this.options.log.error(`${why}: WOULD_REDACT, forwarded unscanned (development profile)`);
        return { bytes, findings: [], redacted: 0 };
      }
      this.options.log.error(`${why}: the agent gets an error instead`);
      const line = errorResponse(entry.id, RPC.internalError, `ThoughtGate could not scan the result for secrets: ${messageOf(error)}`, { gate: "secrets", reason: "scan failed" });
      return { bytes: Buffer.from(line), findings: [], redacted: 0 };
    }
  }

  private scan(bytes: Uint8Array, entry: Pick<PendingRequest, "id" | "method" | "call">): ScannedResult {
    const policy = this.options.policy();
    if (!policy.scan) return { bytes, findings: [], redacted: 0 };
    const findings = scanSecrets(bytes, resultScanOptions(policy));
    if (findings.length === 0) return { bytes, findings, redacted: 0 };
    const production = this.options.profile === "production";
    const toRedact = findings.filter((span) => actionOf(policy, span.kind) === "redact");
    const replaced = production ? toRedact : [];
    const out = replaced.length > 0 ? redactSpans(bytes, replaced, (kind) => safeReplacement(policy, kind)) : bytes;
    this.report("server_to_agent", entry, findings, replaced, !production && toRedact.length > 0);
    return { bytes: out, findings, redacted: replaced.length };
  }

  /** A governed request from the agent (`bytes`: its line), for the audit; returns what was found. */
  scanRequest(bytes: Uint8Array, entry: Pick<PendingRequest, "id" | "method" | "call">): Span[] {
    if (!this.options.events.enabled) return [];
    const policy = this.options.policy();
    if (!policy.scan) return [];
    const findings = scanSecrets(bytes, resultScanOptions(policy));
    if (findings.length > 0) this.report("agent_to_server", entry, findings, [], false);
    return findings;
  }

  private report(direction: "agent_to_server" | "server_to_agent", entry: Pick<PendingRequest, "id" | "method" | "call">, findings: Span[], replaced: Span[], would: boolean): void {
    const found = countKinds(findings);
    const what = `${entry.method}${entry.call ? ` ${entry.call.tool}` : ""} (id ${JSON.stringify(entry.id)})`;
    if (direction === "server_to_agent") {
      const kinds = describe(found);
      // Routine in production (the audit's secrets_found has it): not a line per result on stderr.
      if (replaced.length > 0) this.options.log.debug(`redacted ${replaced.length} of ${findings.length} secrets (${kinds}) in the result of ${what}`);
      if (would) this.options.log.warn(`WOULD_REDACT ${findings.length} secrets (${kinds}) in the result of ${what}: forwarded unchanged (development profile)`);
      else if (replaced.length < findings.length) this.options.log.info(`detected ${findings.length - replaced.length} secrets (${kinds}) in the result of ${what}: forwarded unchanged (secrets.kinds action detect)`);
    } else {
      this.options.log.debug(`the arguments of ${what} hold ${findings.length} secrets (${describe(found)}); forwarded as decided`);
    }
    if (!this.options.events.enabled) return;
    this.options.events.emit("secrets_found", {
      direction,
      request_id: entry.id,
      method: entry.method,
      ...(entry.call ? { call_id: entry.call.callId, tool: entry.call.tool } : {}),
      found,
      redacted: countKinds(replaced),
      ...(would ? { would: "WOULD_REDACT" as const } : {}),
    });
  }
}

/** Each policy's scan options, worked out once per policy (a reload brings a new object). */
const OPTIONS_BY_POLICY = new WeakMap<SecretScanPolicy, ScanOptions>();

/** Result mode; kinds switched `off` are not looked for at all (their anchors are not even searched). */
function resultScanOptions(policy: SecretScanPolicy): ScanOptions {
  let options = OPTIONS_BY_POLICY.get(policy);
  if (options === undefined) {
    const off = Object.entries(policy.kinds).filter(([, setting]) => setting?.action === "off");
    const disabled = new Set(off.map(([kind]) => kind));
    options = off.length === 0 ? { mode: "result" } : { mode: "result", enabled: (kind: SecretKind) => !disabled.has(kind) };
    OPTIONS_BY_POLICY.set(policy, options);
  }
  return options;
}

function safeReplacement(policy: SecretScanPolicy, kind: SecretKind): string {
  const text = replacementOf(policy, kind);
  return SPLICE_SAFE.test(text) ? text : `[REDACTED:${kind}]`;
}

function describe(counts: Record<string, number>): string {
  return Object.entries(counts)
    .map(([kind, n]) => (n === 1 ? kind : `${kind} ×${n}`))
    .join(", ");
}
