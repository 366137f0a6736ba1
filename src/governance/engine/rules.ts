import type { Action, Rule, ThoughtGateConfig } from "../../core/config/schema.ts";
import { compileGlob, type Glob } from "../../core/glob.ts";
import type { ToolAnnotations } from "../../core/mcp-schema.ts";
import { effectiveHints, type AnnotationHint } from "../../core/tool-hints.ts";
import type { ServerProgram } from "../decision/decider.ts";

export type { ToolAnnotations };

export type RuleMatch = { ruleId: string; action: Action; policyId: string | null; approval: string | null };

type CompiledRule = {
  rule: Rule;
  id: string;
  match: Glob;
  method: Glob;
  source: Glob | null;
  /** The one program the rule is for (`server:`), compared exactly. */
  server: Rule["server"] | null;
  /** The annotation filter as [hint, wanted value] pairs, built once. */
  annotations: Array<[AnnotationHint, boolean]> | null;
  /** What a match returns: built once, shared by every call it matches (never changed). */
  result: RuleMatch;
};

/** Gate 2: the first rule whose globs and annotation filter match decides; else the defaults. */
export class Rules {
  private readonly rules: CompiledRule[];
  private readonly defaults: RuleMatch;

  constructor(config: ThoughtGateConfig) {
    this.rules = config.governance.rules.map((rule, i) => {
      const id = rule.id ?? `rules[${i}]`;
      return {
        rule,
        id,
        match: compileGlob(rule.match),
        method: compileGlob(rule.method),
        source: rule.source ? compileGlob(rule.source) : null,
        server: rule.server ?? null,
        annotations: rule.annotations
          ? (Object.entries(rule.annotations).filter(([, value]) => value !== undefined) as Array<[AnnotationHint, boolean]>)
          : null,
        result: Object.freeze({ ruleId: id, action: rule.action, policyId: rule.policy_id ?? null, approval: rule.approval ?? null }),
      };
    });
    this.defaults = { ruleId: "defaults", action: config.governance.defaults.action, policyId: null, approval: null };
  }

  match(serverId: string, method: string, name: string, annotations: ToolAnnotations | undefined, program?: ServerProgram): RuleMatch {
    for (const { match, method: methodGlob, source, server, annotations: wanted, result } of this.rules) {
      if (!methodGlob.test(method) || !match.test(name)) continue;
      if (source && !source.test(serverId)) continue;
      if (server && !sameProgram(server, program)) continue;
      if (wanted && !annotationsMatch(wanted, annotations)) continue;
      return result;
    }
    return this.defaults;
  }
}

/** A rule's `server:` and the program that runs the call's server; unknown (the arbiter) matches none. */
function sameProgram(wanted: NonNullable<Rule["server"]>, actual: ServerProgram | undefined): boolean {
  if (!actual) return false;
  if (wanted.url !== undefined) return actual.url === wanted.url;
  const command = wanted.command ?? [];
  return actual.url === null && actual.command.length === command.length && actual.command.every((word, i) => word === command[i]);
}

/**
 * Every hint the rule names must have that value, with the MCP defaults for hints the tool did not
 * give (a tool whose annotations are unknown is not read-only and may be destructive).
 */
function annotationsMatch(wanted: Array<[AnnotationHint, boolean]>, actual: ToolAnnotations | undefined): boolean {
  const hints = effectiveHints(actual);
  for (const [hint, value] of wanted) {
    if (hints[hint] !== value) return false;
  }
  return true;
}
