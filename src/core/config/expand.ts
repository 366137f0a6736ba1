/**
 * `${VAR}` and `${VAR:-default}` in every string value of a parsed config. A variable that is
 * unset (and has no default) is an error naming the field, never an empty string: an empty
 * token or path would fail later and further from its cause.
 */
const REFERENCE = /\$\{([A-Za-z_][A-Za-z0-9_]*)(?::-([^}]*))?\}/g;

export type ExpandProblem = { path: string; message: string };

export function expandEnv(value: unknown, env: NodeJS.ProcessEnv, path = "", problems: ExpandProblem[] = []): unknown {
  if (typeof value === "string") {
    return value.replace(REFERENCE, (whole, name: string, fallback: string | undefined) => {
      const found = env[name];
      if (found !== undefined && found !== "") return found;
      if (fallback !== undefined) return fallback;
      problems.push({ path: path || "(root)", message: `environment variable ${name} is not set (write \${${name}:-default} to give a default)` });
      return whole;
    });
  }
  if (Array.isArray(value)) return value.map((item, i) => expandEnv(item, env, `${path}[${i}]`, problems));
  if (value !== null && typeof value === "object") {
    return Object.fromEntries(
      Object.entries(value).map(([key, item]) => [key, expandEnv(item, env, path ? `${path}.${key}` : key, problems)]),
    );
  }
  return value;
}
