import type { ReactionPoller, Watched } from "./reactions.ts";
import type { SocketModeClient } from "./socket-mode.ts";
import type { SlackWebApi } from "./web-api.ts";
import type { SlackAppIdentity } from "./handoff.ts";

/** One Slack app as the config names it (API URL and tokens): its client and how decisions arrive. */
export type Workspace = {
  api: SlackWebApi;
  token: string;
  /** Socket Mode (an app token was given): Approve/Deny buttons. */
  socket: SocketModeClient | null;
  /** Otherwise: reactions, read in turn. */
  poller: ReactionPoller<Posted> | null;
  /** Why it is off (Slack refused its token), or null. */
  off: string | null;
  /** With Socket Mode: which app this is, as a click handed on between sessions names it (handoff.ts). */
  app: SlackAppIdentity | null;
};

/** A posted approval message: the task it asks about, where it is, and who may answer it. */
export type Posted = Watched & {
  workspace: Workspace;
  digest: string;
  workflowName: string;
  /** For log lines: `channel <as configured>`. */
  where: string;
  /** The Slack user who decided it, once one did. */
  slackUser?: string;
  /** Its message shows the outcome. */
  updated: boolean;
  updating: boolean;
};
