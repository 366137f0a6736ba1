import { statSync, watch, type FSWatcher } from "node:fs";
import { basename, dirname } from "node:path";
import { discoverPolicy, discoveryPaths, policyFiles } from "../../core/config/discover.ts";
import { messageOf } from "../../core/errors.ts";
import { log } from "../../core/log.ts";
import type { PolicyEngine } from "./engine.ts";
import { filesInForce, loadPolicyInForce, policyLabel, unboundAlwaysAllowRules, type PolicyInForce } from "./policy.ts";

const RELOAD_DEBOUNCE_MS = 100;
const warned = new Set<string>();
/** How often a polling holder (`watch("poll")`) looks at its files. */
const POLL_INTERVAL_MS = 1_000;

/** How a holder notices its files change: file-system events, or a look at each file every second. */
export type WatchMode = "events" | "poll";

/**
 * The policy currently in force, and how it is replaced: on SIGHUP, when a policy file or a
 * Cedar file changes, or when the organisation's policy changes (its background refresh), discovery runs again and every file is loaded again (the user's and the
 * project's alike, or the explicit one). A project file that appears is added; a file that was in
 * force and is gone, or a reload that fails, keeps the policy in force and logs the problems
 * loudly; a start that fails is fatal (the caller's error).
 */
export class EngineHolder {
  private watchers: FSWatcher[] = [];
  private mode: WatchMode = "events";
  private poller: ReturnType<typeof setInterval> | null = null;
  private reloadTimer: ReturnType<typeof setTimeout> | null = null;
  private onHangup: (() => void) | null = null;
  /** Counts completed reload attempts (tests and callers can wait on it). */
  reloads = 0;

  private constructor(
    private current: PolicyInForce,
    private readonly flag: string | undefined,
    private readonly env: NodeJS.ProcessEnv,
    private readonly cwd: string,
  ) {}

  /** `--thoughtgate-config` / discovery; with no file anywhere, the embedded default policy. */
  static async load(flag: string | undefined, env: NodeJS.ProcessEnv = process.env, cwd = process.cwd()): Promise<EngineHolder> {
    const holder = new EngineHolder(await loadPolicyInForce(discoverPolicy(flag, env, cwd), env), flag, env, cwd);
    holder.warnUnbound();
    return holder;
  }

  /** Old "always allow" rules that name no program: said once per rule and process (rules.ts). */
  private warnUnbound(): void {
    const { base } = this.current;
    if (base.file === null) return;
    for (const warning of unboundAlwaysAllowRules(base.engine.config, base.file)) {
      if (warned.has(warning)) continue;
      warned.add(warning);
      log.warn(warning);
    }
  }

  get engine(): PolicyEngine {
    return this.current.engine;
  }

  get policy(): PolicyInForce {
    return this.current;
  }

  /** The files in force (empty: the embedded default alone). */
  get files(): string[] {
    return filesInForce(this.current);
  }

  /** For `run_start.policy` and banners: which files are in force. */
  get label(): string {
    return policyLabel(this.current);
  }

  async reload(): Promise<boolean> {
    try {
      const discovery = discoverPolicy(this.flag, this.env, this.cwd);
      const found = policyFiles(discovery).map((file) => file.file);
      const gone = this.files.filter((file) => !found.includes(file));
      if (gone.length > 0) throw new Error(`${gone.join(" and ")} no longer exists (restart to run without it)`);
      this.current = await loadPolicyInForce(discovery, this.env);
      this.warnUnbound();
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

  /**
   * Reload on SIGHUP and when a policy or Cedar file changes, or when the user's or the project's
   * file appears where there was none (the embedded default in force): a file written by "always
   * allow" on the approvals page, or by hand, takes effect in the running session.
   *
   * `poll` looks at the files every `POLL_INTERVAL_MS` instead of subscribing to file-system events:
   * what a standalone shim uses, one per MCP server, where the event watcher's thread costs each shim
   * ~0.5 MB and ~3 ms of its start (docs/benchmarks.md, "Where the memory goes"); a change then takes
   * effect within about a second.
   */
  watch(mode: WatchMode = "events"): void {
    this.mode = mode;
    this.onHangup = () => void this.reload();
    process.on("SIGHUP", this.onHangup);
    this.rewatch();
  }

  close(): void {
    this.current.organisation?.source.unwatch(this.onOrganisationChange);
    if (this.onHangup) process.off("SIGHUP", this.onHangup);
    for (const watcher of this.watchers) watcher.close();
    this.watchers = [];
    if (this.poller) clearInterval(this.poller);
    this.poller = null;
    if (this.reloadTimer) clearTimeout(this.reloadTimer);
  }

  /**
   * Every file whose change means a reload: those in force and their Cedar files (`required`),
   * and where a user or project file may yet appear.
   */
  private watchedFiles(): { required: string[]; candidates: string[] } {
    const { base, restriction } = this.current;
    const cedar = [base, restriction].flatMap((layer) => {
      const files = layer?.engine.config.cedar;
      return files ? [...files.policies, ...(files.schema ? [files.schema] : [])] : [];
    });
    const layered = base.origin !== "flag" && base.origin !== "env";
    return { required: [...this.files, ...cedar], candidates: layered ? Object.values(discoveryPaths(this.env, this.cwd)) : [] };
  }

  /** The organisation's policy changed (a new version, refused, or back): every layer is loaded again. */
  private readonly onOrganisationChange = () => this.scheduleReload();

  private rewatch(): void {
    if (!this.onHangup) return;
    // Its own refresh interval (organisation.ts); a change reaches this session without a restart.
    this.current.organisation?.source.watch(this.onOrganisationChange);
    if (this.mode === "poll") {
      this.repoll();
      return;
    }
    for (const watcher of this.watchers) watcher.close();
    const { required, candidates } = this.watchedFiles();
    const requiredDirs = new Set(required.map((file) => dirname(file)));
    // Watch directories, not files: editors save by writing a new file and renaming it over the old.
    const byDir = new Map<string, Set<string>>();
    for (const file of [...required, ...candidates]) {
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
        // A directory where a file may only appear later (no user config directory yet) is not a problem.
        const message = `cannot watch ${dir} for changes (SIGHUP still reloads): ${messageOf(error)}`;
        if (requiredDirs.has(dir)) log.warn(message);
        else log.debug(message);
      }
    }
  }

  /** Note each watched file's state now; every interval after, a file whose state changed means a reload. */
  private repoll(): void {
    if (this.poller) clearInterval(this.poller);
    const { required, candidates } = this.watchedFiles();
    const files = [...new Set([...required, ...candidates])];
    let states = files.map(fileState);
    this.poller = setInterval(() => {
      const now = files.map(fileState);
      if (now.some((state, i) => state !== states[i])) this.scheduleReload();
      states = now;
    }, POLL_INTERVAL_MS);
    this.poller.unref();
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

/** What a change to a file changes: absent, or its inode, size and modification and change times. */
function fileState(file: string): string {
  try {
    const stat = statSync(file, { throwIfNoEntry: false });
    return stat ? `${stat.ino}:${stat.size}:${stat.mtimeMs}:${stat.ctimeMs}` : "absent";
  } catch (error) {
    // Unreadable (a directory without permission): reported as a state of its own, so a fix is a change.
    return `error:${messageOf(error)}`;
  }
}
