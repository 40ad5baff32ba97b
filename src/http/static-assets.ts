/**
 * Static assets: the demo page with its bundle, and the docs UI (the /openapi page and the
 * Scalar API reference bundle). scripts/build-assets.ts builds them once, ahead of serving, into
 * {@link ASSETS_DIR} — bundled, content-hashed, and the files of 1 KiB or more precompressed as
 * gzip, brotli and zstd at the highest levels — with a manifest and a generated module (`embed.ts`) that imports every
 * file `with { type: "file" }`, so that `bun build --compile` embeds them in the binary.
 *
 * This module serves them: the variant the request's Accept-Encoding prefers, with
 * `Vary: Accept-Encoding`, an ETag per variant (304 on If-None-Match), Cache-Control (hashed
 * names are immutable for a year; pages and unhashed names revalidate every time), HEAD, and
 * security headers on the pages.
 *
 * Run from a source tree, the first use checks the build against its inputs (the content of
 * every file the bundles were made from, and Bun's version) and rebuilds it, in a child
 * process, when it is missing or stale. A compiled binary serves what was embedded at compile
 * time.
 */
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import type { Coding } from "../service/compress.ts";
import type { Plugin, Route } from "./routes.ts";

/** Folder of the built assets, relative to the project root (inside dist/, which git ignores). */
export const ASSETS_DIR = join("dist", "assets");

/** File name of the manifest in {@link ASSETS_DIR}. */
export const MANIFEST_FILE = "manifest.json";

/** File name of the generated module in {@link ASSETS_DIR} that imports every asset file. */
export const EMBED_FILE = "embed.ts";

/** Version of the manifest format; a manifest of another version is rebuilt. */
export const MANIFEST_VERSION = 1;

/** A content coding a precompressed variant is stored in (the `Content-Encoding` token). */
export type Encoding = Coding;

/**
 * Content codings in order of preference when the client accepts several equally: brotli
 * makes the smallest files of the three here, zstd the next.
 */
export const ENCODINGS: readonly Encoding[] = ["br", "zstd", "gzip"];

/** File name suffix of each precompressed variant. */
export const ENCODING_SUFFIX: Record<Encoding, string> = { br: ".br", zstd: ".zst", gzip: ".gz" };

/** Which plugin serves an asset: the demo page (`serve --no-demo` omits it) or the docs UI. */
export type AssetGroup = "demo" | "docs";

/** One served asset in the manifest. */
export interface ManifestAsset {
  /** URL path, e.g. `/`, `/assets/index-3fk2a9x1.js`, `/openapi/assets/scalar.js`. */
  path: string;
  group: AssetGroup;
  /** File name in {@link ASSETS_DIR}; several paths may share one file. */
  file: string;
  /** The `Content-Type` header value. */
  contentType: string;
  /** The `Cache-Control` header value. */
  cacheControl: string;
  /** True for a page: it gets {@link HTML_SECURITY_HEADERS}. */
  html: boolean;
  /** Size of the file, in bytes. */
  size: number;
  /** Hash of the file's content (hex); the ETag of the identity variant is `"<hash>"`. */
  hash: string;
  /** Precompressed variants: file name in {@link ASSETS_DIR} and size in bytes. */
  variants: Partial<Record<Encoding, { file: string; size: number }>>;
}

/** The build's manifest (`manifest.json`), written by scripts/build-assets.ts. */
export interface AssetManifest {
  version: number;
  /** `Bun.version` of the build: another bundler version may bundle differently. */
  bun: string;
  /** Every input of the build, path relative to the project root → hash of its content (hex). */
  inputs: Record<string, string>;
  assets: ManifestAsset[];
}

/** What the generated `embed.ts` exports. */
interface AssetEmbed {
  manifest: AssetManifest;
  /** File name in {@link ASSETS_DIR} → path to read it from (inside the binary when compiled). */
  files: Record<string, string>;
}

/**
 * Content-Security-Policy of the pages: everything from the page's own origin only, no inline
 * or evaluated script, never framed. Styles may be inline because both pages' libraries inject
 * `<style>` elements at run time (AG Grid's theming API, Scalar's components); images and fonts
 * may be `data:` URIs (AG Grid's icons, the pages' empty favicon).
 */
