import type { ThoughtGateConfig } from "../../core/config/schema.ts";
import { compileGlob, type Glob } from "../../core/glob.ts";
import type { ListKind } from "../verdict/decider.ts";


type Exposure = { enabled: boolean; mode: "all" | "allowlist" | "blocklist"; lists: Record<ListKind, Glob[] | null> };

/** What the visibility gate answers: one name, or which of a list the agent may see. */
export interface ListVisibility {
  isVisible(serverId: string, kind: ListKind, name: string): boolean;
  /** The names of `names` the agent may see, in their original order. */
  filter(serverId: string, kind: ListKind, names: string[]): string[];
}

/**
 * Gate 1: what each server shows. A server missing from `sources` gets the defaults (everything
 * visible). Lists are filtered to what is visible ∩ what the server really has (mcp-protector's
 * rule): an allowlist naming a tool the server lacks shows nothing for it, an empty allowlist
 * shows nothing at all. A disabled source shows nothing.
 */
export class Visibility implements ListVisibility {
  private readonly bySource = new Map<string, Exposure>();

  constructor(config: ThoughtGateConfig) {
    for (const source of config.sources) {
      const { mode, tools, prompts, resources } = source.expose;
      this.bySource.set(source.id, {
        enabled: source.enabled,
        mode,
        lists: {
          tools: tools.map(compileGlob),
          prompts: prompts ? prompts.map(compileGlob) : null,
          resources: resources ? resources.map(compileGlob) : null,
        },
      });
    }
  }

  isVisible(serverId: string, kind: ListKind, name: string): boolean {
    const exposure = this.bySource.get(serverId);
    if (!exposure) return true;
    if (!exposure.enabled) return false;
    const globs = exposure.lists[kind];
    if (exposure.mode === "all" || globs === null) return true;
    const listed = globs.some((glob) => glob.test(name));
    return exposure.mode === "allowlist" ? listed : !listed;
  }

  /** The names of `names` the agent may see, in their original order. */
  filter(serverId: string, kind: ListKind, names: string[]): string[] {
    return names.filter((name) => this.isVisible(serverId, kind, name));
  }
}

/** Which list a governed method's target belongs to. */
export function listKindOf(method: string): ListKind | null {
  if (method === "tools/call") return "tools";
  if (method === "prompts/get") return "prompts";
  if (method === "resources/read" || method === "resources/subscribe") return "resources";
  return null;
}
