import { messageOf } from "../core/errors.ts";
import type { Logger } from "../core/log.ts";
import type { Profile } from "../core/profile.ts";
import type { Decider } from "../governance/verdict/decider.ts";
import { FAIL_CLOSED_PINS, type PinPolicy } from "../governance/verdict/definition-acceptance.ts";

/** A decider with no policy (`forwardAll`: tests, benchmarks of the bare proxy) pins nothing. */
const NO_POLICY: Omit<PinPolicy, "enforce"> = { mode: "off", blockSeverity: "none" };

/**
 * The pin policy for this shim's server, asked of the decider each time a list arrives or a call
 * meets a blocked definition (so a policy reload applies at once). Governance that cannot answer
 * is read strictly (docs/architecture.md, decision 3), and the log says so.
 */
export function pinPolicyOf(decider: Decider, serverId: string, profile: Profile, log: Logger): PinPolicy | Promise<PinPolicy> {
  const strict = (error: unknown): PinPolicy => {
    log.error(`cannot read the pin policy (${messageOf(error)}): pinning strictly`);
    return { ...FAIL_CLOSED_PINS, enforce: profile === "production" };
  };
  if (!decider.pinPolicy) return { ...NO_POLICY, enforce: profile === "production" };
  try {
    const policy = decider.pinPolicy(serverId);
    return policy instanceof Promise ? policy.catch(strict) : policy;
  } catch (error) {
    return strict(error);
  }
}
