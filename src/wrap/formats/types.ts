/**
 * What a config format gives `rewrite` and `restoreOwnedKeys`; the formats themselves are in
 * `jsonc.ts`, `toml.ts`, `yaml.ts`, and `index.ts` picks one for an agent.
 */
import type { JSONPath } from "jsonc-parser";

export type ConfigFormatName = "jsonc" | "toml" | "yaml";

/** One object of a config (a JSON object, a TOML table, a YAML mapping), edited in place. */
export interface ObjectEdit {
  /** The key's value as plain data; undefined when the key is absent. */
  get(key: string): unknown;
  has(key: string): boolean;
  /** The object under `key` when it can take new keys one at a time (not absent, not an empty `{}`). */
  child(key: string): ObjectEdit | undefined;
  /** Replace the value of an existing key. */
  replace(key: string, value: unknown): void;
  /** Add keys the object does not have, laid out like its other keys. */
  insert(properties: readonly [string, unknown][]): void;
}

export interface DocumentEdit {
  /** The objects at `paths` (undefined where there is none), found in one look at the text. */
  objects(paths: readonly JSONPath[]): (ObjectEdit | undefined)[];
  /** The text with every edit applied. */
  apply(): string;
}

export type ConfigFormat = {
  name: ConfigFormatName;
  /** Start editing `text`. Throws an Error whose message says why (`does not parse (...)`) when it cannot be edited. */
  edit(text: string): DocumentEdit;
  /**
   * Put back the values at `owned` from `backup` into `current`, keeping everything else of
   * `current`; `backup` itself when `current` is still `rewritten`. A path absent from the
   * backup (a key wrap added) is removed; one absent from `current` (the agent deleted it) stays away.
   */
  restoreOwnedKeys(backup: string, rewritten: string, current: string, owned: readonly JSONPath[]): string;
};
