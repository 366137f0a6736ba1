import { describe, expect, test } from "bun:test";
import { callOf, toolCallRequest, type Call } from "../../src/pipeline/call.ts";
import { compose, describePipeline, REQUEST_STAGES, RESPONSE_STAGES, type Next, type Stage } from "../../src/pipeline/stages.ts";

const newCall = (): Call => callOf("hooks", "claude-code", toolCallRequest("t1", "Bash", { command: "ls" }));

/** A stage that notes its name each time it is entered, before and after `next`. */
function noting(name: Stage["name"], seen: string[], body?: (call: Call, next: Next) => void | Promise<void>): Stage {
  const run = (direction: string) => (call: Call, next: Next) => {
    seen.push(`${direction}:${name}`);
    return body ? body(call, next) : next(call);
  };
  return { name, request: run("in"), response: run("out") };
}

describe("the pipeline", () => {
  test("runs the stages in the declared order, each entered once per direction", () => {
    const seen: string[] = [];
    const stages = [...REQUEST_STAGES].map((name) => noting(name, seen));
    expect(compose(stages, "request")(newCall())).toBeUndefined();
    expect(seen).toEqual(REQUEST_STAGES.map((name) => `in:${name}`));
    seen.length = 0;
    const back = [...RESPONSE_STAGES].map((name) => noting(name, seen));
    compose(back, "response")(newCall());
    expect(seen).toEqual(RESPONSE_STAGES.map((name) => `out:${name}`));
    expect(describePipeline()).toBe("request: parse → lists → definitions → decide → audit → trace → forward\nresponse: secrets → definitions → audit → trace");
  });

  test("a stage out of the declared order is refused when composing", () => {
    const seen: string[] = [];
    expect(() => compose([noting("audit", seen), noting("decide", seen)], "request")).toThrow('stage "decide" is out of order');
  });

  test("a stage named twice is refused when composing", () => {
    const seen: string[] = [];
    expect(() => compose([noting("audit", seen), noting("audit", seen)], "request")).toThrow(
      'pipeline: stage "audit" is out of order for the request (parse → lists → definitions → decide → audit → trace → forward)',
    );
  });

  test("a stage with nothing for this direction, or not of this direction, is skipped", () => {
    const seen: string[] = [];
    const backOnly: Stage = { name: "decide", response: (call, next) => (seen.push("out:decide"), next(call)) };
    const secrets = noting("secrets", seen);
    expect(compose([backOnly, secrets, noting("audit", seen)], "request")(newCall())).toBeUndefined();
    expect(seen).toEqual(["in:audit"]);
  });

  test("synchronous stages keep the run synchronous; one that waits makes it a promise the stages after it share", async () => {
    const seen: string[] = [];
    const sync = compose([noting("decide", seen), noting("audit", seen)], "request");
    expect(sync(newCall())).toBeUndefined();
    const waiting = compose(
      [
        noting("decide", seen, async (call, next) => {
          await Promise.resolve();
          call.verdict = { action: "forward", gate: null, ruleId: null, reason: "allowed" };
          await next(call);
        }),
        noting("audit", seen),
      ],
      "request",
    );
    const call = newCall();
    const run = waiting(call);
    expect(run).toBeInstanceOf(Promise);
    await run;
    expect(call.verdict?.action).toBe("forward");
  });

  test("a deny set by one stage is seen by every stage after it", () => {
    const seen: string[] = [];
    const denied: string[] = [];
    const deny = noting("definitions", seen, (call, next) => {
      call.verdict = { action: "deny", gate: "definitions", ruleId: null, reason: "changed", error: { code: -32016, message: "changed" } };
      return next(call);
    });
    const watch = (name: Stage["name"]) => noting(name, seen, (call, next) => {
      if (call.verdict?.action === "deny") denied.push(name);
      return next(call);
    });
    compose([deny, watch("audit"), watch("trace"), watch("forward")], "request")(newCall());
    expect(denied).toEqual(["audit", "trace", "forward"]);
  });

  test("a stage that calls next twice is caught, so no stage can be entered twice for one call", () => {
    const seen: string[] = [];
    const twice = noting("decide", seen, (call, next) => {
      next(call);
      next(call);
    });
    expect(() => compose([twice, noting("audit", seen)], "request")(newCall())).toThrow("next() called twice");
    expect(seen.filter((entry) => entry === "in:audit")).toHaveLength(1);
    const last = noting("audit", seen, (call, next) => {
      next(call);
      next(call);
    });
    expect(() => compose([last], "request")(newCall())).toThrow("next() called twice before the end");
  });

  test("the same on the way back, and the error names the stage that would have been entered twice", () => {
    const seen: string[] = [];
    const twice = noting("secrets", seen, (call, next) => {
      next(call);
      next(call);
    });
    expect(() => compose([twice, noting("audit", seen)], "response")(newCall())).toThrow('next() called twice before stage "audit"');
    expect(seen).toEqual(["out:secrets", "out:audit"]);
  });

  test("a call that goes through a pipeline again (decided afresh) starts at its first stage, not taken for a second next", () => {
    const seen: string[] = [];
    const request = compose([noting("decide", seen), noting("audit", seen)], "request");
    const response = compose([noting("secrets", seen), noting("audit", seen)], "response");
    const call = newCall();
    request(call);
    request(call);
    response(call);
    response(call);
    expect(seen).toEqual(["in:decide", "in:audit", "in:decide", "in:audit", "out:secrets", "out:audit", "out:secrets", "out:audit"]);
  });

  test("a call's way back may run while its way in still waits (an arbiter call nobody waits on): each direction keeps its own place", async () => {
    for (const probe of [undefined, () => {}]) {
      const seen: string[] = [];
      const decision = Promise.withResolvers<void>();
      const request = compose(
        [
          noting("decide", seen, async (call, next) => {
            await decision.promise;
            return next(call);
          }),
          noting("audit", seen),
          noting("trace", seen),
        ],
        "request",
        probe,
      );
      const response = compose([noting("audit", seen), noting("trace", seen)], "response", probe);
      const call = newCall();
      const deciding = request(call);
      response(call);
      decision.resolve();
      await deciding;
      expect(seen).toEqual(["in:decide", "out:audit", "out:trace", "in:audit", "in:trace"]);
    }
  });

  test("a probe is told each stage entered, in order, in both directions", () => {
    const seen: string[] = [];
    const told: string[] = [];
    const probe = (direction: string, name: string) => void told.push(`${direction}:${name}`);
    compose([noting("parse", seen), noting("decide", seen), noting("forward", seen)], "request", probe)(newCall());
    compose([noting("secrets", seen), noting("trace", seen)], "response", probe)(newCall());
    expect(told).toEqual(["request:parse", "request:decide", "request:forward", "response:secrets", "response:trace"]);
    const twice = noting("parse", seen, (call, next) => {
      next(call);
      next(call);
    });
    expect(() => compose([twice, noting("decide", seen)], "request", probe)(newCall())).toThrow('next() called twice before stage "decide"');
    const back = noting("secrets", seen, (call, next) => {
      next(call);
      next(call);
    });
    expect(() => compose([back], "response", probe)(newCall())).toThrow("next() called twice before the end");
  });
});