export const CONTENT_SECURITY_POLICY = [
  "default-src 'self'",
  "script-src 'self'",
  "style-src 'self' 'unsafe-inline'",
  "img-src 'self' data:",
  "font-src 'self' data:",
  "connect-src 'self'",
  "object-src 'none'",
  "base-uri 'none'",
  "form-action 'self'",
  "frame-ancestors 'none'",
].join("; ");

/** Headers of every HTML page: the CSP above, no MIME sniffing, no Referer sent elsewhere. */
export const HTML_SECURITY_HEADERS: Readonly<Record<string, string>> = {
  "content-security-policy": CONTENT_SECURITY_POLICY,
  "x-content-type-options": "nosniff",
  "referrer-policy": "no-referrer",
};

/** Hash of a file's content as the build and the freshness check compute it: 64-bit wyhash, hex. */
export function contentHash(bytes: Uint8Array): string {
  return Bun.hash(bytes).toString(16).padStart(16, "0");
}

/**
 * Why the build in `root`/{@link ASSETS_DIR} cannot be served as it is, or null when it can:
 * the manifest is missing or of another format or Bun version, an input's content changed or
 * an input is gone, or an output file is missing.
 * @param root the project root (a source tree)
 * @returns a short reason, e.g. `"src/demo/client.ts changed"`, or null
 */
export function staleAssetsReason(root: string): string | null {
  const dir = join(root, ASSETS_DIR);
  let manifest: AssetManifest;
  try {
    manifest = JSON.parse(readFileSync(join(dir, MANIFEST_FILE), "utf8")) as AssetManifest;
  } catch {
    return "no manifest";
  }
  if (manifest.version !== MANIFEST_VERSION) return `manifest version ${manifest.version}`;
  if (manifest.bun !== Bun.version) return `built by Bun ${manifest.bun}`;
  if (!existsSync(join(dir, EMBED_FILE))) return `${EMBED_FILE} is missing`;
  for (const [input, hash] of Object.entries(manifest.inputs)) {
    let bytes: Uint8Array;
    try {
      bytes = readFileSync(join(root, input));
    } catch {
      return `${input} is gone`;
    }
    if (contentHash(bytes) !== hash) return `${input} changed`;
  }
  for (const asset of manifest.assets) {
    for (const file of [asset.file, ...Object.values(asset.variants).map((v) => v.file)]) {
      if (!existsSync(join(dir, file))) return `${file} is missing`;
    }
  }
  return null;
}

/** The project root when this module runs from a source tree (the build script beside it); null in a compiled binary. */
function sourceRoot(): string | null {
  const root = join(import.meta.dir, "..", "..");
  return existsSync(join(root, "scripts", "build-assets.ts")) ? root : null;
}

/**
 * Builds the assets of the source tree at `root` when {@link staleAssetsReason} says they are
 * stale, by running scripts/build-assets.ts in a child process (synchronously: the routes are
 * made from the manifest). A fresh build costs about 15 s on two cores (brotli at its highest
 * quality over the Scalar bundle), a rebuild after a change to the demo page under a second.
 * @throws Error with the script's output when the build fails.
 */
export function ensureAssetsBuilt(root: string): void {
  if (staleAssetsReason(root) === null) return;
  const build = Bun.spawnSync([process.execPath, join(root, "scripts", "build-assets.ts")], { cwd: root, stdout: "pipe", stderr: "pipe" });
  if (build.exitCode !== 0) throw new Error(`building the static assets failed (${build.exitCode}):\n${build.stdout}\n${build.stderr}`);
}

/** A variant ready to serve: where to read it and its headers. */
interface ServedVariant {
  /** Path to read the bytes from (on disk, or inside the binary). */
  path: string;
  /** Headers of a 200 (and of HEAD). */
  headers: Record<string, string>;
  /** Headers of a 304: ETag, Cache-Control and Vary. */
  notModified: Record<string, string>;
  /** The quoted ETag. */
  etag: string;
}

/** An asset ready to serve. */
interface ServedAsset {
  path: string;
  group: AssetGroup;
  identity: ServedVariant;
  /** Encodings with a variant, in {@link ENCODINGS} order. */
  encodings: Encoding[];
  variants: Partial<Record<Encoding, ServedVariant>>;
}

