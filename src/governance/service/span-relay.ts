import type { GovernanceMetrics } from "../../telemetry/metrics.ts";
import { baseResource, type Attributes, type Tracer } from "../../telemetry/tracing/tracer.ts";
import { AGENT_SOURCE } from "../verdict/agent-tools.ts";
import { spanRelay, type Answer } from "../wire/api.ts";
import { answer, parseValue } from "./http-guard.ts";

/** Resources kept for the shims whose spans are relayed; past this many, the rest share one. */
const MAX_SHIM_RESOURCES = 256;

/**
 * `POST /governance/spans` (docs/governance.md, Traces): a shim of a service that traces hands over
 * its finished spans, which go out through the service's own exporter, so the collector's address
 * and headers never leave the service and a wrapped shim never loads OpenTelemetry. The body is
 * bounded by its schema (api.ts: at most 128 spans, each within the recorder's bounds); each
 * shim's spans (and each hook's, for the agent's own tools) get a resource naming its server id and process, and what it lost before they
 * got here is counted with the service's own losses (`/metrics`).
 */
export function spanRelayHandler(tracer: Tracer, metrics: GovernanceMetrics, shuttingDown: () => boolean): (body: unknown) => Answer {
  const resources = new Map<string, Attributes>();

  function resourceOf(serverId: string, pid: number | undefined): Attributes {
    const key = `${serverId}\u0000${pid ?? ""}`;
    const known = resources.get(key);
    if (known) return known;
    if (resources.size >= MAX_SHIM_RESOURCES) return resources.get("") ?? remember("", baseResource("shim"));
    // The agent's own source is the hooks front end's (`thoughtgate hook`), which relays as a shim does.
    const component = serverId === AGENT_SOURCE ? "hook" : "shim";
    return remember(key, { ...baseResource(component), "thoughtgate.server_id": metrics.serverLabel(serverId), ...(pid === undefined ? {} : { "process.pid": pid }) });
  }

  function remember(key: string, resource: Attributes): Attributes {
    resources.set(key, resource);
    return resource;
  }

  return (body) => {
    const parsed = parseValue(body, spanRelay);
    if (!parsed.ok) return parsed.answer;
    const { server_id, pid, spans, dropped } = parsed.value;
    metrics.seen(server_id);
    tracer.ingest(spans, resourceOf(server_id, pid), dropped);
    return answer({ shutdown: shuttingDown() });
  };
}
