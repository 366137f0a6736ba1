import type { TracingPlan } from "../../telemetry/tracing/start.ts";
import { baseResource, type Tracer } from "../../telemetry/tracing/tracer.ts";
import type { PolicyInForce } from "./policy.ts";

/**
 * Who starts a tracer, and from what (docs/governance.md, "Traces"): the governance service of
 * `wrap` and `serve`, and the arbiter, from the user's policy (`telemetry.otlp` of the base layer; a
 * project policy may not set it, core/config/load.ts), a shim from its decider's plan (shim-decider.ts: its own
 * policy, or the relay to a service that traces). Nothing of OpenTelemetry is loaded unless one
 * is needed: start.ts, and through it the exporter, are imported here on demand.
 */
export async function startServiceTracer(policy: PolicyInForce, role: "wrap" | "serve" | "arbiter"): Promise<Tracer | undefined> {
  const otlp = policy.base.engine.config.telemetry?.otlp;
  if (!otlp) return undefined;
  const { startTracer } = await import("../../telemetry/tracing/start.ts");
  return startTracer({ kind: "export", otlp }, baseResource(role));
}

export async function startShimTracer(plan: TracingPlan | undefined, serverId: string): Promise<Tracer | undefined> {
  if (!plan) return undefined;
  const { startTracer } = await import("../../telemetry/tracing/start.ts");
  return startTracer(plan, { ...baseResource("shim"), "thoughtgate.server_id": serverId, "process.pid": process.pid });
}
