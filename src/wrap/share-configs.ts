/**
 * Reading an agent's configs the way `wrap` and `enroll` both govern them, and sharing them: every
 * runnable entry gets its server id, entries that already run this thoughtgate's shim are known as
 * such (shim-entry.ts), and each file with something governed is shared by the holder (a wrap
 * session, or enroll): rewritten if it needs to be, joined if it already is (config-guard.ts).
 */
import type { JSONPath } from "jsonc-parser";
import { discover, rewrite, type AgentContext, type AgentType, type ConfigFile, type DiscoverOptions, type ServerEntry, type ShimCommand } from "./adapters/index.ts";
import { ConfigGuard, type ShareOutcome } from "./config-guard.ts";
import type { Holder } from "./journal.ts";
import { withConfigsLock } from "./lock.ts";
import { markOwnShims, serverIds, shimCommandFor } from "./shim-entry.ts";
import { shimFiles } from "./shim-path.ts";

export type ConfigPlan = {
  /** The agent's config files, as discover found them, own shims marked. */
  files: ConfigFile[];
  /** Files given on the agent's command line (agent-args.ts), read the same way. */
  given: ConfigFile[];
  /** What each governed entry becomes. */
  shimFor: (entry: ServerEntry) => ShimCommand;
  /** The server ids of every governed entry, to be rewritten or running through thoughtgate already. */
  serverIds: string[];
};

export type PlanOptions = {
  agent: AgentType;
  ctx: AgentContext;
  discover: DiscoverOptions;
  /** The shim path entries name (shim-path.ts). */
  binary: string;
  given?: ConfigFile[];
  /** Which files to share (enroll leaves a project's files alone); all by default. */
  include?: (file: ConfigFile) => boolean;
  /** The agent's hook added to a file (agent-hooks.ts, Gemini CLI's settings), shared with its MCP entries; null where none goes. */
  addHook?: (file: ConfigFile, text: string) => { text: string; owned: JSONPath[] } | null;
};

export function planConfigs(options: PlanOptions): ConfigPlan {
  const files = discover(options.agent, options.ctx, options.discover);
  const given = options.given ?? [];
  const all = [...files, ...given];
  const ids = serverIds(all);
  markOwnShims(all, shimFiles(), ids, options.ctx);
  const governed = all.flatMap((file) => file.entries).filter((entry) => entry.governed || entry.status === "wrapped");
  return {
    files,
    given,
    shimFor: (entry) => shimCommandFor(options.binary, ids.get(entry) ?? entry.name, entry),
    serverIds: [...new Set(governed.map((entry) => ids.get(entry) ?? entry.name))],
  };
}

export type Shared = { guard: ConfigGuard; file: ConfigFile; outcome: ShareOutcome };

/**
 * With the configs lock (so wraps starting together take turns), read the configs again and share
 * every one with something governed: what another wrap rewrote meanwhile is joined, not rewritten.
 * `check` sees the fresh reading first and may throw (the coverage gate). On a failure what was
 * shared so far stays shared: the caller lets go of it (`restoreAllGuards`) and says so.
 */
export function shareConfigs(options: PlanOptions, holder: Holder, check: (plan: ConfigPlan) => void = () => {}): { plan: ConfigPlan; shared: Shared[] } {
  return withConfigsLock(() => {
    const plan = planConfigs(options);
    check(plan);
    const shared: Shared[] = [];
    for (const file of plan.files) {
      if (!(options.include?.(file) ?? true)) continue;
      const governs = file.entries.some((entry) => entry.governed || entry.status === "wrapped");
      const rewritten = governs ? rewrite(file.text, file.entries, plan.shimFor) : { text: file.text, owned: [] };
      const hooked = options.addHook?.(file, rewritten.text) ?? null;
      if (!governs && hooked === null) continue;
      const guard = new ConfigGuard({ configPath: file.path, agentType: options.agent, holder });
      const text = hooked?.text ?? rewritten.text;
      const owned = [...rewritten.owned, ...(hooked?.owned ?? [])];
      shared.push({ guard, file, outcome: guard.share(file.text, { text, owned }) });
    }
    return { plan, shared };
  });
}
