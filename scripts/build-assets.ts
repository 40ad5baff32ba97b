/**
 * Builds the static assets the server serves (src/http/static-assets.ts) into dist/assets/:
 * - the demo page, src/demo/index.html, bundled by Bun for the browser and minified: the page
 *   at `/`, its script and styles under `/assets/` with content-hashed names;
 * - the docs UI: a page at `/openapi` that loads the Scalar API reference bundle from the npm
 *   package, served as `/openapi/assets/scalar-<hash>.js` (what the page loads) and
 *   `/openapi/assets/scalar.js` (a stable name);
 * - gzip, brotli and zstd variants of every file of at least 1 KiB, at the highest levels
 *   (done once per change, not per request);
 * - `manifest.json` (paths, types, cache policy, hashes, variants, and the inputs with their
 *   hashes, to tell when a build is stale) and `embed.ts`, a module importing every file
 *   `with { type: "file" }` so that `bun build --compile` embeds them.
 *
 * Skips the work when the build is fresh, and reuses the compressed variants of files whose
 * content did not change (brotli at quality 11 over the 4 MB Scalar bundle takes about 10 s).
 * Every file is written to a temporary name and renamed, so a concurrent reader or builder
 * never sees half a file.
 *
 * Run: `bun scripts/build-assets.ts [--force]` (npm: prestart, pretest, and `npm run build`).
 */
import { mkdirSync, readFileSync, readdirSync, renameSync, rmSync, statSync, writeFileSync } from "node:fs";
import { basename, join, relative, resolve } from "node:path";
import { brotliCompressSync, constants as zlib, gzipSync } from "node:zlib";
import { DEMO_PATH } from "../src/demo/plugin.ts";
import { COMPRESS_MIN_BYTES } from "../src/service/compress.ts";
import {
  ASSETS_DIR,
  type AssetGroup,
  type AssetManifest,
  EMBED_FILE,
  ENCODING_SUFFIX,
  type Encoding,
  MANIFEST_FILE,
  MANIFEST_VERSION,
  type ManifestAsset,
  contentHash,
  staleAssetsReason,
} from "../src/http/static-assets.ts";

/** The project root. */
const ROOT = resolve(import.meta.dir, "..");

/** The demo page's entry, relative to the root. */
const DEMO_ENTRY = "src/demo/index.html";

/** URL prefix of the demo bundle's files. */
const DEMO_PUBLIC_PATH = "/assets/";

/** The Scalar API reference browser bundle (one self-contained script), relative to the root. */
const SCALAR_BUNDLE = "node_modules/@scalar/api-reference/dist/browser/standalone.js";

/** URL prefix of the docs UI's files. */
const DOCS_PUBLIC_PATH = "/openapi/assets/";

/** Where the docs UI reads the OpenAPI document (src/http/app.ts `OPENAPI_JSON`). */
const OPENAPI_JSON_PATH = "/openapi/json";

/** Cache-Control of files whose name holds their content hash: a new build is a new URL. */
const IMMUTABLE = "public, max-age=31536000, immutable";

/** Cache-Control of pages and stable names: kept, but revalidated (ETag) on every use. */
const REVALIDATE = "no-cache";

/**
 * zstd level: 19 is the highest without "ultra" settings, whose windows can exceed the 8 MiB
 * that browsers accept for the zstd content coding (RFC 9659).
 */
const ZSTD_LEVEL = 19;

/** Content types by file extension. */
const CONTENT_TYPES: Record<string, string> = {
  ".html": "text/html; charset=utf-8",
  ".js": "text/javascript; charset=utf-8",
  ".css": "text/css; charset=utf-8",
  ".svg": "image/svg+xml",
  ".png": "image/png",
  ".woff2": "font/woff2",
  ".json": "application/json",
};

/** One file to serve, before compression. */
interface PlannedAsset {
  path: string;
  group: AssetGroup;
  /** File name in the assets folder. */
  file: string;
  bytes: Uint8Array;
  cacheControl: string;
}

/** What {@link buildAssets} did. */
export interface AssetBuildReport {
  /** False when the build was fresh and nothing was written. */
  built: boolean;
  /** Why it was (re)built, or why not: "fresh". */
  reason: string;
  /** Files served, variants not counted. */
  assets: number;
  /** Variants compressed in this run (the others were reused). */
  compressed: number;
  ms: number;
}

function contentTypeOf(file: string): string {
  const dot = file.lastIndexOf(".");
  const type = dot < 0 ? undefined : CONTENT_TYPES[file.slice(dot)];
  if (type === undefined) throw new Error(`build-assets: no content type for ${file}`);
  return type;
}

/** Writes a file atomically: to a temporary name beside it, then renamed over it. */
function writeAtomic(path: string, data: string | Uint8Array): void {
  const temporary = `${path}.tmp-${process.pid}`;
  writeFileSync(temporary, data);
  renameSync(temporary, path);
}

