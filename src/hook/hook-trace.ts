/**
 * The spans of one built-in tool call (docs/governance.md, "Traces"), traced when a shim in the
 * same place would be: the decider's plan says so (governance/deciders/shim-decider.ts), so
 * outside a session the user's policy's `telemetry.otlp` turns it on and the hook exports with its
 * own exporter, and in a wrap session whose service traces the spans go to that service over the
 * decider's channel (one request to a server already connected; the hook never loads
 * OpenTelemetry there). This file and what it loads are imported only when tracing is on.
 */
import type { Profile } from "../core/profile.ts";
import { AGENT_SOURCE } from "../governance/verdict/agent-tools.ts";
import type { Call, CallSpans } from "../pipeline/call.ts";
import { beginCallSpans } from "../pipeline/call-spans.ts";
import { startTracer, type TracingPlan } from "../telemetry/tracing/start.ts";
import { baseResource } from "../telemetry/tracing/tracer.ts";

/**
 * How long the spans may take to leave before the hook exits. The agent waits for the hook, so
 * this bounds what a collector that is down or slow adds to a call (the exporter retries a refused
 * connection until the budget is spent); what is not out by then is dropped and said on stderr
 * (span-queue.ts). Half a shim's exit budget: a loopback or nearby collector takes a span in
 * milliseconds, and a hook pays this on every call where a shim pays it once per session.
 */
const FLUSH_MS = 500;

export type HookTracing = {
  /** The call's spans, begun as the call is built. */
  spans(call: Call): CallSpans;
  /** Hand the spans over (to the collector or the session's service), at most `FLUSH_MS`. */
  close(): Promise<void>;
};

/** Tracing for this hook run, or null when it is off (`OTEL_SDK_DISABLED=true`). Throws a CONFIG error for a collector URL that is not allowed. */
export async function startHookTracing(plan: TracingPlan, profile: Profile, runId: string): Promise<HookTracing | null> {
  const tracer = await startTracer(plan, { ...baseResource("hook"), "thoughtgate.server_id": AGENT_SOURCE, "process.pid": process.pid });
  if (!tracer.on) return null;
  return {
    spans: (call) => beginCallSpans(call, { tracer, profile, runId, transport: "pipe" }),
    close: () => tracer.close(FLUSH_MS),
  };
}
