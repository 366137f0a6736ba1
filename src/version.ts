// Replaced at build time by `build.ts` (`define`); the fallbacks apply when run from source.
declare const THOUGHTGATE_VERSION: string | undefined;
declare const THOUGHTGATE_TARGET: string | undefined;

export const VERSION: string = typeof THOUGHTGATE_VERSION === "string" ? THOUGHTGATE_VERSION : "0.0.0-dev";
export const TARGET: string =
  typeof THOUGHTGATE_TARGET === "string" ? THOUGHTGATE_TARGET : `bun-${process.platform}-${process.arch} (source)`;
