import * as v from "valibot";
import { canonicalJson } from "./canonical-json.ts";
import { ThoughtGateError } from "./errors.ts";

/**
 * An organisation's policy as it travels (docs/team.md, "The organisation's policy"): the files of
 * a policy directory (its `thoughtgate.yaml` and the Cedar files it names), a version that only
 * ever grows, when it was signed, and an Ed25519 signature over the canonical JSON of all of that.
 * Signed with `thoughtgate policy sign`, verified with Web Crypto before anything in it is read.
 */
const BUNDLE_FORMAT = "thoughtgate-policy-bundle";

/** The largest bundle read: a policy and its Cedar files, each at most 1 MiB, in any number that fits. */
export const MAX_BUNDLE_BYTES = 4 * 1024 * 1024;

/** A file's name in a bundle: a relative path of plain parts (no `..`, no absolute path, no hidden trick). */
const FILE_NAME = /^(?!.*(^|\/)\.\.?(\/|$))[A-Za-z0-9._-]+(\/[A-Za-z0-9._-]+)*$/;

const bundleSchema = v.strictObject({
  format: v.literal(BUNDLE_FORMAT),
  version: v.pipe(v.number(), v.safeInteger(), v.minValue(1)),
  issued_at: v.pipe(v.string(), v.isoTimestamp()),
  files: v.pipe(
    v.record(v.pipe(v.string(), v.regex(FILE_NAME, "a file name in a bundle is a relative path of letters, digits, . _ - and /")), v.string()),
    v.check((files) => "thoughtgate.yaml" in files, "a bundle holds thoughtgate.yaml"),
  ),
  signature: v.pipe(v.string(), v.base64()),
});
export type PolicyBundle = v.InferOutput<typeof bundleSchema>;

/** The bytes the signature is over: everything in the bundle but the signature, as canonical JSON. */
function signedBytes(bundle: Omit<PolicyBundle, "signature">): Uint8Array {
  return new TextEncoder().encode(canonicalJson({ format: bundle.format, version: bundle.version, issued_at: bundle.issued_at, files: bundle.files }));
}

/** Parse a bundle's text; a CONFIG error says in one line what is wrong with it. */
export function parseBundle(text: string): PolicyBundle {
  let raw: unknown;
  try {
    raw = JSON.parse(text);
  } catch {
    throw new ThoughtGateError("CONFIG", "the policy bundle is not JSON");
  }
  const parsed = v.safeParse(bundleSchema, raw);
  if (!parsed.success) {
    const issue = parsed.issues[0];
    const at = issue?.path?.map((p) => String((p as { key: unknown }).key)).join(".") ?? "";
    throw new ThoughtGateError("CONFIG", `the policy bundle is not one ThoughtGate reads (${at ? `${at}: ` : ""}${issue?.message ?? "invalid"})`);
  }
  return parsed.output;
}

/** A public key as written in a policy (`ed25519:` and the 32 bytes in base64), ready to verify with. */
export async function importPublicKey(text: string): Promise<CryptoKey> {
  const match = /^ed25519:([A-Za-z0-9+/]{43}=)$/.exec(text.trim());
  if (!match) throw new ThoughtGateError("CONFIG", "expected an Ed25519 public key as `ed25519:` and 44 base64 characters (what `thoughtgate policy keygen` prints)");
  return crypto.subtle.importKey("raw", Buffer.from(match[1] as string, "base64"), { name: "Ed25519" }, false, ["verify"]);
}

/** Whether the bundle's signature is the key's over its contents. */
export async function verifyBundle(bundle: PolicyBundle, key: CryptoKey): Promise<boolean> {
  return crypto.subtle.verify("Ed25519", key, Buffer.from(bundle.signature, "base64"), signedBytes(bundle));
}

/** A new key pair: the private key as PKCS#8 PEM (keep it secret), the public key as a policy writes it. */
export async function generateKeyPair(): Promise<{ privatePem: string; publicKey: string }> {
  const pair = (await crypto.subtle.generateKey({ name: "Ed25519" }, true, ["sign", "verify"])) as CryptoKeyPair;
  const pkcs8 = Buffer.from(await crypto.subtle.exportKey("pkcs8", pair.privateKey)).toString("base64");
  const raw = Buffer.from(await crypto.subtle.exportKey("raw", pair.publicKey)).toString("base64");
  const lines = pkcs8.match(/.{1,64}/g) ?? [];
  return { privatePem: `-----BEGIN PRIVATE KEY-----\n${lines.join("\n")}\n-----END PRIVATE KEY-----\n`, publicKey: `ed25519:${raw}` };
}

/** Sign these files as this version with a PKCS#8 PEM private key (`policy keygen`'s). */
export async function signBundle(files: Record<string, string>, version: number, privatePem: string, now = new Date()): Promise<PolicyBundle> {
  const body = /-----BEGIN PRIVATE KEY-----([\s\S]*?)-----END PRIVATE KEY-----/.exec(privatePem)?.[1];
  if (!body) throw new ThoughtGateError("CONFIG", "expected a private key in PEM (-----BEGIN PRIVATE KEY-----), as `thoughtgate policy keygen` writes it");
  let key: CryptoKey;
  try {
    key = await crypto.subtle.importKey("pkcs8", Buffer.from(body.replace(/\s+/g, ""), "base64"), { name: "Ed25519" }, false, ["sign"]);
  } catch {
    throw new ThoughtGateError("CONFIG", "the private key is not an Ed25519 key");
  }
  const unsigned = { format: BUNDLE_FORMAT, version, issued_at: now.toISOString(), files } as const;
  const signature = Buffer.from(await crypto.subtle.sign("Ed25519", key, signedBytes(unsigned))).toString("base64");
  return parseBundle(JSON.stringify({ ...unsigned, signature }));
}
