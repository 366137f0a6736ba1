import { lstatSync, readlinkSync, realpathSync } from "node:fs";
import { basename, dirname, isAbsolute, join, relative, resolve, sep } from "node:path";
import { canonicalJson } from "../../core/canonical-json.ts";
import type { ArgumentMatcherConfig, MatcherConfig } from "../../core/config/schema.ts";
import { compileGlob, type Glob } from "../../core/glob.ts";
import type { Place } from "../../core/project.ts";

/**
 * A rule's `arguments:` (docs/governance.md, "Rules that see arguments"): each named argument must
 * match, and a matcher is
 * - `{within: DIR}`: a path inside DIR (DIR itself included). The path is read as server-filesystem
 *   reads it (a leading `~/` is the home directory, a relative path is relative to the working
 *   directory), `..` is resolved, and so is every link of the longest part that exists: a link
 *   a cloned repository planted (`docs -> ~/.ssh`) leads outside, and is judged where it leads.
 * - `{glob: PATTERN}`: the value as it is, against a glob (src/core/glob.ts); nothing is resolved.
 * - `{equals: VALUE}`, or VALUE itself (a string, number or boolean): the same JSON value.
 * - a list of matchers: any one of them.
 * `within` and `glob` judge a string; a non-empty list of strings matches when every item does
 * (`read_multiple_files`' `paths`); anything else never matches. A missing argument matches nothing.
 * `${PROJECT}`, `${CWD}` and `${HOME}` in a matcher are the call's place (src/core/project.ts),
 * filled in per call, never from the environment.
 */
export type ArgumentTest = (value: unknown, place: Place) => boolean;

const PLACEHOLDER = /\$\{(PROJECT|CWD|HOME)\}/g;
const HAS_PLACEHOLDER = /\$\{(PROJECT|CWD|HOME)\}/;

export function compileArguments(matchers: Record<string, ArgumentMatcherConfig>): Array<[string, ArgumentTest]> {
  return Object.entries(matchers).map(([name, matcher]) => [name, compileMatcher(matcher)]);
}

/** Every named argument matches (an argument the call lacks matches nothing). */
export function argumentsMatch(tests: Array<[string, ArgumentTest]>, args: unknown, place: Place): boolean {
  if (args === null || typeof args !== "object" || Array.isArray(args)) return false;
  for (const [name, test] of tests) {
    if (!Object.hasOwn(args, name)) return false;
    if (!test((args as Record<string, unknown>)[name], place)) return false;
  }
  return true;
}

/** `${PROJECT}`, `${CWD}` and `${HOME}` in `text`, filled in from `place`. */
export function fillPlace(text: string, place: Place): string {
  return text.replace(PLACEHOLDER, (_whole, name: string) => (name === "PROJECT" ? place.project : name === "CWD" ? place.cwd : place.home));
}

function compileMatcher(matcher: ArgumentMatcherConfig): ArgumentTest {
  if (Array.isArray(matcher)) {
    const tests = matcher.map(compileOne);
    return (value, place) => tests.some((test) => test(value, place));
  }
  return compileOne(matcher);
}

function compileOne(matcher: MatcherConfig): ArgumentTest {
  if (matcher === null || typeof matcher !== "object") return equality(matcher);
  if ("within" in matcher && matcher.within !== undefined) {
    const dir = templated(matcher.within, (text) => resolveLinks(resolve(text)));
    return everyString((path, place) => isWithin(pathAsServerReadsIt(path, place), dir(place)));
  }
  if ("glob" in matcher && matcher.glob !== undefined) {
    const glob = templated<Glob>(matcher.glob, compileGlob);
    return everyString((text, place) => glob(place).test(text));
  }
  return equality((matcher as { equals: unknown }).equals);
}

function equality(expected: unknown): ArgumentTest {
  if (typeof expected === "string" && HAS_PLACEHOLDER.test(expected)) {
    return (value, place) => typeof value === "string" && value === fillPlace(expected, place);
  }
  const wanted = canonicalJson(expected);
  return (value) => canonicalJson(value) === wanted;
}

/** Whether a path argument (one path, or a non-empty list) lies wholly within `dir`, as a `within` matcher reads it. */
export function pathsWithin(value: unknown, dir: string, place: Place): boolean {
  const root = resolveLinks(resolve(dir));
  return everyString((path, at) => isWithin(pathAsServerReadsIt(path, at), root))(value, place);
}

/** A string test applied to a string, or to every item of a non-empty list of strings. */
function everyString(test: (text: string, place: Place) => boolean): ArgumentTest {
  return (value, place) => {
    if (typeof value === "string") return test(value, place);
    if (!Array.isArray(value) || value.length === 0) return false;
    return value.every((item) => typeof item === "string" && test(item, place));
  };
}

/**
 * A value built from a text that may hold placeholders: built once when it holds none, else once
 * per distinct filled-in text (a session has one place; a service serving several has a few).
 */
function templated<T>(text: string, build: (filled: string) => T): (place: Place) => T {
  if (!HAS_PLACEHOLDER.test(text)) {
    let built: T | undefined;
    return () => (built ??= build(text));
  }
  const cache = new Map<string, T>();
  return (place) => {
    const filled = fillPlace(text, place);
    let built = cache.get(filled);
    if (built === undefined) {
      if (cache.size >= 64) cache.clear();
      built = build(filled);
      cache.set(filled, built);
    }
    return built;
  };
}

/** As @modelcontextprotocol/server-filesystem reads a path: `~` is home, relative is against the working directory. */
function pathAsServerReadsIt(path: string, place: Place): string {
  const expanded = path === "~" ? place.home : path.startsWith("~/") ? join(place.home, path.slice(2)) : path;
  return resolveLinks(isAbsolute(expanded) ? resolve(expanded) : resolve(place.cwd, expanded));
}

function isWithin(path: string, dir: string): boolean {
  const rel = relative(dir, path);
  return rel === "" || (rel !== ".." && !rel.startsWith(`..${sep}`) && !isAbsolute(rel));
}

/** More links than this in one path is a loop (Linux gives up at 40 too: ELOOP). */
const MAX_LINKS = 40;

/**
 * The absolute, normalised path with the links of its longest existing part resolved; the rest
 * (what does not exist yet, a file about to be written) is kept as written. A dangling link is
 * followed to where it points: writing through it creates its target.
 */
export function resolveLinks(path: string, links = 0): string {
  const missing: string[] = [];
  for (let current = path; ; current = dirname(current)) {
    try {
      return join(realpathSync(current), ...missing.reverse());
    } catch {
      const target = danglingTarget(current);
      if (target !== null && links < MAX_LINKS) return resolveLinks(join(resolve(dirname(current), target), ...missing.reverse()), links + 1);
      if (dirname(current) === current) return path;
      missing.push(basename(current));
    }
  }
}

function danglingTarget(path: string): string | null {
  try {
    return lstatSync(path).isSymbolicLink() ? readlinkSync(path) : null;
  } catch {
    return null;
  }
}
