/**
 * `production` enforces every decision; `development` logs what it would have blocked
 * (`WOULD_BLOCK`, `WOULD_REJECT`, `WOULD_DROP`) and forwards.
 */
export const PROFILES = ["production", "development"] as const;
export type Profile = (typeof PROFILES)[number];

export function isProfile(value: unknown): value is Profile {
  return value === "production" || value === "development";
}
