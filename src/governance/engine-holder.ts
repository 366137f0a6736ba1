import { watch, type FSWatcher } from "node:fs";
import { basename, dirname } from "node:path";
import { discoverConfig } from "../core/config/discover.ts";
import { messageOf } from "../core/errors.ts";
import { log } from "../core/log.ts";
import { EMBEDDED_DEFAULT } from "./default-policy.ts";
import { GovernanceEngine } from "./engine.ts";

const RELOAD_DEBOUNCE_MS = 100;

/**
 * The engine currently in force, and how it is replaced: on SIGHUP or when the config file or a
 * Cedar file changes, the whole config is loaded again. A reload that fails keeps the engine in
 * force and logs the problems loudly; a start that fails is fatal (the caller's error).
 */
export class EngineHolder {
  private watchers: FSWatcher[] = [];
  private reloadTimer: ReturnType<typeof setTimeout> | null = null;
  private onHangup: (() => void) | null = null;
  /** Resolves after each completed reload attempt (tests and callers can wait on it). */
  reloads = 0;

  private constructor(
    private current: GovernanceEngine,
    readonly file: string | null,
    private readonly flag: string | undefined,
  ) {}

  /** `--thoughtgate-config` / discovery; with no file anywhere, the embedded default policy. */
  static async load(flag: string | undefined): Promise<EngineHolder> {
    // The schema (valibot) is loaded only when there is a file to check: a first run with the
    // embedded default keeps a shim ~1 MB smaller.
    if (!discoverConfig(flag)) return new EngineHolder(new GovernanceEngine(EMBEDDED_DEFAULT, null, "embedded default policy"), null, flag);
    const { loadConfig } = await import("../core/config/load.ts");
    const loaded = loadConfig(flag);
    if (!loaded) return new EngineHolder(new GovernanceEngine(EMBEDDED_DEFAULT, null, "embedded default policy"), null, flag);
    return new EngineHolder(await GovernanceEngine.fromConfig(loaded.config, loaded.file ?? "config"), loaded.file, flag ?? loaded.file ?? undefined);
  }

  get engine(): GovernanceEngine {
    return this.current;
  }

  /** For `run_start.policy` and banners. */
  get label(): string {
    return this.file ?? "embedded-default";
  }

  async reload(): Promise<boolean> {
    try {
      const { loadConfig } = await import("../core/config/load.ts");
      const loaded = loadConfig(this.flag);
      if (!loaded) throw new Error(`${this.file} disappeared`);
      this.current = await GovernanceEngine.fromConfig(loaded.config, loaded.file ?? "config");
      this.rewatch();
      log.info(`reloaded ${this.label}`);
      return true;
    } catch (error) {
      log.error(`reload of ${this.label} failed; keeping the policy in force:\n${messageOf(error)}`);
      return false;
    } finally {
      this.reloads += 1;
    }
  }

  /** Reload on SIGHUP and when the config or its Cedar files change. No-op for the embedded default. */
  watch(): void {
    if (!this.file) return;
    this.onHangup = () => void this.reload();
    process.on("SIGHUP", this.onHangup);
    this.rewatch();
  }

  close(): void {
    if (this.onHangup) process.off("SIGHUP", this.onHangup);
    for (const watcher of this.watchers) watcher.close();
    this.watchers = [];
    if (this.reloadTimer) clearTimeout(this.reloadTimer);
  }

  private rewatch(): void {
    if (!this.file || !this.onHangup) return;
    for (const watcher of this.watchers) watcher.close();
    // Watch directories, not files: editors save by writing a new file and renaming it over the old.
    const files = [this.file, ...(this.current.config.cedar?.policies ?? []), ...(this.current.config.cedar?.schema ? [this.current.config.cedar.schema] : [])];
    const byDir = new Map<string, Set<string>>();
    for (const file of files) {
      const names = byDir.get(dirname(file)) ?? new Set<string>();
      names.add(basename(file));
      byDir.set(dirname(file), names);
    }
    this.watchers = [];
    for (const [dir, names] of byDir) {
      try {
        const watcher = watch(dir, (_event, name) => {
          if (name !== null && names.has(String(name))) this.scheduleReload();
        });
        watcher.unref();
        this.watchers.push(watcher);
      } catch (error) {
        log.warn(`cannot watch ${dir} for changes (SIGHUP still reloads): ${messageOf(error)}`);
      }
    }
  }

  private scheduleReload(): void {
    if (this.reloadTimer) clearTimeout(this.reloadTimer);
    // An editor's save is several events; reload once they settle.
    this.reloadTimer = setTimeout(() => {
      this.reloadTimer = null;
      void this.reload();
    }, RELOAD_DEBOUNCE_MS);
  }
}
