/**
 * The layout rule of docs/architecture.md, held against the code: every import in `src/` goes from
 * a part to one the table lets it import (always a lower floor), only to the files a part shows
 * others (its face, where the table names one), and no files import each other in a circle
 * (type-only imports included: a circle of types is a circle of meaning).
 */
import { describe, expect, test } from "bun:test";
import { readdirSync, readFileSync } from "node:fs";
import { basename, dirname, join, relative, resolve } from "node:path";

const ROOT = resolve(import.meta.dir, "..");
const SRC = join(ROOT, "src");

/** `face`: the files other parts may import; null when any file may be. */
type Part = { floor: number; mayImport: Set<string>; face: Set<string> | null };

/** The parts table: rows like "| `shim` | 8 | what | `core`, `stdio` | any |" (a face lists files: `engine.ts`, …). */
function partsTable(): Map<string, Part> {
  const doc = readFileSync(join(ROOT, "docs", "architecture.md"), "utf8");
  const parts = new Map<string, Part>();
  for (const line of doc.split("\n")) {
    const cells = line.split("|").map((cell) => cell.trim());
    const name = /^`([a-z/-]+)`$/.exec(cells[1] ?? "")?.[1];
    const floor = Number(cells[2]);
    if (name === undefined || !Number.isInteger(floor)) continue;
    const imports = cells[4] ?? "";
    const mayImport = imports === "every part above" ? new Set<string>(["*"]) : new Set([...imports.matchAll(/`([a-z/-]+)`/g)].map((m) => m[1] as string));
    const faceCell = cells[5] ?? "";
    const face = faceCell === "any file" ? null : new Set([...faceCell.matchAll(/`([a-z.-]+\.ts)`/g)].map((m) => m[1] as string));
    parts.set(name, { floor, mayImport, face });
  }
  return parts;
}

function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return sourceFiles(path);
    return entry.name.endsWith(".ts") ? [path] : [];
  });
}

/** The part a file belongs to: its folder under `src/`, or under `src/governance/` (governance is rooms). */
function partOf(file: string): string {
  const rel = relative(SRC, file);
  if (rel === "cli.ts") return "cli";
  if (rel === "version.ts") return "core";
  const [top, room] = rel.split("/");
  return top === "governance" ? `governance/${room}` : (top as string);
}

const IMPORT = /(?:^|\n)\s*(?:import|export)\s[^;]*?\sfrom\s+"(\.{1,2}\/[^"]+)"|import\(\s*"(\.{1,2}\/[^"]+)"\s*\)|(?:^|\n)\s*import\s+"(\.{1,2}\/[^"]+)"/g;

/** Every relative import of `file` that lands in `src/`, as absolute paths. */
function importsOf(file: string): string[] {
  const text = readFileSync(file, "utf8");
  const targets: string[] = [];
  for (const match of text.matchAll(IMPORT)) {
    const spec = match[1] ?? match[2] ?? match[3];
    if (spec === undefined) continue;
    const target = resolve(dirname(file), spec);
    if (target.startsWith(`${SRC}/`) && target.endsWith(".ts")) targets.push(target);
  }
  return targets;
}

const files = sourceFiles(SRC);
const graph = new Map(files.map((file) => [file, importsOf(file)]));
const parts = partsTable();

