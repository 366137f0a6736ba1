import { existsSync, mkdirSync, readFileSync, statSync } from "node:fs";
import { dirname, isAbsolute, join, normalize } from "node:path";
import * as v from "valibot";
import { writeFileAtomic } from "../../core/atomic-write.ts";
import { sha256Hex } from "../../core/canonical-json.ts";
import { MACHINE_ORGANISATION_FILE, ORG_KEY_ENV, ORG_MAX_STALE_ENV, ORG_REFRESH_ENV, ORG_URL_ENV } from "../../core/config/discover.ts";
import { parseConfig } from "../../core/config/load.ts";
import { organisationSchema, type OrganisationConfig, type ThoughtGateConfig } from "../../core/config/schema.ts";
import { readPolicyFile } from "../../core/config/read-file.ts";
import { formatDuration, parseDuration } from "../../core/duration.ts";
import { messageOf, ThoughtGateError } from "../../core/errors.ts";
import { log } from "../../core/log.ts";
import { stateDir } from "../../core/paths.ts";
import { readRegularFile } from "../../core/safe-open.ts";
import { importPublicKey, MAX_BUNDLE_BYTES, parseBundle, verifyBundle, type PolicyBundle } from "../../core/policy-bundle.ts";

/**
 * The organisation's policy (docs/team.md): a signed bundle fetched from an HTTPS URL, cached for
 * offline use, refreshed in the background, and the floor under the user's and the project's
 * policies (policy.ts combines them). Everything that cannot be trusted is refused with one line,
 * and then every call fails closed (fail-closed.ts): a bundle whose signature does not verify
 * (tampered, or another key), a version older than the cached one (a rollback), the same version
 * with other contents, a redirect to another origin, a policy that does not load, or no copy
 * confirmed by the URL within `max_stale` while the URL cannot be reached.
 */
export type OrganisationSettings = {
  url: string;
  publicKey: string;
  maxStaleMs: number;
  refreshMs: number;
  /** Where the settings came from: the environment (a machine set up by MDM), or a policy file. */
  from: string;
};

const DEFAULT_MAX_STALE_MS = 7 * 24 * 3_600_000;
const DEFAULT_REFRESH_MS = 300_000;
const FETCH_TIMEOUT_MS = 10_000;
const MAX_REDIRECTS = 5;

/**
 * The settings in force: the machine's file (`/etc/thoughtgate/organisation.yaml`) first, which
 * nothing in an environment overrides or turns off; else `THOUGHTGATE_ORG_POLICY_URL` (and its key
 * file); else the policy file's `policy.organisation`.
 */
export function organisationSettings(env: NodeJS.ProcessEnv, config: ThoughtGateConfig | null, file: string | null, machineFile = MACHINE_ORGANISATION_FILE): OrganisationSettings | null {
  const machine = machineSettings(machineFile);
  if (machine) return machine;
  const url = env[ORG_URL_ENV];
  if (url !== undefined && url.trim() !== "") {
    if (!/^https:\/\/[^/@\s]+(\/\S*)?$/.test(url)) throw new ThoughtGateError("CONFIG", `$${ORG_URL_ENV}: expected an https:// URL without user:password@`);
    const keyFile = env[ORG_KEY_ENV];
    if (keyFile === undefined || keyFile.trim() === "") throw new ThoughtGateError("CONFIG", `$${ORG_URL_ENV} is set but $${ORG_KEY_ENV} (the file holding the organisation's public key) is not`);
    const publicKey = readPolicyFile(keyFile, "organisation public key").trim();
    const duration = (name: string, fallback: number) => (env[name] ? parseDuration(env[name] as string, `$${name}`) : fallback);
    return { url, publicKey, maxStaleMs: duration(ORG_MAX_STALE_ENV, DEFAULT_MAX_STALE_MS), refreshMs: duration(ORG_REFRESH_ENV, DEFAULT_REFRESH_MS), from: "the environment" };
  }
  const organisation: OrganisationConfig | undefined = config?.policy?.organisation;
  if (!organisation) return null;
  return { url: organisation.url, publicKey: organisation.public_key, maxStaleMs: organisation.max_stale, refreshMs: organisation.refresh, from: file ?? "the policy file" };
}

