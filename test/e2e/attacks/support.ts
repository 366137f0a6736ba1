/**
 * What the attack tests share: a shim between a raw agent (the attacker's bytes, exactly) and the
 * scripted server, which records every line it receives, so a test can show what reached the server.
 */
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { fixture, readEvents } from "../../support/harness.ts";
import { RawAgent } from "../../support/raw-agent.ts";

export type Shim = { agent: RawAgent; received: () => Array<Record<string, any>>; events: () => Array<Record<string, unknown>> };

export function shimWithScriptedServer(dir: string, options: { policy?: string; shimArgs?: string[]; serverArgs?: string[] } = {}): Shim {
  const record = join(dir, "server-received.jsonl");
  const events = join(dir, "events.jsonl");
  const policy = options.policy === undefined ? [] : ["--thoughtgate-config", join(dir, "thoughtgate.yaml")];
  if (options.policy !== undefined) writeFileSync(join(dir, "thoughtgate.yaml"), options.policy);
  const agent = new RawAgent([
    "--server-id", "scripted", "--events", events, ...policy, ...(options.shimArgs ?? []),
    "--", ...fixture("scripted-server-fixture.ts", "--record", record, ...(options.serverArgs ?? [])),
  ]);
  const received = () =>
    existsSync(record)
      ? readFileSync(record, "utf8")
          .split("\n")
          .filter((line) => line !== "" && line !== "<EOF>")
          .map((line) => JSON.parse(line) as Record<string, any>)
      : [];
  return { agent, received, events: () => readEvents(events) };
}

/** The tool calls the server was asked to run, by name. */
export function callsReceived(shim: Shim): string[] {
  return shim.received().filter((m) => m.method === "tools/call").map((m) => String(m.params?.name));
}