describe("docs/architecture.md holds for src/", () => {
  test("the table names every part, and each part may import only parts on a lower floor", () => {
    expect(parts.size).toBeGreaterThan(5);
    const used = new Set(files.map(partOf));
    expect([...used].filter((part) => !parts.has(part))).toEqual([]);
    const upward: string[] = [];
    for (const [name, part] of parts) {
      for (const other of part.mayImport) {
        if (other === "*") continue;
        const target = parts.get(other);
        if (!target || target.floor >= part.floor) upward.push(`${name} (floor ${part.floor}) -> ${other} (floor ${target?.floor ?? "?"})`);
      }
    }
    expect(upward).toEqual([]);
  });

  test("every import in src/ goes where the table allows", () => {
    const broken: string[] = [];
    for (const [file, targets] of graph) {
      const from = partOf(file);
      const allowed = parts.get(from)?.mayImport ?? new Set<string>();
      for (const target of targets) {
        const to = partOf(target);
        if (to === from) continue;
        const ok = allowed.has(to) || (allowed.has("*") && (parts.get(to)?.floor ?? Infinity) < (parts.get(from)?.floor ?? 0));
        if (!ok) broken.push(`${relative(ROOT, file)} -> ${relative(ROOT, target)} (${from} may not import ${to})`);
      }
    }
    expect(broken).toEqual([]);
  });

  test("a part imports another only through its face: no part reaches into the engine's gates or the service's routes", () => {
    const inside: string[] = [];
    for (const [file, targets] of graph) {
      const from = partOf(file);
      for (const target of targets) {
        const to = partOf(target);
        const face = parts.get(to)?.face;
        if (to === from || !face) continue;
        if (!face.has(basename(target))) inside.push(`${relative(ROOT, file)} -> ${relative(ROOT, target)} (not on ${to}'s face)`);
      }
    }
    expect(inside).toEqual([]);
    const engine = parts.get("governance/engine")?.face;
    expect(engine?.has("engine.ts")).toBe(true);
    expect(engine?.has("cedar-slices.ts")).toBe(false);
  });

  test("a stage imports no other stage: only the Call, the stage types and its own room", () => {
    // docs/architecture.md, "Every tool call, one pipeline": stages are `*-stage.ts`, in any part.
    // A stage may import the pipeline's modules that are not stages (the `Call`, the stage types,
    // what stages share), its own part's modules that are not stages (for the shim, the call types
    // beside its stages and the shim's own collaborators), and the parts below the pipeline.
    const isStage = (file: string) => file.endsWith("-stage.ts");
    const stages = files.filter(isStage);
    expect(stages.length).toBeGreaterThan(0);
    const pipelineFloor = parts.get("pipeline")?.floor ?? 0;
    const crossing: string[] = [];
    for (const stage of stages) {
      const own = partOf(stage);
      for (const target of graph.get(stage) ?? []) {
        const to = partOf(target);
        const allowed = !isStage(target) && (to === own || to === "pipeline" || (parts.get(to)?.floor ?? Infinity) < pipelineFloor);
        if (!allowed) crossing.push(`${relative(ROOT, stage)} -> ${relative(ROOT, target)}`);
      }
    }
    expect(crossing).toEqual([]);
    // The shim's call types beside its stages are not stages, and import none either.
    const shimStages = join(SRC, "shim", "stages");
    const callTypes = files.filter((file) => dirname(file) === shimStages && !isStage(file));
    expect(callTypes.flatMap((file) => (graph.get(file) ?? []).filter(isStage).map((target) => `${relative(ROOT, file)} -> ${relative(ROOT, target)}`))).toEqual([]);
    expect(graph.get(join(SRC, "pipeline", "stages.ts"))).toEqual([join(SRC, "pipeline", "call.ts")]);
  });

  test("the shim has a stage module for every stage the pipeline declares", () => {
    const declared = readFileSync(join(SRC, "pipeline", "stages.ts"), "utf8");
    const names = new Set([...declared.matchAll(/_STAGES = \[([^\]]*)\]/g)].flatMap((m) => [...(m[1] ?? "").matchAll(/"([a-z]+)"/g)].map((n) => n[1] as string)));
    expect([...names].sort()).toEqual(["audit", "decide", "definitions", "forward", "lists", "parse", "secrets", "trace"]);
    const shimStages = new Set(readdirSync(join(SRC, "shim", "stages")));
    expect([...names].filter((name) => !shimStages.has(`${name}-stage.ts`))).toEqual([]);
  });

  test("no files import each other in a circle", () => {
    // Tarjan's strongly connected components; any component of two or more files is a circle.
    let index = 0;
    const indices = new Map<string, number>();
    const low = new Map<string, number>();
    const stack: string[] = [];
    const onStack = new Set<string>();
    const circles: string[][] = [];
    const visit = (file: string) => {
      indices.set(file, index);
      low.set(file, index);
      index += 1;
      stack.push(file);
      onStack.add(file);
      for (const target of graph.get(file) ?? []) {
        if (!graph.has(target)) continue;
        if (!indices.has(target)) {
          visit(target);
          low.set(file, Math.min(low.get(file) as number, low.get(target) as number));
        } else if (onStack.has(target)) {
          low.set(file, Math.min(low.get(file) as number, indices.get(target) as number));
        }
      }
      if (low.get(file) === indices.get(file)) {
        const component: string[] = [];
        for (;;) {
          const member = stack.pop() as string;
          onStack.delete(member);
          component.push(relative(ROOT, member));
          if (member === file) break;
        }
        if (component.length > 1) circles.push(component.sort());
      }
    };
    for (const file of graph.keys()) if (!indices.has(file)) visit(file);
    expect(circles).toEqual([]);
  });

  test("the import scanner sees static, dynamic and re-export imports (so the rules above can fail)", () => {
    const router = graph.get(join(SRC, "shim", "router.ts")) ?? [];
    expect(router).toContain(join(SRC, "governance", "verdict", "decider.ts"));
    const cli = graph.get(join(SRC, "cli.ts")) ?? [];
    expect(cli.some((target) => target.startsWith(join(SRC, "commands")))).toBe(true);
    const service = graph.get(join(SRC, "governance", "service", "service.ts")) ?? [];
    expect(service).toContain(join(SRC, "governance", "service", "http-guard.ts"));
    expect(partOf(join(SRC, "governance", "approval", "slack", "message.ts"))).toBe("governance/approval");
  });
});
