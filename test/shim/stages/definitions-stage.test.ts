/**
 * The definitions gate on the way in, alone with a fake `next`: a call whose tool changed since it
 * was pinned is held while the pins are read again, then goes on carrying the change for the decide
 * stage to ask about (production, `pin: strict`); accepted meanwhile elsewhere, it goes on as any
 * call and the agent is told its list changed; in development it is passed with a WOULD_BLOCK.
 */
import { describe, expect, test } from "bun:test";
import type { DefinitionChange, PinPolicy } from "../../../src/governance/verdict/definition-acceptance.ts";
import type { DefinitionKind } from "../../../src/governance/definitions/definition.ts";
import { HeldDecisions } from "../../../src/shim/held-decisions.ts";
import { definitionsStage } from "../../../src/shim/stages/definitions-stage.ts";
import { deny, fakeNext, governed, later, toolCall } from "./governed.ts";

const change: DefinitionChange = { kind: "tool", name: "echo", status: "changed", changed: ["description"], pinnedDigest: "a", servedDigest: "b", diff: "", findings: [] };
const STRICT: PinPolicy = { mode: "strict", blockSeverity: "high", enforce: true };

/** A guard with `echo` blocked until `acceptElsewhere()` (as `thoughtgate pins accept` would). */
function setup(policy: PinPolicy = STRICT, pendingChange: DefinitionChange = change) {
  let blocked = true;
  const held = new HeldDecisions();
  const announced: DefinitionKind[] = [];
  const warned: string[] = [];
  const pins = later<PinPolicy>();
  let refreshes = 0;
  const guard = {
    get hasBlocked() {
      return blocked;
    },
    pending: (method: string, target: string) => (blocked && method === "tools/call" && target === "echo" ? pendingChange : null),
    refresh: () => {
      refreshes += 1;
      return new Set<DefinitionKind>(blocked ? [] : ["tool"]);
    },
  };
  const stage = definitionsStage({ deliver: () => false }, { guard, pinPolicy: () => pins.promise, held, listChanges: { announce: (kinds) => void announced.push(...kinds) }, log: { warn: (line: unknown) => void warned.push(String(line)) } });
  return {
    stage,
    held,
    announced,
    warned,
    refreshes: () => refreshes,
    pinsRead: () => pins.settle(policy),
    acceptElsewhere: () => {
      blocked = false;
    },
  };
}

describe("definitions (the shim's way in)", () => {
  test("a call whose tool changed is held while the pins are read again, then goes on with the change for a person to accept", async () => {
    const { stage, held, pinsRead, refreshes } = setup();
    const call = governed(toolCall(1, "echo"));
    const { next, seen } = fakeNext(call);
    const run = stage.request?.(call, next);
    expect({ held: held.has(1), went: seen.length }).toEqual({ held: true, went: 0 });
    pinsRead();
    await run;
    expect({ held: held.size, went: seen.length, change: call.change, refreshes: refreshes() }).toEqual({ held: 0, went: 1, change, refreshes: 1 });
  });

  test("accepted elsewhere while it waited: it goes on as any call, and the agent is told its list changed", async () => {
    const { stage, pinsRead, acceptElsewhere, announced } = setup();
    const call = governed(toolCall(1, "echo"));
    const { next, seen } = fakeNext(call);
    const run = stage.request?.(call, next);
    acceptElsewhere();
    pinsRead();
    await run;
    expect({ went: seen.length, change: call.change, announced }).toEqual({ went: 1, change: undefined, announced: ["tool"] });
  });

  test("development: passed without a change to accept, and the log says WOULD_BLOCK", async () => {
    const { stage, pinsRead, warned } = setup({ ...STRICT, enforce: false });
    const call = governed(toolCall(1, "echo"));
    const { next, seen } = fakeNext(call);
    const run = stage.request?.(call, next);
    pinsRead();
    await run;
    expect({ went: seen.length, change: call.change }).toEqual({ went: 1, change: undefined });
    expect(warned).toEqual([expect.stringContaining("WOULD_BLOCK tools/call echo: its definition changed since it was pinned (description)")]);
  });

  test("development: a flagged definition (not changed) is logged as flagged", async () => {
    const { stage, pinsRead, warned } = setup({ ...STRICT, enforce: false }, { ...change, status: "flagged", changed: ["description", "inputSchema"] } as DefinitionChange);
    const call = governed(toolCall(1, "echo"));
    const run = stage.request?.(call, fakeNext(call).next);
    pinsRead();
    await run;
    expect(warned).toEqual(["WOULD_BLOCK tools/call echo: its definition was flagged; forwarded (development)"]);
    const changed = setup({ ...STRICT, enforce: false }, { ...change, changed: ["description", "inputSchema"] });
    const again = governed(toolCall(1, "echo"));
    const second = changed.stage.request?.(again, fakeNext(again).next);
    changed.pinsRead();
    await second;
    expect(changed.warned).toEqual(["WOULD_BLOCK tools/call echo: its definition changed since it was pinned (description, inputSchema); forwarded (development)"]);
  });

  test("pin mode warn or off: the change is not asked about, and no WOULD_BLOCK is logged; development with nothing pending logs nothing", async () => {
    for (const policy of [
      { mode: "warn", blockSeverity: "high", enforce: true },
      { mode: "off", blockSeverity: "high", enforce: false },
    ] satisfies PinPolicy[]) {
      const { stage, pinsRead, warned } = setup(policy);
      const call = governed(toolCall(1, "echo"));
      const { next, seen } = fakeNext(call);
      const run = stage.request?.(call, next);
      pinsRead();
      await run;
      expect({ went: seen.length, change: call.change, warned }).toEqual({ went: 1, change: undefined, warned: [] });
    }
    const { stage, pinsRead, warned, acceptElsewhere } = setup({ ...STRICT, enforce: false });
    const call = governed(toolCall(1, "echo"));
    const run = stage.request?.(call, fakeNext(call).next);
    acceptElsewhere();
    pinsRead();
    await run;
    expect(warned).toEqual([]);
  });

  test("another tool, a call already refused, or nothing blocked: on at once, synchronously", () => {
    const { stage, held } = setup();
    const other = governed(toolCall(1, "other"));
    const refused = governed(toolCall(2, "echo"));
    refused.verdict = deny;
    const results = [other, refused].map((call) => {
      const { next, seen } = fakeNext(call);
      return { result: stage.request?.(call, next), went: seen.length, change: call.change };
    });
    expect({ results, held: held.size }).toEqual({ results: [0, 1].map(() => ({ result: undefined, went: 1, change: undefined })), held: 0 });
  });

  test("cancelled while the pins are read: it goes no further", async () => {
    const { stage, held, pinsRead } = setup();
    const call = governed(toolCall(1, "echo"));
    const { next, seen } = fakeNext(call);
    const run = stage.request?.(call, next);
    held.cancel(1);
    pinsRead();
    await run;
    expect(seen).toEqual([]);
  });
});
