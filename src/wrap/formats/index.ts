/**
 * The file formats agents keep their MCP servers in, behind one interface, so `rewrite` and
 * `restoreOwnedKeys` (docs/architecture.md, decision 8) work the same way on JSONC, TOML and YAML:
 * an edit is always a splice of exact spans of the original text, so everything wrap does not own
 * (comments, formatting, other keys) stays byte for byte.
 */
import { extname } from "node:path";
import { AGENT_TYPES } from "../adapters/types.ts";
import { jsonc } from "./jsonc.ts";
import { toml } from "./toml.ts";
import type { ConfigFormat, ConfigFormatName } from "./types.ts";
import { yaml } from "./yaml.ts";

export type { ConfigFormat, ConfigFormatName, ObjectEdit } from "./types.ts";

const FORMATS: Record<ConfigFormatName, ConfigFormat> = { jsonc, toml, yaml };

/** Agents whose config is not JSON or JSONC. */
const AGENT_FORMATS: Partial<Record<string, ConfigFormatName>> = { codex: "toml", goose: "yaml" };

/**
 * The format of a config `agentType` reads (the journal records the agent type, so `unwrap` finds
 * the format again). An agent type this build does not know (a journal from another version) is
 * told by the file name.
 */
export function formatOf(agentType: string, path = ""): ConfigFormat {
  const extension = extname(path).toLowerCase();
  // Codex's hooks.json beside its config.toml (enroll's hook: wrap/enrolled-hooks.ts) is JSON.
  if (extension === ".json") return FORMATS.jsonc;
  if ((AGENT_TYPES as readonly string[]).includes(agentType)) return FORMATS[AGENT_FORMATS[agentType] ?? "jsonc"];
  if (extension === ".toml") return FORMATS.toml;
  if (extension === ".yaml" || extension === ".yml") return FORMATS.yaml;
  return FORMATS.jsonc;
}
