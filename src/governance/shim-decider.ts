import type { Profile } from "../core/profile.ts";
import type { Decider } from "../shim/decide.ts";
import { EngineHolder } from "./engine-holder.ts";
import { LocalDecider } from "./local-decider.ts";

export type ShimGovernanceOptions = {
  profile: Profile;
  /** `--thoughtgate-config`; discovery and the embedded default apply when absent. */
  configFlag: string | undefined;
};

/**
 * The decider a standalone shim uses: its own engine, reloaded on SIGHUP and file changes.
 * A config that was asked for and cannot be loaded throws (the shim does not start).
 */
export async function createLocalDecider(options: ShimGovernanceOptions): Promise<Decider> {
  const holder = await EngineHolder.load(options.configFlag);
  holder.watch();
  const decider = new LocalDecider(holder, options.profile);
  return Object.assign(decider, { close: () => holder.close() });
}