/** The loaded assets: their paths, and a function that serves them. */
export interface StaticAssets {
  /** URL paths served, in manifest order. */
  paths(group?: AssetGroup): string[];
  /**
   * Answers a GET or HEAD of an asset's path (the query string is ignored); null for any other
   * method or path, so the caller answers it (404, 405).
   * @param path the asset's URL path when the router already knows it; default: the request's
   */
  serve(request: Request, path?: string): Response | null;
}

/** ETag of a variant: the content hash, plus the coding for a compressed one (each representation its own strong tag). */
function etagOf(hash: string, encoding: Encoding | null): string {
  return encoding === null ? `"${hash}"` : `"${hash}-${encoding}"`;
}

function servedVariant(asset: ManifestAsset, files: Record<string, string>, encoding: Encoding | null): ServedVariant {
  const file = encoding === null ? asset.file : (asset.variants[encoding] as { file: string }).file;
  const path = files[file];
  if (path === undefined) throw new Error(`static assets: ${file} is in the manifest but not embedded`);
  const etag = etagOf(asset.hash, encoding);
  const varies = Object.keys(asset.variants).length > 0;
  const notModified: Record<string, string> = { etag, "cache-control": asset.cacheControl };
  if (varies) notModified.vary = "Accept-Encoding";
  const headers: Record<string, string> = {
    "content-type": asset.contentType,
    ...notModified,
    "x-content-type-options": "nosniff",
    ...(asset.html ? HTML_SECURITY_HEADERS : {}),
  };
  if (encoding !== null) headers["content-encoding"] = encoding;
  return { path, headers, notModified, etag };
}

/**
 * The q-value of each coding in an Accept-Encoding header (RFC 9110 §12.5.3), lower-cased;
 * `x-gzip` counts as `gzip`. A malformed q counts as 0.
 */
function acceptedCodings(header: string): Map<string, number> {
  const weights = new Map<string, number>();
  for (const part of header.split(",")) {
    const semicolon = part.indexOf(";");
    let coding = (semicolon < 0 ? part : part.slice(0, semicolon)).trim().toLowerCase();
    if (coding === "") continue;
    if (coding === "x-gzip") coding = "gzip";
    let q = 1;
    if (semicolon >= 0) {
      const match = /(?:^|;)\s*q\s*=\s*([0-9.]+)/i.exec(part.slice(semicolon));
      q = match === null ? 0 : Math.min(1, Number(match[1]) || 0);
    }
    weights.set(coding, q);
  }
  return weights;
}

/**
 * The content coding to answer with (RFC 9110 §12.5.3): of the `available` ones, the one the
 * Accept-Encoding header weighs highest (ties in `available`'s order), unless the header gives
 * `identity` (or `*`) a higher weight; null for the identity coding (no header, nothing
 * acceptable).
 * @param header the request's Accept-Encoding value, or null
 * @param available codings with a stored variant, in order of preference
 */
export function chooseEncoding(header: string | null, available: readonly Encoding[]): Encoding | null {
  if (header === null || available.length === 0) return null;
  const weights = acceptedCodings(header);
  const any = weights.get("*");
  let best: Encoding | null = null;
  let bestQ = 0;
  for (const encoding of available) {
    const q = weights.get(encoding) ?? any ?? 0;
    if (q > bestQ) {
      best = encoding;
      bestQ = q;
    }
  }
  // Unlisted, the identity coding is acceptable but not preferred: only a listed weight competes.
  const identityQ = weights.get("identity") ?? any ?? 0;
  return best !== null && bestQ >= identityQ ? best : null;
}

/** True when an If-None-Match value lists `etag` or is `*` (weak comparison, RFC 9110 §13.1.2). */
function noneMatch(header: string, etag: string): boolean {
  if (header.trim() === "*") return true;
  for (const item of header.split(",")) {
    const tag = item.trim();
    if ((tag.startsWith("W/") ? tag.slice(2) : tag) === etag) return true;
  }
  return false;
}