/** Escapes a string for an HTML attribute value in single quotes. */
function attribute(value: string): string {
  return value.replace(/&/g, "&amp;").replace(/'/g, "&#39;").replace(/</g, "&lt;");
}

/**
 * The docs UI page: no inline script or style, so the pages' Content-Security-Policy holds.
 * Scalar reads its configuration from the empty `#api-reference` element (an empty script
 * element is never run) and fetches the document from {@link OPENAPI_JSON_PATH}. Its agent is
 * off: on a page served from localhost it would otherwise fetch Scalar's hosted registry, and
 * the page loads nothing from outside this server.
 */
function docsPage(scalarUrl: string): string {
  const configuration = { url: OPENAPI_JSON_PATH, withDefaultFonts: false, hideClientButton: true, telemetry: false, agent: { disabled: true } };
  return `<!doctype html>
<html lang="en">
  <head>
    <meta charset="utf-8" />
    <meta name="viewport" content="width=device-width, initial-scale=1" />
    <title>Users listing service — API reference</title>
    <link rel="icon" href="data:," />
  </head>
  <body>
    <script id="api-reference" data-configuration='${attribute(JSON.stringify(configuration))}'></script>
    <script src="${scalarUrl}"></script>
  </body>
</html>
`;
}

/**
 * Bundles the demo page.
 * @returns its files and the inputs the bundler read (relative to the root)
 * @throws Error with the bundler's messages when bundling fails
 */
async function bundleDemo(root: string): Promise<{ assets: PlannedAsset[]; inputs: string[] }> {
  const result = await Bun.build({
    entrypoints: [join(root, DEMO_ENTRY)],
    root,
    target: "browser",
    minify: true,
    publicPath: DEMO_PUBLIC_PATH,
    metafile: true,
    naming: { entry: "[name]-[hash].[ext]", chunk: "[name]-[hash].[ext]", asset: "[name]-[hash].[ext]" },
  });
  if (!result.success) throw new Error(`bundling ${DEMO_ENTRY} failed:\n${result.logs.join("\n")}`);
  const assets: PlannedAsset[] = [];
  for (const output of result.outputs) {
    const file = basename(output.path);
    const bytes = new Uint8Array(await output.arrayBuffer());
    if (file.endsWith(".html")) assets.push({ path: DEMO_PATH, group: "demo", file: `demo-${file}`, bytes, cacheControl: REVALIDATE });
    else assets.push({ path: `${DEMO_PUBLIC_PATH}${file}`, group: "demo", file, bytes, cacheControl: IMMUTABLE });
  }
  if (!assets.some((a) => a.path === DEMO_PATH)) throw new Error(`bundling ${DEMO_ENTRY} produced no page`);
  const metafile = result.metafile as unknown as string | { inputs: Record<string, unknown> } | undefined;
  const meta = typeof metafile === "string" ? (JSON.parse(metafile) as { inputs: Record<string, unknown> }) : metafile;
  // The metafile's input paths are relative to the working directory.
  const inputs = Object.keys(meta?.inputs ?? {}).map((p) => relative(root, resolve(p)));
  if (inputs.length === 0) throw new Error("the bundler reported no inputs");
  return { assets, inputs };
}

/** The docs UI's files: the Scalar bundle (its source-map comment dropped: the map is not served) and the page. */
function docsAssets(root: string): PlannedAsset[] {
  const source = readFileSync(join(root, SCALAR_BUNDLE), "utf8").replace(/\n\/\/# sourceMappingURL=\S+\s*$/, "\n");
  const bytes = new TextEncoder().encode(source);
  const file = `scalar-${contentHash(bytes).slice(0, 8)}.js`;
  const page = new TextEncoder().encode(docsPage(`${DOCS_PUBLIC_PATH}${file}`));
  return [
    { path: `${DOCS_PUBLIC_PATH}${file}`, group: "docs", file, bytes, cacheControl: IMMUTABLE },
    { path: `${DOCS_PUBLIC_PATH}scalar.js`, group: "docs", file, bytes, cacheControl: REVALIDATE },
    { path: "/openapi", group: "docs", file: `docs-${contentHash(page).slice(0, 8)}.html`, bytes: page, cacheControl: REVALIDATE },
  ];
}

/** Compresses `bytes` with one coding at its highest level. */
function compress(bytes: Uint8Array, encoding: Encoding): Uint8Array {
  switch (encoding) {
    case "gzip":
      return gzipSync(bytes, { level: 9 });
    case "br":
      return brotliCompressSync(bytes, {
        params: { [zlib.BROTLI_PARAM_QUALITY]: zlib.BROTLI_MAX_QUALITY, [zlib.BROTLI_PARAM_SIZE_HINT]: bytes.length },
      });
    case "zstd":
      return Bun.zstdCompressSync(bytes, { level: ZSTD_LEVEL });
  }
}

/** The manifest in `dir`, or null. */
function readManifest(dir: string): AssetManifest | null {
  try {
    return JSON.parse(readFileSync(join(dir, MANIFEST_FILE), "utf8")) as AssetManifest;
  } catch {
    return null;
  }
}

/** The generated module: imports every file so that the compiler embeds it. */
function embedModule(files: string[]): string {
  const lines = [
    "// Generated by scripts/build-assets.ts: every built asset, imported as a file so that",
    "// `bun build --compile` embeds it. Do not edit; it is rewritten on every build.",
    'import manifest from "./manifest.json";',
  ];
  files.forEach((file, i) => lines.push(`import f${i} from ${JSON.stringify(`./${file}`)} with { type: "file" };`));
  lines.push("", "export { manifest };", "", "/** File name → path to read it from. */", "export const files: Record<string, string> = {");
  files.forEach((file, i) => lines.push(`  ${JSON.stringify(file)}: f${i},`));
  lines.push("};", "");
  return lines.join("\n");
}

/**
 * Builds the assets into `root`/dist/assets when they are missing or stale (or always, with
 * `force`), and deletes the files of earlier builds.
 * @throws Error when bundling fails or a file cannot be written
 */
export async function buildAssets(root = ROOT, force = false): Promise<AssetBuildReport> {
  const started = performance.now();
  const stale = force ? "forced" : staleAssetsReason(root);
  if (stale === null) return { built: false, reason: "fresh", assets: 0, compressed: 0, ms: performance.now() - started };
  const dir = join(root, ASSETS_DIR);
  mkdirSync(dir, { recursive: true });
  const previous = readManifest(dir);

  const demo = await bundleDemo(root);
  const planned = [...demo.assets, ...docsAssets(root)];
  const inputFiles = [...new Set([...demo.inputs, SCALAR_BUNDLE, relative(root, import.meta.path)])].sort();
  const inputs: Record<string, string> = {};
  for (const input of inputFiles) inputs[input] = contentHash(readFileSync(join(root, input)));

  let compressed = 0;
  const written = new Map<string, ManifestAsset>();
  const assets: ManifestAsset[] = [];
  for (const plan of planned) {
    const hash = contentHash(plan.bytes);
    const contentType = contentTypeOf(plan.file);
    let done = written.get(plan.file);
    if (done === undefined) {
      writeAtomic(join(dir, plan.file), plan.bytes);
      const variants: ManifestAsset["variants"] = {};
      if (plan.bytes.length >= COMPRESS_MIN_BYTES) {
        const before = previous?.assets.find((a) => a.file === plan.file && a.hash === hash);
        for (const encoding of ["gzip", "br", "zstd"] as const) {
          const name = `${plan.file}${ENCODING_SUFFIX[encoding]}`;
          const reusable = before?.variants[encoding];
          if (reusable !== undefined && readableSize(join(dir, name)) === reusable.size) {
            variants[encoding] = reusable;
            continue;
          }
          const packed = compress(plan.bytes, encoding);
          compressed++;
          // A variant that saves nothing is not worth a separate representation.
          if (packed.length >= plan.bytes.length) continue;
          writeAtomic(join(dir, name), packed);
          variants[encoding] = { file: name, size: packed.length };
        }
      }
      done = { path: "", group: plan.group, file: plan.file, contentType, cacheControl: "", html: false, size: plan.bytes.length, hash, variants };
      written.set(plan.file, done);
    }
    assets.push({ ...done, path: plan.path, group: plan.group, cacheControl: plan.cacheControl, html: contentType.startsWith("text/html") });
  }

  const manifest: AssetManifest = { version: MANIFEST_VERSION, bun: Bun.version, inputs, assets };
  const files = [...written.values()].flatMap((a) => [a.file, ...Object.values(a.variants).map((v) => v.file)]);
  // embed.ts first: a reader takes the manifest as the sign of a complete build.
  writeAtomic(join(dir, EMBED_FILE), embedModule(files));
  writeAtomic(join(dir, MANIFEST_FILE), `${JSON.stringify(manifest, null, 2)}\n`);
  const keep = new Set([...files, EMBED_FILE, MANIFEST_FILE]);
  for (const name of readdirSync(dir)) {
    if (!keep.has(name) && !name.includes(".tmp-")) rmSync(join(dir, name), { force: true });
  }
  return { built: true, reason: stale, assets: assets.length, compressed, ms: performance.now() - started };
}

/** Size of a file in bytes, or -1 when it cannot be read. */
function readableSize(path: string): number {
  try {
    return statSync(path).size;
  } catch {
    return -1;
  }
}

if (import.meta.main) {
  const report = await buildAssets(ROOT, process.argv.includes("--force"));
  process.stderr.write(
    report.built
      ? `static assets built in ${ASSETS_DIR} (${report.reason}): ${report.assets} assets, ${report.compressed} variants compressed, ${Math.round(report.ms)} ms\n`
      : `static assets in ${ASSETS_DIR} are up to date\n`,
  );
}