/**
 * The machine's settings, or null when it has none. The file and its directory must be root's and
 * writable by no one else (what a managed setup writes): anything else, or a file that does not
 * parse, is refused in one line, and every call then fails closed rather than going on without the
 * organisation's policy.
 */
function machineSettings(path: string): OrganisationSettings | null {
  const read = readRegularFile(path, { follow: false, maxBytes: 64 * 1024 });
  if (!read.ok && read.missing) return null;
  const refuse = (why: string) => new ThoughtGateError("CONFIG", `the organisation policy settings ${path} ${why}; until it is fixed every call is refused`);
  if (!read.ok) throw refuse(read.problem);
  for (const [what, stat] of [[path, read.stat], [dirname(path), statSync(dirname(path))]] as const) {
    if (stat.uid !== 0 && stat.uid !== (process.getuid?.() ?? 0)) throw refuse(`is not trusted: ${what} belongs to uid ${stat.uid}, not root`);
    if ((stat.mode & 0o022) !== 0) throw refuse(`is not trusted: ${what} can be written by others than its owner (mode ${(stat.mode & 0o777).toString(8)})`);
  }
  let parsed: unknown;
  try {
    parsed = Bun.YAML.parse(read.bytes.toString("utf8"));
  } catch (error) {
    throw refuse(`does not parse (${messageOf(error)})`);
  }
  const checked = v.safeParse(organisationSchema, parsed);
  if (!checked.success) throw refuse(`is invalid: ${v.getDotPath(checked.issues[0]) ?? "(file)"}: ${checked.issues[0].message}`);
  const { url, public_key, max_stale, refresh } = checked.output;
  return { url, publicKey: public_key, maxStaleMs: max_stale, refreshMs: refresh, from: path };
}

/** What the organisation's policy is now: a verified bundle to decide with, or refused (every call fails closed). */
export type OrganisationState =
  | { kind: "ok"; version: number; issuedAt: string; fetchedAt: number; config: ThoughtGateConfig; note: string | null }
  | { kind: "refused"; reason: string };

type Meta = { etag: string | null; fetched_at: number };

/** One source per URL and key in a process: every reload of the policy reads the same state. */
const sources = new Map<string, OrganisationPolicy>();

export class OrganisationPolicy {
  state: OrganisationState = { kind: "refused", reason: "not fetched yet" };
  private cached: { bundle: PolicyBundle; meta: Meta } | null = null;
  private timer: ReturnType<typeof setInterval> | null = null;
  private readonly listeners = new Set<() => void>();
  private refreshing: Promise<void> | null = null;

  private constructor(
    readonly settings: OrganisationSettings,
    private readonly key: CryptoKey,
    private readonly dir: string,
    private readonly env: NodeJS.ProcessEnv,
  ) {}

  /** The source for these settings, opened (the cache read, the URL asked once) the first time. */
  static async shared(settings: OrganisationSettings, env: NodeJS.ProcessEnv = process.env): Promise<OrganisationPolicy> {
    const id = `${settings.url}\n${settings.publicKey}`;
    let source = sources.get(id);
    if (!source) {
      const key = await importPublicKey(settings.publicKey);
      source = new OrganisationPolicy(settings, key, join(stateDir(env), "organisation", sha256Hex(settings.url).slice(0, 16)), env);
      await source.readCache();
      await source.refresh();
      sources.set(id, source);
    }
    return source;
  }

  /** In words, for banners, `policy status` and the explanation. */
  get label(): string {
    const { state } = this;
    if (state.kind === "refused") return `organisation policy ${this.settings.url}: refused: ${state.reason}`;
    return `organisation policy ${this.settings.url} version ${state.version}${state.note ? ` (${state.note})` : ""}`;
  }

  /** Fetch again every `refresh`, and call `onChange` when what decides changed (a new version, refused, or back). */
  watch(onChange: () => void): void {
    this.listeners.add(onChange);
    if (this.timer) return;
    this.timer = setInterval(() => void this.refresh(), this.settings.refreshMs);
    this.timer.unref();
  }

