import type { RemoteTarget } from "./adapters/index.ts";

/**
 * How a rewritten remote entry tells the shim where the server is: `--url URL` on its command
 * line, and each header in a variable of the entry's env (`--header-env THOUGHTGATE_HEADER_1`),
 * because headers carry credentials and a process's arguments are visible to every user of the
 * machine (`ps`) while its environment is not. A URL with a query string (where keys also travel)
 * goes the same way (`--url-env`). The values are written as the entry had them, `${VAR}`
 * references included: the agent expands them in `env` as it did in `url` and `headers`.
 */
export function remoteShimArgs(remote: RemoteTarget): { args: string[]; env: Record<string, string> } {
  const env: Record<string, string> = {};
  const args: string[] = [];
  if (remote.url.includes("?")) {
    env.THOUGHTGATE_URL = remote.url;
    args.push("--url-env", "THOUGHTGATE_URL");
  } else {
    args.push("--url", remote.url);
  }
  Object.entries(remote.headers).forEach(([name, value], i) => {
    const variable = `THOUGHTGATE_HEADER_${i + 1}`;
    env[variable] = `${name}: ${value}`;
    args.push("--header-env", variable);
  });
  return { args, env };
}
