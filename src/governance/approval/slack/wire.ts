import * as v from "valibot";

/**
 * What ThoughtGate reads from Slack, one schema per shape (https://api.slack.com/web,
 * https://api.slack.com/apis/socket-mode). Only the fields used are named; Slack adds fields freely,
 * so objects are loose. Every Web API answer carries `ok`; `ok: false` carries `error`.
 */

/** Any Web API answer: `{"ok": false, "error": "channel_not_found"}` on failure (HTTP 200 all the same). */
export const apiEnvelope = v.looseObject({ ok: v.boolean(), error: v.optional(v.string()) });

/** chat.postMessage: the channel's id (even when posted by name) and the message's timestamp, its id. */
export const postMessageAnswer = v.looseObject({ ok: v.literal(true), channel: v.string(), ts: v.string() });

export const updateAnswer = v.looseObject({ ok: v.literal(true) });

export const ephemeralAnswer = v.looseObject({ ok: v.literal(true) });

/** apps.connections.open: a single-use WebSocket URL for Socket Mode. */
export const connectionsOpenAnswer = v.looseObject({ ok: v.literal(true), url: v.string() });

const reaction = v.looseObject({ name: v.string(), users: v.optional(v.array(v.string()), []), count: v.optional(v.number()) });

/** reactions.get (with `full=true`, every user of each reaction is listed). */
export const reactionsAnswer = v.looseObject({
  ok: v.literal(true),
  message: v.looseObject({ reactions: v.optional(v.array(reaction), []) }),
});
export type Reaction = v.InferOutput<typeof reaction>;

/**
 * A Socket Mode frame: `hello` once connected, `disconnect` when Slack is about to close it (reason
 * `warning`, `refresh_requested`, `link_disabled`, …), and envelopes (`envelope_id`, `type`:
 * `interactive`, `events_api`, `slash_commands`) to acknowledge with `{"envelope_id": …}`.
 */
export const socketFrame = v.looseObject({
  type: v.string(),
  envelope_id: v.optional(v.string()),
  reason: v.optional(v.string()),
  payload: v.optional(v.unknown()),
});

/** The part of a `block_actions` interaction (a button click) a decision needs. */
export const blockActions = v.looseObject({
  type: v.literal("block_actions"),
  user: v.looseObject({ id: v.string() }),
  container: v.optional(v.looseObject({ channel_id: v.optional(v.string()), message_ts: v.optional(v.string()) })),
  channel: v.optional(v.looseObject({ id: v.string() })),
  message: v.optional(v.looseObject({ ts: v.string() })),
  actions: v.array(v.looseObject({ action_id: v.string(), value: v.optional(v.string()) })),
  /** What the message's input blocks hold at the click: block id → action id → `{value}`. */
  state: v.optional(v.looseObject({ values: v.optional(v.record(v.string(), v.record(v.string(), v.looseObject({ value: v.optional(v.nullable(v.string())) })))) })),
});
