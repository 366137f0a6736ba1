/**
 * Compile `thoughtgate` into standalone binaries. `bun run build` builds the host target into
 * dist/thoughtgate; the full cross-platform table (issue 5) builds on the same `compileTarget`.
 */
import pkg from "./package.json" with { type: "json" };

export type Target = { bunTarget: Bun.Build.CompileTarget | "host"; outfile: string };

const HOST_TARGET: Target = { bunTarget: "host", outfile: "dist/thoughtgate" };

export async function compileTarget(target: Target, version = pkg.version): Promise<string> {
  const targetName = target.bunTarget === "host" ? `bun-${process.platform}-${process.arch}` : target.bunTarget;
  const result = await Bun.build({
    entrypoints: ["./src/cli.ts"],
    minify: true,
    sourcemap: "none",
    compile: {
      ...(target.bunTarget === "host" ? {} : { target: target.bunTarget }),
      outfile: target.outfile,
      // A user's .env or bunfig.toml next to where they run us must not change the binary's behaviour.
      autoloadDotenv: false,
      autoloadBunfig: false,
    },
    define: {
      THOUGHTGATE_VERSION: JSON.stringify(version),
      THOUGHTGATE_TARGET: JSON.stringify(targetName),
    },
  });
  if (!result.success) {
    for (const message of result.logs) console.error(message);
    throw new Error(`build failed for ${targetName}`);
  }
  return target.outfile;
}

if (import.meta.main) {
  const started = performance.now();
  const outfile = await compileTarget(HOST_TARGET);
  console.error(`built ${outfile} in ${Math.round(performance.now() - started)} ms`);
}
