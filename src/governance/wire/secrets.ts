import { createHash, randomBytes, timingSafeEqual } from "node:crypto";

/**
 * The governance service's credentials (docs/governance.md, Credentials): the session secret shims
 * hold, the page key and CLI key people hold, and each elicitation task's relay token. All are 32
 * random bytes, hex, and are compared only through their SHA-256.
 */
export function newSecret(): string {
  return randomBytes(32).toString("hex");
}

export function secretDigest(secret: string): Buffer {
  return createHash("sha256").update(secret).digest();
}

/** Constant time: both sides are hashed to the same length first, so neither length nor content leaks. */
export function secretMatches(given: string, expected: Buffer): boolean {
  return timingSafeEqual(secretDigest(given), expected);
}
