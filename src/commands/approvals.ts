import { defineCommand } from "citty";
import { openControllingTerminal } from "../core/controlling-terminal.ts";
import { EXIT, messageOf, ThoughtGateError } from "../core/errors.ts";
import { ApprovalClient } from "../governance/deciders/approval-client.ts";
import type { PersonAtCli } from "../governance/wire/api.ts";
import { findServices, resolveApprovalTarget, type ApprovalTarget, type ServiceDescriptor } from "../governance/wire/service-descriptor.ts";
import { isSameProcessRunning } from "../core/process-identity.ts";
import { serviceArgs } from "./_approval.ts";
import { commonArgs, rejectUnknownFlags } from "./_shared.ts";

const args = {
  open: { type: "boolean", description: "Open each page in the browser (its command line gets a one-time link, never the page's key)" },
  ...serviceArgs,
  ...commonArgs,
} as const;

/**
 * `thoughtgate approvals [--open]`: the approvals page of every running session (`wrap` or `serve`),
 * at any time: while an agent owns the terminal, wrap prints nothing, and this is how the page is
 * found again. The link carries the page's key, so the service hands it only to a person at a
 * terminal (docs/security.md, "Only a person approves").
 */
export default defineCommand({
  meta: { name: "approvals", description: "Print (or --open) the approvals page of each running thoughtgate wrap or serve" },
  args,
  async run({ rawArgs, args: parsed }) {
    rejectUnknownFlags(rawArgs, args);
    const targets = sessions(parsed);
    const person = personHere();
    const lines: string[] = [];
    let failed = 0;
    for (const { target, label } of targets) {
      const client = new ApprovalClient(target);
      try {
        if (parsed.open) {
          const opened = openInBrowser(await client.openLink(person));
          lines.push(opened ? `opened the approvals page of ${label} in the browser` : `${await client.pageLink(person)}  ${label} (no browser to open it: set $BROWSER)`);
        } else lines.push(`${await client.pageLink(person)}  ${label}`);
      } catch (error) {
        failed += 1;
        lines.push(`${label}: ${messageOf(error)}`);
      }
    }
    await Bun.write(Bun.stdout, `${lines.join("\n")}\n`);
    return failed === targets.length ? EXIT.error : EXIT.ok;
  },
});

/** The one given by flags or environment, else every live one (its descriptor in the state dir). */
function sessions(given: { endpoint?: string | undefined; key?: string | undefined }): Array<{ target: ApprovalTarget; label: string }> {
  if (given.endpoint !== undefined || given.key !== undefined) {
    const target = resolveApprovalTarget({ endpoint: given.endpoint, key: given.key }, isSameProcessRunning);
    return [{ target, label: `(${target.endpoint})` }];
  }
  const { live, ignored } = findServices(isSameProcessRunning);
  if (live.length === 0) {
    const skipped = ignored.length > 0 ? ` (skipped: ${ignored.join("; ")})` : "";
    throw new ThoughtGateError("GOVERNANCE_UNAVAILABLE", `no running thoughtgate wrap or serve found${skipped}: the approvals page exists while one runs`);
  }
  return live.map((descriptor) => ({ target: { endpoint: descriptor.endpoint, key: descriptor.cli_key }, label: describe(descriptor) }));
}

function describe(descriptor: ServiceDescriptor): string {
  return `(thoughtgate ${descriptor.kind}, pid ${descriptor.pid}, since ${descriptor.started_at.slice(0, 19).replace("T", " ")} UTC)`;
}

/** A person sits at this command's terminal (in its foreground): what the service asks before it hands out the page's key. */
export function personHere(): PersonAtCli {
  const opened = openControllingTerminal();
  if (!opened.ok) return "none";
  opened.terminal.close();
  return "terminal";
}

/** $BROWSER (unless `none`), else xdg-open or open; false when there is none or it cannot start. */
function openInBrowser(url: string): boolean {
  const configured = process.env.BROWSER;
  if (configured === "none") return false;
  const opener = configured || (process.platform === "darwin" ? Bun.which("open") : Bun.which("xdg-open"));
  if (!opener) return false;
  try {
    // A session of its own: the browser it starts must outlive this command and its terminal.
    Bun.spawn([opener, url], { stdin: "ignore", stdout: "ignore", stderr: "ignore", detached: true }).unref();
    return true;
  } catch {
    return false;
  }
}
