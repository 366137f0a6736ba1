import { INVISIBLE_CHARACTERS_SOURCE } from "../../core/visible-text.ts";
import { CHOICE_TITLES } from "../verdict/choices.ts";

/**
 * The approvals web page (docs/architecture.md, decision 9): one self-contained document, no external assets.
 * Task data is attacker-controlled (tool arguments come from the agent, names from the server), so
 * the script builds every node with `textContent`, never `innerHTML`, shows bidi, zero-width, tag
 * and control characters as escapes (src/core/visible-text.ts, the same set), and the CSP allows
 * only this response's nonce to run. The page itself holds no data and needs no key: the key is
 * in the URL's fragment (`/approvals#key=…`), which a browser never sends, and the script sends it
 * as a bearer token with every API call. Arguments arrive redacted and are shown whole (scrollable).
 * The markup, its style and its script are one document, read together, so they are one file.
 */
export function approvalPageHtml(nonce: string): string {
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="referrer" content="no-referrer">
<link rel="icon" href="data:,">
<title>ThoughtGate approvals</title>
<style nonce="${nonce}">${STYLE}</style>
</head>
<body>
<header>
  <h1>ThoughtGate approvals</h1>
  <p id="session" class="session"></p>
  <p id="status" class="status">Connecting…</p>
</header>
<main>
  <p id="error" class="error" hidden></p>
  <section id="pending-section">
    <h2>Waiting for you <span id="pending-count" class="count"></span></h2>
    <p id="empty" class="empty" hidden>No calls are waiting for approval.</p>
    <div id="pending"></div>
  </section>
  <section id="grants-section" hidden>
    <h2>Allowed for this session</h2>
    <div id="grants"></div>
  </section>
  <section id="recent-section" hidden>
    <h2>Recently decided</h2>
    <div id="recent"></div>
  </section>
</main>
<script nonce="${nonce}">${SCRIPT}</script>
</body>
</html>
`;
}

const STYLE = `
:root { color-scheme: light dark; --bg: #f6f7f9; --card: #fff; --text: #1d232b; --muted: #5f6b7a; --border: #d9dee5;
  --approve: #1a7f37; --deny: #c62828; --accent: #2f5bd3; }
@media (prefers-color-scheme: dark) { :root { --bg: #15181d; --card: #1e232a; --text: #e6e9ee; --muted: #98a2b3; --border: #333a44; } }
* { box-sizing: border-box; }
body { margin: 0; font: 15px/1.45 system-ui, -apple-system, "Segoe UI", sans-serif; background: var(--bg); color: var(--text); }
header { padding: 18px 28px 10px; border-bottom: 1px solid var(--border); background: var(--card); display: flex; align-items: baseline; gap: 18px; flex-wrap: wrap; }
h1 { font-size: 20px; margin: 0; }
h2 { font-size: 15px; text-transform: uppercase; letter-spacing: .04em; color: var(--muted); margin: 24px 0 10px; }
main { padding: 0 28px 40px; max-width: 980px; }
.status { margin: 0; color: var(--muted); font-size: 13px; }
.session { margin: 0; font-weight: 600; overflow-wrap: anywhere; }
.task .where { color: var(--muted); font-size: 13px; overflow-wrap: anywhere; }
.status.live::before { content: "● "; color: var(--approve); }
.error { margin: 20px 0; padding: 12px 16px; border: 1px solid var(--deny); border-radius: 8px; color: var(--deny); background: color-mix(in srgb, var(--deny) 8%, transparent); font-weight: 600; }
.empty { color: var(--muted); }
.count { background: var(--accent); color: #fff; border-radius: 10px; padding: 0 8px; font-size: 12px; }
.count:empty { display: none; }
.task { background: var(--card); border: 1px solid var(--border); border-radius: 10px; padding: 14px 18px; margin-bottom: 12px; }
.task .title { display: flex; justify-content: space-between; gap: 12px; align-items: baseline; flex-wrap: wrap; }
.task .call { font-family: ui-monospace, SFMono-Regular, Menlo, monospace; font-size: 16px; font-weight: 600; overflow-wrap: anywhere; }
.task .left { font-size: 13px; color: var(--muted); white-space: nowrap; }
.task .left.soon { color: var(--deny); font-weight: 600; }
.task .meta { color: var(--muted); font-size: 13px; margin: 4px 0 8px; overflow-wrap: anywhere; }
.task pre.diff .add, .task pre.change .add { color: var(--approve); }
.task pre.change .del { color: var(--deny); }
.task input.reason { width: 100%; margin: 0 0 10px; padding: 6px 10px; font: inherit; border: 1px solid var(--border); border-radius: 6px; background: var(--bg); color: var(--text); }
.task pre.diff .del { color: var(--deny); }
.task pre { margin: 0 0 12px; padding: 10px 12px; background: var(--bg); border: 1px solid var(--border); border-radius: 6px; max-height: 320px; overflow: auto; font-size: 13px; white-space: pre-wrap; overflow-wrap: anywhere; }
.actions { display: flex; gap: 10px; flex-wrap: wrap; }
.grant { display: flex; justify-content: space-between; align-items: center; gap: 12px; background: var(--card); border: 1px solid var(--border); border-radius: 10px; padding: 10px 18px; margin-bottom: 8px; }
.grant .call { font-family: ui-monospace, SFMono-Regular, Menlo, monospace; font-weight: 600; overflow-wrap: anywhere; }
button.revoke { background: var(--muted); padding: 4px 14px; }
button { font: inherit; font-weight: 600; border: 0; border-radius: 6px; padding: 7px 20px; color: #fff; cursor: pointer; }
button.approve { background: var(--approve); }
button.approve.wider { background: transparent; color: var(--approve); box-shadow: inset 0 0 0 2px var(--approve); }
button.deny { background: var(--deny); }
button:disabled { opacity: .5; cursor: default; }
.task.done { opacity: .55; }
.badge { font-size: 12px; font-weight: 700; text-transform: uppercase; padding: 1px 8px; border-radius: 10px; border: 1px solid currentColor; }
.badge.approved { color: var(--approve); }
.badge.denied, .badge.timed_out, .badge.expired, .badge.cancelled { color: var(--deny); }
`;

const SCRIPT = `
"use strict";
let key = new URLSearchParams(location.hash.slice(1)).get("key") || "";
const $ = (id) => document.getElementById(id);
const BACKSLASH = String.fromCharCode(92);
const NEWLINE = String.fromCharCode(10);
const INVISIBLE = new RegExp(${JSON.stringify(INVISIBLE_CHARACTERS_SOURCE)}, "gu");
const hex4 = (code) => code.toString(16).padStart(4, "0");

/** Text from tasks, with invisible and reordering characters shown as escapes. */
function visible(text) {
  return String(text).replace(INVISIBLE, (c) => {
    const code = c.codePointAt(0);
    return BACKSLASH + (code > 0xffff ? "u{" + code.toString(16) + "}" : "u" + hex4(code));
  });
}

/** The same inside JSON text (JSON escapes, the same value); the layout's own newlines stay. */
function visibleJson(text) {
  return text.replace(INVISIBLE, (c) => (c === NEWLINE ? c : Array.from({ length: c.length }, (_, i) => BACKSLASH + "u" + hex4(c.charCodeAt(i))).join("")));
}
const TITLES = ${JSON.stringify(CHOICE_TITLES)};
const POLL_MS = 1000;
let lastSignature = "";
let tasks = [];
let grants = [];
let session = null;
const busy = new Set();
const reasons = new Map();

function el(tag, className, text) {
  const node = document.createElement(tag);
  if (className) node.className = className;
  if (text !== undefined) node.textContent = text;
  return node;
}

/** The session as people tell sessions apart (as thoughtgate approvals names it): agent, project, start. */
function sessionText() {
  if (!session) return "";
  const who = session.agent || "thoughtgate " + session.kind;
  const where = session.project ? " in " + session.project : "";
  return visible(who + where + ", started " + String(session.started_at).slice(0, 16).replace("T", " ") + " UTC");
}

/** Which agent and project a call comes from: the call's own project, else the session's. */
function whereFrom(task) {
  if (!session) return task.project ? visible("in " + task.project) : "";
  const project = task.project || session.project;
  return visible((session.agent || "thoughtgate " + session.kind) + (project ? " in " + project : ""));
}

function callName(task) {
  const target = task.method === "tools/call" ? task.name : task.definition ? "accept the definition of " + task.name : task.method + " " + task.name;
  return visible(task.server_id + " · " + target);
}

function timeLeft(task) {
  const ms = Date.parse(task.expires_at) - Date.now();
  if (ms <= 0) return { text: "expiring…", soon: true };
  const s = Math.ceil(ms / 1000);
  const text = s >= 60 ? Math.floor(s / 60) + "m " + String(s % 60).padStart(2, "0") + "s left" : s + "s left";
  return { text, soon: s <= 30 };
}

function prettyArguments(value) {
  try { return visibleJson(JSON.stringify(value, null, 2)); } catch { return visible(String(value)); }
}

function card(task) {
  const pending = task.status === "pending";
  const node = el("article", pending ? "task" : "task done");
  node.dataset.taskId = task.task_id;
  const title = el("div", "title");
  title.append(el("span", "call", callName(task)));
  if (pending) {
    const left = el("span", "left");
    left.dataset.expires = task.task_id;
    title.append(left);
  } else {
    title.append(el("span", "badge " + visible(task.status), visible(task.status.replace("_", " "))));
  }
  node.append(title);
  const where = whereFrom(task);
  if (where) node.append(el("div", "where", where));
  const meta = ["rule " + (task.rule_id || "—"), "workflow " + task.workflow, "task " + task.task_id];
  if (!pending && task.decided_by) meta.push("by " + task.decided_by + (task.decided_by_who ? " (" + task.decided_by_who + ")" : "") + (task.scope === "session" ? ", for this session" : task.scope === "always" ? (task.always_scope === "everywhere" ? ", always, everywhere" : ", always, in this project") : ""));
  node.append(el("div", "meta", visible(meta.join(" · "))));
  node.append(el("div", "meta", visible(task.reason)));
  if (task.definition) node.append(...definitionParts(task.definition));
  const args = el("pre", "arguments", prettyArguments(task.arguments));
  node.append(args);
  if (task.diff) node.append(...changeParts(task.diff));
  if (task.person_reason) node.append(el("div", "meta", visible("their reason: " + task.person_reason)));
  if (pending) {
    // Kept across refreshes: the card is rebuilt each second.
    const reason = el("input", "reason");
    reason.type = "text";
    reason.maxLength = 1000;
    reason.placeholder = "Reason (optional; with Deny, the agent is told it)";
    reason.value = reasons.get(task.task_id) || "";
    reason.addEventListener("input", () => reasons.set(task.task_id, reason.value));
    node.append(reason);
    const actions = el("div", "actions");
    const target = visible(task.server_id) + "." + visible(task.name);
    // A definition is accepted as it is shown (it becomes the pin): no session or always.
    const always = task.always_possible === true;
    if (!always && !task.definition && task.always_refusal) node.append(el("div", "meta", visible("Always allow is not offered: " + task.always_refusal)));
    const buttons = task.definition ? [
      [el("button", "approve", "Accept the new definition"), "approve", "once", "", "It becomes the pin; a later change is asked about again"],
      [el("button", "deny", TITLES.deny), "deny", "once", "", "Keep it hidden and its calls refused"],
    ] : [
      [el("button", "approve", TITLES.once), "approve", "once", "", "This call only"],
      [el("button", "approve wider", TITLES.session), "approve", "session", "", target + " with any arguments, until this session ends"],
      ...(always ? [
        [el("button", "approve wider", TITLES.always_project), "approve", "always", "project", "Adds a rule to your policy file (~/.config/thoughtgate/thoughtgate.yaml): " + target + " runs without asking from now on, in this session's project"],
        [el("button", "approve wider", TITLES.always_everywhere), "approve", "always", "everywhere", "Adds a rule to your policy file (~/.config/thoughtgate/thoughtgate.yaml): " + target + " runs without asking from now on, in every project"],
      ] : []),
      [el("button", "deny", TITLES.deny), "deny", "once", "", "Refuse this call"],
    ];
    for (const [button, decision, scope, alwaysScope, title] of buttons) {
      button.type = "button";
      button.title = title;
      button.dataset.scope = scope;
      button.disabled = busy.has(task.task_id);
      button.addEventListener("click", () => decide(task, decision, scope, alwaysScope));
      actions.append(button);
    }
    node.append(actions);
  }
  return node;
}

/** A changed or flagged definition: what changed, what the checks found, and the diff (+ served now, - pinned). */
function definitionParts(d) {
  const parts = [el("div", "meta", visible(d.status === "changed" ? "definition changed: " + d.changed.join(", ") : "definition flagged by the poisoning checks"))];
  if (d.findings.length) parts.push(el("pre", "findings", d.findings.map((f) => visible(f.severity + " " + f.rule + " at " + f.path + ": " + f.message + ": " + f.excerpt)).join(NEWLINE)));
  if (d.diff) {
    const pre = el("pre", "diff");
    for (const line of d.diff.split(NEWLINE)) pre.append(el("span", line.startsWith("+") ? "add" : line.startsWith("-") ? "del" : "", visible(line) + NEWLINE));
    parts.push(pre);
  }
  return parts;
}

/** What the call would change, as a unified diff: the same diff the agent's prompt and Slack show. */
function changeParts(diff) {
  const pre = el("pre", "change");
  for (const line of diff.split(NEWLINE)) pre.append(el("span", line.startsWith("+") && !line.startsWith("+++") ? "add" : line.startsWith("-") && !line.startsWith("---") ? "del" : "", visible(line) + NEWLINE));
  return [el("div", "meta", "What it would change:"), pre];
}

function grantRow(grant) {
  const node = el("div", "grant");
  node.dataset.grantId = grant.grant_id;
  const text = el("div");
  const target = grant.method === "tools/call" ? grant.name : grant.method + " " + grant.name;
  text.append(el("div", "call", visible(grant.server_id + " · " + target)));
  text.append(el("div", "meta", visible("task " + grant.task_id + " · by " + grant.granted_by + " · " + grant.uses + (grant.uses === 1 ? " call" : " calls") + " since")));
  const revoke = el("button", "revoke", "Revoke");
  revoke.type = "button";
  revoke.title = "Ask again for the next call";
  revoke.addEventListener("click", () => revokeGrant(grant));
  node.append(text, revoke);
  return node;
}

function updateCountdowns() {
  for (const node of document.querySelectorAll("[data-expires]")) {
    const task = tasks.find((t) => t.task_id === node.dataset.expires);
    if (!task) continue;
    const left = timeLeft(task);
    node.textContent = left.text;
    node.classList.toggle("soon", left.soon);
  }
}

function render() {
  const signature = JSON.stringify(tasks) + JSON.stringify(grants) + [...busy].join(",");
  if (signature !== lastSignature) {
    lastSignature = signature;
    const pending = tasks.filter((t) => t.status === "pending");
    const recent = tasks.filter((t) => t.status !== "pending").slice(0, 20);
    $("pending").replaceChildren(...pending.map(card));
    $("recent").replaceChildren(...recent.map(card));
    $("grants").replaceChildren(...grants.map(grantRow));
    $("grants-section").hidden = grants.length === 0;
    $("empty").hidden = pending.length > 0;
    $("recent-section").hidden = recent.length === 0;
    $("pending-count").textContent = pending.length ? String(pending.length) : "";
    document.title = (pending.length ? "(" + pending.length + ") " : "") + "ThoughtGate approvals";
  }
  updateCountdowns();
}

/** What a click could not do stays on screen until the next click; connection errors go when it is back. */
let actionError = "";

function showActionError(message) {
  actionError = message;
  $("error").textContent = message;
  $("error").hidden = false;
}

function showError(message) {
  $("error").textContent = message;
  $("error").hidden = false;
  $("status").textContent = "Not connected";
  $("status").classList.remove("live");
}

async function api(path, init) {
  const response = await fetch(path, { ...init, cache: "no-store", headers: { ...(init && init.headers), authorization: "Bearer " + key } });
  let body = null;
  try { body = await response.json(); } catch {}
  if (response.status === 401) throw Object.assign(new Error("This approvals link has a wrong or old key (the service may have restarted). Open the URL that thoughtgate wrap or thoughtgate serve printed."), { fatal: true });
  if (!response.ok) throw new Error((body && body.error) || "HTTP " + response.status);
  return body;
}

let stopped = false;
async function refresh() {
  try {
    const body = await api("/approvals/api/tasks");
    tasks = Array.isArray(body.tasks) ? body.tasks : [];
    grants = Array.isArray(body.grants) ? body.grants : [];
    session = body.session && typeof body.session === "object" ? body.session : null;
    $("session").textContent = sessionText();
    if (actionError) $("error").textContent = actionError;
    $("error").hidden = !actionError;
    $("pending-section").hidden = false;
    $("status").textContent = "Live · updated " + new Date().toLocaleTimeString();
    $("status").classList.add("live");
    render();
  } catch (error) {
    if (error.fatal) {
      stopped = true;
      tasks = [];
      grants = [];
      $("grants").replaceChildren();
      $("grants-section").hidden = true;
      $("pending").replaceChildren();
      $("recent").replaceChildren();
      $("pending-section").hidden = true;
      $("recent-section").hidden = true;
    }
    showError(error.fatal ? error.message : "Cannot reach the governance service (" + error.message + "); retrying…");
  }
}

async function decide(task, decision, scope, alwaysScope) {
  actionError = "";
  busy.add(task.task_id);
  render();
  const reason = (reasons.get(task.task_id) || "").trim();
  try {
    await api("/approvals/api/tasks/" + encodeURIComponent(task.task_id), {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ decision, digest: task.digest, scope, ...(alwaysScope ? { always_scope: alwaysScope } : {}), ...(reason ? { reason } : {}) }),
    });
    reasons.delete(task.task_id);
  } catch (error) {
    showActionError("Could not " + (scope === "always" ? "always allow" : decision) + " " + callName(task) + ": " + error.message);
  } finally {
    busy.delete(task.task_id);
    await refresh();
  }
}

async function revokeGrant(grant) {
  actionError = "";
  try {
    await api("/approvals/api/grants/" + encodeURIComponent(grant.grant_id) + "/revoke", { method: "POST" });
  } catch (error) {
    showActionError("Could not revoke " + visible(grant.server_id + "." + grant.name) + ": " + error.message);
  } finally {
    await refresh();
  }
}

/** A one-time link (\`thoughtgate approvals --open\`, #open=CODE) is redeemed once for the key, which then replaces it in the address. */
async function redeemOpenLink() {
  const code = new URLSearchParams(location.hash.slice(1)).get("open");
  if (!code) return false;
  try {
    const response = await fetch("/approvals/api/open", { method: "POST", cache: "no-store", headers: { "content-type": "application/json" }, body: JSON.stringify({ code }) });
    let body = null;
    try { body = await response.json(); } catch {}
    if (response.ok && body && typeof body.key === "string") {
      key = body.key;
      history.replaceState(null, "", "#key=" + key);
      return false;
    }
    showError((body && body.error) || "This approvals link could not be used (HTTP " + response.status + "): run thoughtgate approvals again.");
  } catch (error) {
    showError("Cannot reach the governance service (" + error.message + ").");
  }
  $("pending-section").hidden = true;
  return true;
}

async function loop() {
  if (!key && (await redeemOpenLink())) return;
  if (!key) { showError("This page needs its key: open the whole URL that thoughtgate wrap or thoughtgate serve printed (it ends in #key=…)."); $("pending-section").hidden = true; return; }
  await refresh();
  if (!stopped) setTimeout(loop, POLL_MS);
}
setInterval(updateCountdowns, 1000);
loop();
`;
