import { argsHash } from "../core/canonical-json.ts";
import type { JsonRpcRequest } from "../core/jsonrpc.ts";
import type { Profile } from "../core/profile.ts";
import { targetName, type Verdict } from "../governance/verdict/decider.ts";
import type { CallStatus } from "../telemetry/events.ts";
import { redactText } from "../telemetry/redact.ts";
import type { Attributes, Span, Tracer } from "../telemetry/tracing/tracer.ts";
import type { Call, CallSpans } from "./call.ts";

/**
 * What a governed request's span is named and carries, whichever front end it came through
 * (docs/governance.md, "Traces"; after the OpenTelemetry semantic conventions for MCP): the shim's
 * spans (shim/call-trace.ts) and those of a call the arbiter or an agent's hook announced are made
 * from the same three functions, so a collector sees one kind of call. No attribute holds
 * arguments, only their hash; every text that could hold a credential goes through the redactor.
 */

/** `{mcp.method.name} {target}`: the tool or prompt name; a resource URI is left out (high cardinality, and may hold anything). */
export function callSpanName(request: JsonRpcRequest): string {
  if (request.method !== "tools/call" && request.method !== "prompts/get") return request.method;
  return `${request.method} ${redactText(targetName(request))}`;
}

/** The request's own attributes: its method, id, server and what it names (a tool, a prompt, a resource). */
export function requestAttributes(request: JsonRpcRequest, serverId: string): Attributes {
  const attributes: Attributes = { "mcp.method.name": request.method, "jsonrpc.request.id": String(request.id), "thoughtgate.server_id": serverId };
  const target = targetName(request);
  if (request.method === "tools/call") Object.assign(attributes, { "gen_ai.tool.name": redactText(target), "gen_ai.operation.name": "execute_tool" });
  else if (request.method === "prompts/get") attributes["gen_ai.prompt.name"] = redactText(target);
  else attributes["mcp.resource.uri"] = redactText(target);
  return attributes;
}

/** The decision: what, by which gate and rule, and why. */
function verdictAttributes(verdict: Verdict): Attributes {
  const attributes: Attributes = { "thoughtgate.decision": verdict.action, "thoughtgate.reason": redactText(verdict.reason) };
  if (verdict.gate) attributes["thoughtgate.gate"] = verdict.gate;
  if (verdict.ruleId) attributes["thoughtgate.rule_id"] = verdict.ruleId;
  if (verdict.policyId) attributes["thoughtgate.policy_id"] = verdict.policyId;
  if (verdict.action === "forward") {
    if (verdict.would) attributes["thoughtgate.would"] = verdict.would;
    if (verdict.autoApproved) attributes["thoughtgate.auto_approved"] = true;
    if (verdict.approvedBy) attributes["thoughtgate.approved_by"] = verdict.approvedBy;
  }
  return attributes;
}

export type CallSpansOptions = {
  tracer: Tracer;
  profile: Profile;
  runId: string;
  /** How the call reached ThoughtGate (`network.transport`): a pipe for the arbiter's child and an agent's hook. */
  transport: "pipe" | "tcp";
};

/**
 * The spans of a call that no MCP server answers (the arbiter's `tool.request`, an agent's own
 * tool through its hook), begun when the front end built the call: a SERVER span named and
 * attributed as a shim's (`tools/call Bash`) under the tracer's root (the arbiter's session span,
 * a wrap session's span, or $TRACEPARENT), and under it a `thoughtgate.approval` span for the time
 * a person took. There is no call to a server to trace: the agent or the child runs the tool.
 */
export function beginCallSpans(call: Call, options: CallSpansOptions): CallSpans {
  const request = call.request;
  const own = requestAttributes(request, call.serverId);
  const attributes: Attributes = { ...own, "network.transport": options.transport, "thoughtgate.profile": options.profile, "thoughtgate.run_id": options.runId };
  if (request.method === "tools/call") attributes["thoughtgate.args_hash"] = call.audit?.argsHash ?? argsHash((request.params as { arguments?: unknown } | undefined)?.arguments);
  const span = options.tracer.start(callSpanName(request), { kind: "server", attributes });
  return new ToolCallSpans(options.tracer, span, call.serverId);
}

/**
 * One call's spans, ended exactly once whichever way the call ends: the request's span and, while
 * a person decides, the approval span under it. The shim's spans of a governed request add the
 * call to the server (`RequestTrace`, shim/call-trace.ts).
 */
export class ToolCallSpans implements CallSpans {
  protected wait: Span | null = null;
  protected failed = false;
  protected done = false;

  constructor(
    protected readonly tracer: Tracer,
    protected readonly span: Span,
    private readonly serverId: string,
  ) {}

  /** Where the decider records the gates (or whose context it hands to the governance service): the request's span. */
  get deciding(): Span {
    return this.span;
  }

  /** The decision now waits for a person. */
  waiting(): void {
    if (this.wait || this.done) return;
    this.wait = this.tracer.start("thoughtgate.approval", { parent: this.span.context, attributes: { "thoughtgate.server_id": this.serverId } });
  }

  decided(verdict: Verdict): void {
    if (this.done) return;
    this.span.set(verdictAttributes(verdict));
    if (this.wait) {
      this.wait.set({ "thoughtgate.approval.outcome": verdict.action === "forward" ? "approved" : "denied", ...(verdict.action === "forward" && verdict.approvedBy ? { "thoughtgate.approved_by": verdict.approvedBy } : {}) });
      this.wait.end();
      this.wait = null;
    }
    if (verdict.action === "deny") this.fail(this.span, String(verdict.error.code), verdict.error.message);
  }

  /** The call ended with `status`; one that ran and failed (not refused, not asked) marks the spans failed. */
  end(status: CallStatus): void {
    if (this.done) return;
    if (!this.failed && status !== "ok" && status !== "input_required" && status !== "denied") this.failedAs(this.errorType(status));
    this.finish();
  }

  /** The `error.type` of a call that ended with `status`: a tool the agent or the child ran and that failed is a `tool_error`, as an MCP result with isError. */
  protected errorType(status: CallStatus): string {
    return status === "error" ? "tool_error" : status;
  }

  protected failedAs(type: string): void {
    this.span.set({ "error.type": type });
    this.span.fail(type);
  }

  protected fail(span: Span, code: string, message: string): void {
    span.set({ "error.type": code, "rpc.response.status_code": code });
    span.fail(redactText(message));
    if (span === this.span) this.failed = true;
  }

  protected finish(): void {
    this.done = true;
    this.wait?.end();
    this.span.end();
  }
}