/** The response to a GET or HEAD of `asset`. */
function respond(asset: ServedAsset, request: Request): Response {
  const encoding = chooseEncoding(request.headers.get("accept-encoding"), asset.encodings);
  const variant = encoding === null ? asset.identity : (asset.variants[encoding] as ServedVariant);
  const ifNoneMatch = request.headers.get("if-none-match");
  if (ifNoneMatch !== null && noneMatch(ifNoneMatch, variant.etag)) return new Response(null, { status: 304, headers: variant.notModified });
  // HEAD gets the same response: Bun's server sends its headers, Content-Length included, without the body.
  return new Response(Bun.file(variant.path), { headers: variant.headers });
}

/** The path of a request URL (`http://host/p?q` → `/p`) without building a URL object. */
function pathOf(url: string): string {
  const start = url.indexOf("/", url.indexOf("//") + 2);
  if (start < 0) return "/";
  let end = url.length;
  const query = url.indexOf("?", start);
  if (query >= 0) end = query;
  const hash = url.indexOf("#", start);
  if (hash >= 0 && hash < end) end = hash;
  return url.slice(start, end);
}

/**
 * Makes {@link StaticAssets} of a manifest and its files.
 * @param files file name → path to read it from
 * @throws Error when a file of the manifest is not in `files`
 */
export function createStaticAssets(manifest: AssetManifest, files: Record<string, string>): StaticAssets {
  const byPath = new Map<string, ServedAsset>();
  for (const asset of manifest.assets) {
    const encodings = ENCODINGS.filter((e) => asset.variants[e] !== undefined);
    const variants: Partial<Record<Encoding, ServedVariant>> = {};
    for (const e of encodings) variants[e] = servedVariant(asset, files, e);
    byPath.set(asset.path, { path: asset.path, group: asset.group, identity: servedVariant(asset, files, null), encodings, variants });
  }
  return {
    paths: (group) => [...byPath.values()].filter((a) => group === undefined || a.group === group).map((a) => a.path),
    serve(request, path = pathOf(request.url)) {
      if (request.method !== "GET" && request.method !== "HEAD") return null;
      const asset = byPath.get(path);
      return asset === undefined ? null : respond(asset, request);
    },
  };
}

let loaded: StaticAssets | null = null;

/**
 * The built assets, loaded once per process. From a source tree, builds them first when they
 * are missing or stale ({@link ensureAssetsBuilt}); in a compiled binary, the embedded ones.
 * @throws Error when the build fails, or when a compiled binary was built without them.
 */
export function staticAssets(): StaticAssets {
  if (loaded !== null) return loaded;
  const root = sourceRoot();
  if (root !== null) ensureAssetsBuilt(root);
  // A literal path, so that `bun build --compile` bundles the generated module and embeds the
  // files it imports; required lazily, so that a source tree without a build yet can build it first.
  const embed = require("../../dist/assets/embed.ts") as AssetEmbed;
  loaded = createStaticAssets(embed.manifest, embed.files);
  return loaded;
}

/**
 * The routes (routes.ts) of one group of the built assets: GET (and HEAD) of each path, open
 * without an API key, left out of the OpenAPI document.
 * @param group `"demo"`: the demo page at `/` and its bundle under `/assets/`; `"docs"`: the
 *   docs UI page at `/openapi` and `/docs`, and the Scalar bundle under `/openapi/assets/`
 * @throws Error as {@link staticAssets} does
 */
export function staticAssetsPlugin(group: AssetGroup): Plugin {
  const assets = staticAssets();
  const route = (path: string, asset: string): Route => ({
    method: "GET",
    path,
    // the router hands over GET and HEAD of this path only: the asset is there
    handler: (request: Request) => assets.serve(request, asset) as Response,
    operation: null,
    keyed: false,
  });
  const routes: Route[] = assets.paths(group).map((path) => route(path, path));
  // the docs UI page is at `/docs` too (docs/api.md "The OpenAPI document and the docs UI"): the same page,
  // whose bundle and document it reads by absolute paths
  if (group === "docs") routes.push(route(DOCS_PAGE_ALIAS, DOCS_PAGE));
  return { routes };
}

/** The docs UI page's path among the built assets. */
const DOCS_PAGE = "/openapi";

/** The other path of the docs UI page. */
export const DOCS_PAGE_ALIAS = "/docs";
