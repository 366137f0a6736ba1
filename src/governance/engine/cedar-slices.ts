import { loadCedar } from "./cedar-wasm.ts";
import { ACTION_IDS, slicePolicies, type PolicyIndex, type SliceKey } from "./cedar-index.ts";

/**
 * The preparsed policy sets a request is evaluated against, one per slice of the policy set
 * (cedar-index.ts). The slices of requests that name no principal or resource a policy names are
 * built with the set; the others the first time a request needs them (~0.1 ms per policy, once).
 *
 * cedar-wasm evaluates one preparsed set per call, and a call costs ~0.05 ms before any policy
 * runs (converting the request), so a slice is one set holding the policies any request can match
 * (the shared part) together with those of its resource. That copies the shared part into every
 * slice that is used, so it is done only for a shared part of at most `MERGED_SHARED_MAX` policies
 * and while the copies stay within a budget; otherwise a request is evaluated against the shared
 * part and its own part as two sets and the answers combined (cedar.ts): the same decision, at the
 * cost of a second call, small next to evaluating that many shared policies.
 *
 * cedar-wasm keeps preparsed sets until their id is preparsed again and has no call to drop one.
 * When the object holding a policy set's slices is collected (a reload replaced it), its sets are
 * overwritten with empty ones and their ids reused, so reloads do not accumulate engine memory.
 */
const cedar = loadCedar();
const releasedIds: string[] = [];
let idsCreated = 0;
const release = new FinalizationRegistry<string[]>((ids) => {
  for (const id of ids) {
    cedar.preparsePolicySet(id, { staticPolicies: {} });
    releasedIds.push(id);
  }
});

/** Policy copies the merged slices may hold beyond the set's own size (~2.5 KB each in the engine). */
const EXTRA_COPIES = 2_000;
/** A larger shared part is not copied: a second call (~0.05 ms) is small next to evaluating it. */
const MERGED_SHARED_MAX = 100;

export class SliceSets {
  /** Every set id this object created; released together when it is collected. */
  private readonly owned: string[] = [];
  /** A request's slice key → the sets it is evaluated against. */
  private readonly plans = new Map<string, string[]>();
  /** One group of policies (the shared part of a slice, or one resource's) → its set. */
  private readonly groups = new Map<string, string>();
  private copyBudget: number;
  private fullSet: string | null = null;

  constructor(
    private readonly texts: ReadonlyMap<string, string>,
    private readonly index: PolicyIndex,
    copyBudget = texts.size + EXTRA_COPIES,
  ) {
    this.copyBudget = copyBudget;
    release.register(this, this.owned);
    for (const action of ACTION_IDS) this.setsFor({ action, principal: null, resource: null });
  }

  /** The sets to evaluate a request with this key against: one, or two once the copy budget is spent. */
  setsFor(key: SliceKey): string[] {
    const name = JSON.stringify([key.action, key.principal, key.resource]);
    let plan = this.plans.get(name);
    if (!plan) {
      plan = this.plan(key);
      this.plans.set(name, plan);
    }
    return plan;
  }

  /** The whole policy set as one set: what an unsliced evaluation uses (the equivalence test, the bench). */
  full(): string {
    this.fullSet ??= this.preparse([...this.texts.keys()]);
    return this.fullSet;
  }

  private plan(key: SliceKey): string[] {
    const { shared, specific } = slicePolicies(this.index, key);
    const sharedSet = () => this.group(JSON.stringify([key.action, "principal", key.principal]), shared);
    if (specific.length === 0) return [sharedSet()];
    const specificSet = () => this.group(JSON.stringify([key.action, "resource", key.resource]), specific);
    if (shared.length === 0) return [specificSet()];
    const copies = shared.length + specific.length;
    if (shared.length <= MERGED_SHARED_MAX && copies <= this.copyBudget) {
      this.copyBudget -= copies;
      return [this.preparse([...shared, ...specific])];
    }
    return [sharedSet(), specificSet()];
  }

  private group(name: string, ids: string[]): string {
    let set = this.groups.get(name);
    if (set === undefined) {
      set = this.preparse(ids);
      this.groups.set(name, set);
    }
    return set;
  }

  private preparse(ids: string[]): string {
    const policies: Record<string, string> = {};
    // The index holds only ids of `texts`.
    for (const id of ids) policies[id] = this.texts.get(id) ?? "";
    const setId = releasedIds.pop() ?? `thoughtgate-${++idsCreated}`;
    const answer = cedar.preparsePolicySet(setId, { staticPolicies: policies });
    if (answer.type === "failure") {
      releasedIds.push(setId);
      // Each policy parsed when the set was loaded; a slice that does not is the engine's fault.
      throw new Error(`Cedar could not prepare a slice of ${ids.length} policies: ${answer.errors.map((e) => e.message).join("; ")}`);
    }
    this.owned.push(setId);
    return setId;
  }
}