  /** Stop telling `onChange`; with no one left to tell, stop fetching. */
  unwatch(onChange: () => void): void {
    this.listeners.delete(onChange);
    if (this.listeners.size > 0 || !this.timer) return;
    clearInterval(this.timer);
    this.timer = null;
  }

  /** Ask the URL now (`policy pull`, the background refresh); the state says how it went. */
  refresh(): Promise<void> {
    this.refreshing ??= this.fetchAndVerify().finally(() => {
      this.refreshing = null;
    });
    return this.refreshing;
  }

  private async fetchAndVerify(): Promise<void> {
    const before = signature(this.state);
    this.state = await this.attempt();
    if (this.state.kind === "refused") log.error(this.label);
    if (signature(this.state) !== before) for (const listener of this.listeners) listener();
  }

  private async attempt(): Promise<OrganisationState> {
    let response: Response;
    try {
      response = await this.fetchSameOrigin();
    } catch (error) {
      if (error instanceof Refusal) return { kind: "refused", reason: error.message };
      return this.unreachable(messageOf(error));
    }
    if (response.status === 304 && this.cached) {
      this.cached.meta = { ...this.cached.meta, fetched_at: Date.now() };
      this.writeMeta(this.cached.meta);
      return this.usable(this.cached.bundle, null);
    }
    if (response.status !== 200) return this.unreachable(`HTTP ${response.status}`);
    const text = await boundedText(response);
    if (text === null) return { kind: "refused", reason: `the bundle is larger than ${MAX_BUNDLE_BYTES / 1024 / 1024} MiB` };
    let bundle: PolicyBundle;
    try {
      bundle = parseBundle(text);
    } catch (error) {
      return { kind: "refused", reason: messageOf(error) };
    }
    if (!(await verifyBundle(bundle, this.key))) return { kind: "refused", reason: "the bundle's signature does not verify with the organisation's public key (tampered, or signed with another key)" };
    const cached = this.cached?.bundle;
    if (cached && bundle.version < cached.version) return { kind: "refused", reason: `the URL serves version ${bundle.version}, older than version ${cached.version} already seen (a rollback)` };
    if (cached && bundle.version === cached.version && bundle.signature !== cached.signature) return { kind: "refused", reason: `the URL serves version ${bundle.version} again with other contents` };
    const state = this.usable(bundle, null);
    if (state.kind === "ok") this.writeCache(bundle, { etag: response.headers.get("etag"), fetched_at: Date.now() });
    return state.kind === "ok" ? { ...state, fetchedAt: Date.now() } : state;
  }

  /** The URL could not be asked: the cached copy while it is recent enough, else refused. */
  private unreachable(why: string): OrganisationState {
    if (!this.cached) return { kind: "refused", reason: `cannot reach ${this.settings.url} (${why}) and there is no cached copy` };
    const age = Date.now() - this.cached.meta.fetched_at;
    if (age > this.settings.maxStaleMs) {
      return { kind: "refused", reason: `cannot reach ${this.settings.url} (${why}) and the cached copy was last confirmed ${formatDuration(age)} ago, more than max_stale ${formatDuration(this.settings.maxStaleMs)}` };
    }
    return this.usable(this.cached.bundle, `offline: the cached copy, confirmed ${formatDuration(age)} ago (${why})`);
  }

  /** A verified bundle's policy, loaded: its files written where its Cedar paths point. */
  private usable(bundle: PolicyBundle, note: string | null): OrganisationState {
    const fetchedAt = this.cached?.bundle.signature === bundle.signature ? this.cached.meta.fetched_at : Date.now();
    try {
      const config = this.load(bundle);
      return { kind: "ok", version: bundle.version, issuedAt: bundle.issued_at, fetchedAt, config, note };
    } catch (error) {
      return { kind: "refused", reason: `version ${bundle.version} does not load: ${messageOf(error)}` };
    }
  }

