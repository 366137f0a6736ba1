/**
 * `doctor`'s approval-channels check: which ways of reaching a person will work on this machine
 * (docs/governance.md, Approvals). The agent's own form depends on the agent and its mode; the
 * approvals page and `thoughtgate approve` on the service being able to listen on loopback; the
 * desktop notification on a notifier, a session bus and a display; Slack on the policy. Nothing
 * is sent anywhere: Slack is reported as configured, not contacted.
 */
import { existsSync, statSync } from "node:fs";
import { join } from "node:path";
import type { ThoughtGateConfig } from "../core/config/schema.ts";
import { showInvisible } from "../core/visible-text.ts";
import { findNotifyTool, notifyActions, type NotifyTool } from "../governance/approval/desktop-notifier.ts";
import { MODES_THAT_CANNOT_ASK } from "../wrap/agent-modes.ts";
import type { CheckBody, DoctorContext } from "./report.ts";

const NAMES: Record<Channel["channel"], string> = { elicitation: "the agent's form", web: "approvals page", cli: "thoughtgate approve", desktop: "desktop notification", slack: "Slack" };

type Channel = { channel: "elicitation" | "web" | "cli" | "desktop" | "slack"; works: boolean | "depends"; says: string };

export type ChannelFacts = {
  /** Whether the governance service could listen on loopback (the governance-bind check). */
  serviceCanBind: boolean;
  /** The valid policy files in force; null when the policy does not load. */
  configs: ThoughtGateConfig[] | null;
  /** How a desktop notification would be shown (tests pass a fake notifier). */
  actions?: (tool: NotifyTool) => boolean;
};

export function checkApprovalChannels(context: DoctorContext, facts: ChannelFacts): CheckBody {
  const page = facts.serviceCanBind ? "the governance service can listen on 127.0.0.1" : "the governance service cannot listen on 127.0.0.1";
  const channels: Channel[] = [
    {
      channel: "elicitation",
      works: "depends",
      says: `the agent's own form: in agents that show MCP forms (Claude Code, Codex, … interactive); not in ${MODES_THAT_CANNOT_ASK.join(", ")}: their approvals go to the channels below`,
    },
    { channel: "web", works: facts.serviceCanBind, says: `approvals page (the link wrap prints): ${page}` },
    { channel: "cli", works: facts.serviceCanBind, says: `thoughtgate approve (in a terminal other than the agent's): ${page}` },
    desktop(context, facts.actions ?? notifyActions),
    slack(facts.configs),
  ];
  const mark = (c: Channel) => (c.works === true ? "yes" : c.works === false ? "no " : "-  ");
  const working = channels.filter((c) => c.works === true).map((c) => NAMES[c.channel]);
  const summary = facts.serviceCanBind ? `${working.join(", ")}; the agent's form where it has one` : "no approval can reach a person here: the governance service cannot listen";
  return {
    status: facts.serviceCanBind ? "pass" : "fail",
    summary,
    details: channels.map((c) => `${mark(c)} ${c.says}`),
    data: { channels: channels.map(({ channel, works, says }) => ({ channel, works, says })) },
  };
}

/**
 * notify-send needs a notification daemon on the session bus and someone at a display; over SSH,
 * in a container or under a service manager there is usually neither, and the notification is
 * lost. osascript shows in Notification Center (announce only: no buttons).
 */
function desktop({ env, platform }: DoctorContext, actions: (tool: NotifyTool) => boolean): Channel {
  const off = ["0", "off", "false"].includes((env.THOUGHTGATE_DESKTOP_NOTIFY ?? "").toLowerCase());
  if (off) return { channel: "desktop", works: false, says: `desktop notification: turned off ($THOUGHTGATE_DESKTOP_NOTIFY=${env.THOUGHTGATE_DESKTOP_NOTIFY})` };
  const tool = findNotifyTool(env, platform);
  if (platform === "darwin") {
    return tool
      ? { channel: "desktop", works: true, says: `desktop notification: ${tool.path} announces each call in Notification Center (no buttons: answer on the page or with thoughtgate approve)` }
      : { channel: "desktop", works: false, says: "desktop notification: no osascript found" };
  }
  if (!tool) return { channel: "desktop", works: false, says: "desktop notification: no notify-send on PATH (Debian, Ubuntu: apt install libnotify-bin)" };
  const bus = sessionBus(env);
  if (!bus) return { channel: "desktop", works: false, says: `desktop notification: ${tool.path} is here, but no session bus ($DBUS_SESSION_BUS_ADDRESS unset, no $XDG_RUNTIME_DIR/bus): nothing would show it (an SSH session, a container?)` };
  const display = env.WAYLAND_DISPLAY || env.DISPLAY;
  if (!display) return { channel: "desktop", works: false, says: `desktop notification: ${tool.path} and a session bus are here, but no display ($DISPLAY and $WAYLAND_DISPLAY unset): no one would see it` };
  const buttons = actions(tool) ? "with Allow once, Allow for this session and Deny buttons" : "announce only (this notify-send has no --action: libnotify 0.7.9 or later adds buttons)";
  return { channel: "desktop", works: true, says: `desktop notification: ${tool.path} on display ${display}, ${buttons}` };
}

function sessionBus(env: NodeJS.ProcessEnv): string | null {
  if (env.DBUS_SESSION_BUS_ADDRESS) return env.DBUS_SESSION_BUS_ADDRESS;
  const runtime = env.XDG_RUNTIME_DIR;
  const socket = runtime ? join(runtime, "bus") : null;
  return socket !== null && existsSync(socket) && statSync(socket).isSocket() ? `unix:path=${socket}` : null;
}

function slack(configs: ThoughtGateConfig[] | null): Channel {
  if (configs === null) return { channel: "slack", works: false, says: "Slack: unknown, the policy does not load" };
  const workflows = configs.flatMap((config) =>
    Object.entries(config.approval).flatMap(([name, workflow]) => (workflow.destination.type === "slack" ? [{ name, destination: workflow.destination }] : [])),
  );
  if (workflows.length === 0) return { channel: "slack", works: false, says: "Slack: not configured (an approval workflow with destination type slack: docs/governance.md, Slack)" };
  const described = workflows.map(({ name, destination }) => {
    const how = destination.app_token ? "buttons by Socket Mode" : "reactions";
    return `workflow ${showInvisible(name)} posts to ${showInvisible(destination.channel)} (${destination.approvers.length} approver${destination.approvers.length === 1 ? "" : "s"}, ${how})`;
  });
  return { channel: "slack", works: true, says: `Slack: configured, ${described.join("; ")}; doctor does not contact Slack` };
}
