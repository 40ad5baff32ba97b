/**
 * `npm run build`: compiles the CLI, the server and its assets into one executable,
 * dist/users-listing. The static assets (the demo page, the docs UI) are built first when
 * missing or stale (scripts/build-assets.ts); the compiler embeds them through the generated
 * dist/assets/embed.ts. Only whitespace and syntax are minified (identifiers keep their names,
 * so stack traces and logged errors stay readable). The column worker (src/store/column-worker.ts) and the I/O thread
 * (src/io/worker.ts) are entry points too, as Bun requires for workers in a compiled executable.
 */
import { mkdirSync } from "node:fs";
import { join } from "node:path";
import { buildAssets } from "./build-assets.ts";

/** Path of the compiled binary, relative to the project root. */
export const BINARY = join("dist", "users-listing");

/** The entry points compiled in: the CLI, and each worker's script (Bun needs them listed). */
export const ENTRY_POINTS = ["src/cli.ts", "src/store/column-worker.ts", "src/io/worker.ts", "src/publish/compact-worker.ts"];

/**
 * Builds the static assets when stale, runs `bun build --compile` and returns the binary's path.
 * @throws Error with bun's output when the build fails, or the asset build's error.
 */
export async function buildBinary(root = join(import.meta.dir, "..")): Promise<string> {
  await buildAssets(root);
  mkdirSync(join(root, "dist"), { recursive: true });
  const outfile = join(root, BINARY);
  const proc = Bun.spawn(
    [process.execPath, "build", "--compile", "--minify-whitespace", "--minify-syntax", "--sourcemap", ...ENTRY_POINTS, "--outfile", outfile],
    { cwd: root, stdout: "pipe", stderr: "pipe" },
  );
  const [out, err, code] = await Promise.all([new Response(proc.stdout).text(), new Response(proc.stderr).text(), proc.exited]);
  if (code !== 0) throw new Error(`bun build --compile failed (${code}):\n${out}\n${err}`);
  return outfile;
}

if (import.meta.main) {
  const path = await buildBinary();
  process.stderr.write(`built ${path}\n`);
}
