import type { Action, Rule, ThoughtGateConfig } from "../../core/config/schema.ts";
import { compileGlob, type Glob } from "../../core/glob.ts";
import type { ToolAnnotations } from "../../core/mcp-schema.ts";
import type { Place } from "../../core/project.ts";
import { effectiveHints, type AnnotationHint } from "../../core/tool-hints.ts";
import { argumentsMatch, compileArguments, fillPlace, resolveLinks, type ArgumentTest } from "./argument-match.ts";
import type { ServerProgram } from "../verdict/decider.ts";
import { agentToolName } from "../verdict/agent-tools.ts";

export type RuleMatch = {
  ruleId: string;
  action: Action;
  policyId: string | null;
  approval: string | null;
  /** The rule asked for annotation hints: a decision says where they came from. */
  readsAnnotations: boolean;
};

/** What a rule is matched against: the call, its tool's annotations, and where it is made from. */
export type RuleInput = {
  serverId: string;
  method: string;
  name: string;
  annotations?: ToolAnnotations | undefined;
  arguments: unknown;
  place: Place;
  /** What runs the call's server (a rule's `server:` is compared with it); unknown (the arbiter): no such rule matches. */
  server?: ServerProgram | undefined;
};

/** One rule that may decide a tool's calls, as `validate-config --explain` tells it (`whatDecides`). */
export type Candidate = { rule: Rule | null; ruleId: string; action: Action; policyId: string | null; approval: string | null; conditional: boolean };

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
  arguments: Array<[string, ArgumentTest]> | null;
  /** The project directory the rule is kept to (`${HOME}` filled in per place), links resolved. */
  project: ((place: Place) => string) | null;
  /** What a match returns: built once, shared by every call it matches (never changed). */
  result: RuleMatch;
};

/** Gate 2: the first rule whose globs, annotation filter, arguments and project match decides; else the defaults. */
export class Rules {
  private readonly rules: CompiledRule[];
  private readonly defaults: RuleMatch;

  /**
   * `floor`: rules that come before the config's whatever it says (engine.ts, self-protection); a rule
   * of the config with a floor rule's id is left out, the others keep their own numbers.
   */
  constructor(config: ThoughtGateConfig, floor: readonly Rule[] = []) {
    const own = config.governance.rules.map((rule: Rule, i) => ({ rule, id: rule.id ?? `rules[${i}]` }));
    const first = floor.filter((rule) => !own.some((entry) => entry.rule === rule));
    const reserved = new Set(first.map((rule) => rule.id));
    const ordered = [...first.map((rule) => ({ rule, id: rule.id ?? "floor" })), ...own.filter((entry) => !reserved.has(entry.id))];
    this.rules = ordered.map(({ rule, id }) => {
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
        arguments: rule.arguments ? compileArguments(rule.arguments) : null,
        project: rule.project === undefined ? null : projectOf(rule.project),
        result: Object.freeze({
          ruleId: id,
          action: rule.action,
          policyId: rule.policy_id ?? null,
          approval: rule.approval ?? null,
          readsAnnotations: rule.annotations !== undefined,
        }),
      };
    });
    this.defaults = Object.freeze({ ruleId: "defaults", action: config.governance.defaults.action, policyId: null, approval: null, readsAnnotations: false });
  }

  /**
   * The rules that may decide calls of this tool whatever their arguments, in order: each rule
   * whose other conditions hold and that looks at arguments (it decides some calls), up to the
   * first that does not (it decides the rest), or the defaults.
   */
  whatDecides(input: Omit<RuleInput, "arguments">): Candidate[] {
    const found: Candidate[] = [];
    for (const rule of this.rules) {
      if (!holdsBesideArguments(rule, input, input.place)) continue;
      const { action, policyId, approval } = rule.result;
      found.push({ rule: rule.rule, ruleId: rule.id, action, policyId, approval, conditional: rule.arguments !== null });
      if (rule.arguments === null) return found;
    }
    const { action, policyId, approval } = this.defaults;
    return [...found, { rule: null, ruleId: "defaults", action, policyId, approval, conditional: false }];
  }

  match(input: Omit<RuleInput, "place">, place: Place): RuleMatch {
    // An agent's own tool answers to its normalised name and to the agent's own (agent-tools.ts).
    const alias = agentToolName(input);
    for (const rule of this.rules) {
      if (!holdsBesideArguments(rule, input, place, alias)) continue;
      if (rule.arguments && !argumentsMatch(rule.arguments, input.arguments, place)) continue;
      return rule.result;
    }
    return this.defaults;
  }
}

/** `project:` as the place sees projects: absolute, links resolved (`${HOME}` filled in). */
function projectOf(dir: string): (place: Place) => string {
  let last: { home: string; dir: string } | null = null;
  return (place) => {
    if (last?.home !== place.home) last = { home: place.home, dir: resolveLinks(fillPlace(dir, place)) };
    return last.dir;
  };
}

/** Whether every condition of `rule` but its `arguments:` holds for the call (`alias`: another name the tool answers to). */
function holdsBesideArguments(rule: CompiledRule, input: Omit<RuleInput, "arguments" | "place">, place: Place, alias: string | null = null): boolean {
  // The source first: the cheapest to tell, and it sets the agent's own tools' rules (which come
  // first in every policy) aside for every MCP call without running their name patterns.
  if (rule.source && !rule.source.test(input.serverId)) return false;
  if (!rule.method.test(input.method)) return false;
  if (!rule.match.test(input.name) && (alias === null || !rule.match.test(alias))) return false;
  if (rule.server && !sameProgram(rule.server, input.server)) return false;
  if (rule.project && rule.project(place) !== place.project) return false;
  return !rule.annotations || annotationsMatch(rule.annotations, input.annotations);
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