  private load(bundle: PolicyBundle): ThoughtGateConfig {
    const parsed = parseConfig(bundle.files["thoughtgate.yaml"] as string, this.env, "user");
    if (!parsed.ok) throw new ThoughtGateError("CONFIG", parsed.problems.map((p) => `${p.path}: ${p.message}`).join("; "));
    const config = parsed.config;
    if (config.policy) throw new ThoughtGateError("CONFIG", "policy: an organisation's policy cannot name another one");
    if (!config.cedar) return config;
    const files = join(this.dir, `v${bundle.version}`);
    const inBundle = (path: string) => {
      const name = normalize(path);
      if (isAbsolute(name) || name.startsWith("..") || !(name in bundle.files)) throw new ThoughtGateError("CONFIG", `cedar: ${path} is not a file of the bundle`);
      const target = join(files, name);
      mkdirSync(dirname(target), { recursive: true, mode: 0o700 });
      writeFileAtomic(target, bundle.files[name] as string);
      return target;
    };
    return { ...config, cedar: { policies: config.cedar.policies.map(inBundle), ...(config.cedar.schema ? { schema: inBundle(config.cedar.schema) } : {}) } };
  }

  /** The copy kept from the last verified fetch; one that no longer verifies is not used. */
  private async readCache(): Promise<void> {
    const bundleFile = join(this.dir, "bundle.json");
    if (!existsSync(bundleFile)) return;
    try {
      const bundle = parseBundle(readFileSync(bundleFile, "utf8"));
      if (!(await verifyBundle(bundle, this.key))) throw new Error("its signature does not verify");
      const meta = JSON.parse(readFileSync(join(this.dir, "meta.json"), "utf8")) as Meta;
      this.cached = { bundle, meta: { etag: typeof meta.etag === "string" ? meta.etag : null, fetched_at: Number(meta.fetched_at) || 0 } };
    } catch (error) {
      log.warn(`the cached organisation policy ${bundleFile} is not used: ${messageOf(error)}`);
    }
  }

  private writeCache(bundle: PolicyBundle, meta: Meta): void {
    mkdirSync(this.dir, { recursive: true, mode: 0o700 });
    writeFileAtomic(join(this.dir, "bundle.json"), JSON.stringify(bundle));
    this.writeMeta(meta);
    this.cached = { bundle, meta };
  }

  private writeMeta(meta: Meta): void {
    mkdirSync(this.dir, { recursive: true, mode: 0o700 });
    writeFileAtomic(join(this.dir, "meta.json"), JSON.stringify(meta));
  }

  /** GET the URL, following redirects within its origin only; another origin is a refusal. */
  private async fetchSameOrigin(): Promise<Response> {
    const origin = new URL(this.settings.url).origin;
    let url = this.settings.url;
    for (let hop = 0; hop <= MAX_REDIRECTS; hop++) {
      const headers: Record<string, string> = { accept: "application/json" };
      if (this.cached?.meta.etag) headers["if-none-match"] = this.cached.meta.etag;
      const response = await fetch(url, { redirect: "manual", headers, signal: AbortSignal.timeout(FETCH_TIMEOUT_MS) });
      if (response.status < 300 || response.status >= 400 || response.status === 304) return response;
      const location = response.headers.get("location");
      if (!location) return response;
      const next = new URL(location, url);
      if (next.origin !== origin) throw new Refusal(`${url} redirects to another origin (${next.origin})`);
      url = next.href;
    }
    throw new Refusal(`more than ${MAX_REDIRECTS} redirects from ${this.settings.url}`);
  }
}

class Refusal extends Error {}

/** What decides, in one string: a change of it is a change listeners hear of. */
function signature(state: OrganisationState): string {
  return state.kind === "ok" ? `ok ${state.version}` : `refused ${state.reason}`;
}

/** The body, or null past the bundle's size limit. */
async function boundedText(response: Response): Promise<string | null> {
  const reader = response.body?.getReader();
  if (!reader) return "";
  const chunks: Uint8Array[] = [];
  let size = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    size += value.byteLength;
    if (size > MAX_BUNDLE_BYTES) {
      await reader.cancel();
      return null;
    }
    chunks.push(value);
  }
  return Buffer.concat(chunks).toString("utf8");
}
