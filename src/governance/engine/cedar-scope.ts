import type { ActionConstraint, EntityUidJson, PolicyJson, PrincipalConstraint } from "@cedar-policy/cedar-wasm/web";

/**
 * A policy's scope, read from its text, in the shape of cedar-wasm's `policyToJson`.
 *
 * Why not ask Cedar: every cedar-wasm call that parses pays ~0.1 ms before reading a character, so
 * `policyToJson` per policy would add ~1 s to loading 5,000 policies, where parsing them all in one
 * `policySetTextToParts` takes ~0.1 s. The text here has already been parsed by Cedar (it is one of
 * `policySetTextToParts`'s parts), so it is a valid policy; this reads only the plain forms of its
 * scope (no comment, escape or template slot inside it) and returns `null` for anything else, and
 * the caller then asks Cedar. test/governance/engine/cedar-scope.test.ts holds every answer here to
 * `policyToJson`'s.
 */
export type Scope = Pick<PolicyJson, "principal" | "action" | "resource">;

const IDENT = String.raw`[_a-zA-Z][_a-zA-Z0-9]*`;
const PATH = String.raw`${IDENT}(?:\s*::\s*${IDENT})*`;
/** An entity uid whose id has no escape: its text is its id. */
const UID = String.raw`(${PATH})\s*::\s*"([^"\\]*)"`;
const EQ_OR_IN = new RegExp(String.raw`^(==|in)\s*${UID}$`);
const IS = new RegExp(String.raw`^is\s+(${PATH})(?:\s+in\s*${UID})?$`);
const UID_LIST = new RegExp(String.raw`^in\s*\[\s*((?:${UID}\s*,\s*)*${UID})?\s*\]$`);
const UID_GLOBAL = new RegExp(UID, "g");

export function readScope(text: string): Scope | null {
  const parts = scopeParts(text);
  if (parts === null) return null;
  const principal = entityConstraint(parts[0], "principal");
  const action = actionConstraint(parts[1]);
  const resource = entityConstraint(parts[2], "resource");
  if (principal === null || action === null || resource === null) return null;
  return { principal, action, resource };
}

/**
 * The principal, action and resource parts between the effect's `(` and its `)`, split at the
 * commas outside strings and `[…]`; null when the scope holds a string with an escape, a comment
 * or a parenthesis of its own. Annotations before the effect are skipped, strings in them included.
 */
function scopeParts(text: string): [string, string, string] | null {
  let i = 0;
  for (;;) {
    while (i < text.length && /\s/.test(text[i] as string)) i++;
    if (text.startsWith("//", i)) {
      const end = text.indexOf("\n", i);
      if (end < 0) return null;
      i = end + 1;
    } else if (text[i] === "@") {
      const match = /^@[_a-zA-Z][_a-zA-Z0-9]*\s*(?:\(\s*"(?:[^"\\]|\\.)*"\s*\))?/.exec(text.slice(i));
      if (!match) return null;
      i += match[0].length;
    } else break;
  }
  const effect = /^(?:permit|forbid)\s*\(/.exec(text.slice(i));
  if (!effect) return null;
  const parts: string[] = [];
  let partStart = i + effect[0].length;
  let inString = false;
  let inList = false;
  for (let j = partStart; j < text.length; j++) {
    const c = text[j];
    if (inString) {
      if (c === "\\") return null;
      if (c === '"') inString = false;
    } else if (c === '"') inString = true;
    else if (c === "[") inList = true;
    else if (c === "]") inList = false;
    else if (c === "(" || (c === "/" && text[j + 1] === "/")) return null;
    else if (c === "," && !inList) {
      parts.push(text.slice(partStart, j));
      partStart = j + 1;
    } else if (c === ")") {
      parts.push(text.slice(partStart, j));
      return parts.length === 3 ? [parts[0] as string, parts[1] as string, parts[2] as string] : null;
    }
  }
  return null;
}

/** Principal and resource constraints have the same forms. */
function entityConstraint(part: string, variable: "principal" | "resource"): PrincipalConstraint | null {
  const text = part.trim();
  if (!text.startsWith(variable)) return null;
  const rest = text.slice(variable.length);
  if (rest === "") return { op: "All" };
  if (!/^\s|^[=]/.test(rest)) return null;
  const body = rest.trim();
  const eqOrIn = EQ_OR_IN.exec(body);
  if (eqOrIn) {
    const entity = uid(eqOrIn[2] as string, eqOrIn[3] as string);
    return eqOrIn[1] === "==" ? { op: "==", entity } : { op: "in", entity };
  }
  const is = IS.exec(body);
  if (is) {
    const entityType = path(is[1] as string);
    return is[2] === undefined ? { op: "is", entity_type: entityType } : { op: "is", entity_type: entityType, in: { entity: uid(is[2], is[3] as string) } };
  }
  return null;
}

function actionConstraint(part: string): ActionConstraint | null {
  const text = part.trim();
  if (!text.startsWith("action")) return null;
  const rest = text.slice("action".length);
  if (rest === "") return { op: "All" };
  if (!/^\s|^[=[]/.test(rest)) return null;
  const body = rest.trim();
  const eqOrIn = EQ_OR_IN.exec(body);
  if (eqOrIn) {
    const entity = uid(eqOrIn[2] as string, eqOrIn[3] as string);
    return eqOrIn[1] === "==" ? { op: "==", entity } : { op: "in", entity };
  }
  if (UID_LIST.test(body)) {
    const entities: EntityUidJson[] = [...body.matchAll(UID_GLOBAL)].map((m) => uid(m[1] as string, m[2] as string));
    // Cedar reads a list of one as that one entity.
    return entities.length === 1 ? { op: "in", entity: entities[0] as EntityUidJson } : { op: "in", entities };
  }
  return null;
}

function uid(type: string, id: string): EntityUidJson {
  return { type: path(type), id };
}

function path(text: string): string {
  return text.replace(/\s+/g, "");
}
