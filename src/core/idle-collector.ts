import { gcAndSweep } from "bun:jsc";

/** How long a process must have been quiet, after traffic, before it collects its heap. */
const IDLE_COLLECT_MS = 1_000;

/**
 * Give back what a burst of traffic left behind once a shim or the governance service goes quiet.
 * JavaScriptCore collects young objects every few megabytes of allocation, but what was alive then
 * (the requests in flight) is kept until a full collection, which it runs rarely: after a burst, a
 * process would hold on to tens of megabytes it no longer uses until its next burst, and most of a
 * shim's life, and the service's, is idle, waiting for the agent. One full collection when nothing
 * has moved for `quietMs` (a few ms of work, never on a message's path: no message is waiting, or
 * there would have been traffic) brings it back to what its working set needs
 * (docs/benchmarks.md, "Where the memory goes").
 *
 * Start-up is such a burst too (loading the policy and, in the service, Cedar's wasm leave garbage
 * behind), so the first quiet second collects as well. `activity` counts the messages seen so far.
 * Returns a function that stops the timer.
 */
export function collectWhenIdle(activity: () => number, quietMs = IDLE_COLLECT_MS): () => void {
  let seen = activity();
  // Nothing collected yet: the first quiet tick collects what start-up left.
  let collectedAt = Number.NaN;
  const timer = setInterval(() => {
    const now = activity();
    if (now === seen && now !== collectedAt) {
      collectedAt = now;
      gcAndSweep();
    }
    seen = now;
  }, quietMs);
  timer.unref();
  return () => clearInterval(timer);
}
