/**
 * The built static assets over a real socket (src/http/static-assets.ts, scripts/build-assets.ts):
 * every asset in every stored encoding, decoded back to the built bytes; `Vary`, ETags and
 * 304, Cache-Control, HEAD; the pages' security headers; the pages' references resolve to
 * served assets; `serve --no-demo` leaves the demo's paths 404. Plus the encoding choice and
 * the staleness check as functions.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { brotliDecompressSync, gunzipSync } from "node:zlib";
import pino from "pino";
import { demoPlugin } from "../../src/demo/plugin.ts";
import {
  ASSETS_DIR,
  type AssetManifest,
  EMBED_FILE,
  type Encoding,
  MANIFEST_FILE,
  MANIFEST_VERSION,
  chooseEncoding,
  contentHash,
  staleAssetsReason,
  staticAssets,
} from "../../src/http/static-assets.ts";
import type { UserRecord } from "../../src/generate/record.ts";
import { type RunningServer, startServer } from "../../src/server.ts";
import { writeSnapshot } from "../../src/snapshot/write.ts";
import { buildStoreFromRecords } from "../support/table-store.ts";

const REPO = resolve(import.meta.dir, "../..");
const RECORDS: UserRecord[] = [
  { id: 1, name: "Ann", email: "ann@example.com", status: "active" },
  { id: 2, name: "Bob", email: "bob@example.com", status: "inactive" },
];
/** The first request may build the assets (about 15 s from scratch on 2 cores). */
const BUILD_MS = 120_000;

let dir: string;
let withDemo: RunningServer;
let withoutDemo: RunningServer;
let manifest: AssetManifest;

beforeAll(() => {
  // Loads (building first when missing or stale) before the servers mount them.
  staticAssets();
  manifest = JSON.parse(readFileSync(join(REPO, ASSETS_DIR, MANIFEST_FILE), "utf8")) as AssetManifest;
  dir = mkdtempSync(join(tmpdir(), "users-assets-"));
  const snapshot = join(dir, "users.snap");
  writeSnapshot(snapshot, buildStoreFromRecords(RECORDS));
  const logger = pino({ level: "silent" });
  withDemo = startServer({ snapshot, port: 0, host: "127.0.0.1", maxPageSize: 100, logger, plugins: [demoPlugin()] });
  withoutDemo = startServer({ snapshot, port: 0, host: "127.0.0.1", maxPageSize: 100, logger, plugins: [] });
}, BUILD_MS);

afterAll(async () => {
  await withDemo?.stop();
  await withoutDemo?.stop();
  if (dir !== undefined) rmSync(dir, { recursive: true, force: true });
});

/** A request as the server receives it, the body left encoded (`decompress: false`). */
async function raw(path: string, headers: Record<string, string> = {}, method = "GET", server = withDemo) {
  const response = await fetch(`${server.url}${path}`, { method, headers, decompress: false } as RequestInit);
  return { status: response.status, headers: response.headers, bytes: new Uint8Array(await response.arrayBuffer()) };
}

/** The built file's bytes. */
const built = (file: string) => new Uint8Array(readFileSync(join(REPO, ASSETS_DIR, file)));

const DECODE: Record<Encoding, (bytes: Uint8Array) => Uint8Array> = {
  gzip: (b) => gunzipSync(b),
  br: (b) => brotliDecompressSync(b),
  zstd: (b) => Bun.zstdDecompressSync(b),
};

describe("the built assets", () => {
  test("are the demo page with its bundle and the docs UI, large files with all three variants", () => {
    const paths = manifest.assets.map((a) => a.path);
    expect(paths).toEqual(expect.arrayContaining(["/", "/openapi", "/openapi/assets/scalar.js"]));
    expect(paths.some((p) => /^\/assets\/.+\.js$/.test(p))).toBe(true);
    expect(paths.some((p) => /^\/assets\/.+\.css$/.test(p))).toBe(true);
    expect(paths.some((p) => /^\/openapi\/assets\/scalar-[0-9a-f]+\.js$/.test(p))).toBe(true);
    for (const asset of manifest.assets) {
      if (asset.size >= 100_000) expect(Object.keys(asset.variants).sort()).toEqual(["br", "gzip", "zstd"]);
      for (const variant of Object.values(asset.variants)) expect(variant.size).toBeLessThan(asset.size);
    }
  });
});

describe("serving", () => {
  test("every asset in every stored encoding, decoded to the built bytes, with Vary and its own ETag", async () => {
    for (const asset of manifest.assets) {
      const original = built(asset.file);
      const plain = await raw(asset.path);
      expect({ path: asset.path, status: plain.status }).toEqual({ path: asset.path, status: 200 });
      expect(plain.headers.get("content-type")).toBe(asset.contentType);
      expect(plain.headers.get("content-encoding")).toBeNull();
      expect(plain.headers.get("etag")).toBe(`"${asset.hash}"`);
      expect(plain.bytes).toEqual(original);
      const encodings = Object.keys(asset.variants) as Encoding[];
      expect(plain.headers.get("vary")).toBe(encodings.length > 0 ? "Accept-Encoding" : null);
      for (const encoding of encodings) {
        const r = await raw(asset.path, { "accept-encoding": encoding });
        expect({ path: asset.path, encoding: r.headers.get("content-encoding") }).toEqual({ path: asset.path, encoding });
        expect(r.headers.get("vary")).toBe("Accept-Encoding");
        expect(r.headers.get("etag")).toBe(`"${asset.hash}-${encoding}"`);
        expect(Number(r.headers.get("content-length"))).toBe(r.bytes.length);
        expect(r.bytes.length).toBeLessThan(original.length);
        expect(DECODE[encoding](r.bytes)).toEqual(original);
      }
    }
  });

  test("Accept-Encoding picks the client's highest q-value, brotli on a tie, identity when nothing fits", async () => {
    const page = manifest.assets.find((a) => a.path === "/openapi/assets/scalar.js") as AssetManifest["assets"][number];
    const cases: [string, string | null][] = [
      ["gzip, deflate, br, zstd", "br"],
      ["gzip, zstd", "zstd"],
      ["gzip;q=1, br;q=0.5", "gzip"],
      ["br;q=0, gzip", "gzip"],
      ["x-gzip", "gzip"],
      ["*", "br"],
      ["*;q=0", null],
      ["identity", null],
      ["deflate", null],
    ];
    for (const [header, expected] of cases) {
      const r = await raw(page.path, { "accept-encoding": header }, "HEAD");
      expect({ header, encoding: r.headers.get("content-encoding") }).toEqual({ header, encoding: expected });
    }
  });

  test("Cache-Control: hashed names immutable for a year, pages and the stable Scalar name revalidated", async () => {
    for (const asset of manifest.assets) {
      const r = await raw(asset.path, {}, "HEAD");
      const hashed = asset.path.startsWith("/assets/") || /scalar-[0-9a-f]+\.js$/.test(asset.path);
      expect({ path: asset.path, cache: r.headers.get("cache-control") }).toEqual({
        path: asset.path,
        cache: hashed ? "public, max-age=31536000, immutable" : "no-cache",
      });
    }
  });

  test("If-None-Match with the variant's tag is a 304 without a body; another variant's tag is not", async () => {
    const path = "/openapi/assets/scalar.js";
    const first = await raw(path, { "accept-encoding": "br" });
    const etag = first.headers.get("etag") as string;
    const again = await raw(path, { "accept-encoding": "br", "if-none-match": etag });
    expect(again.status).toBe(304);
    expect(again.bytes.length).toBe(0);
    expect(again.headers.get("etag")).toBe(etag);
    expect(again.headers.get("vary")).toBe("Accept-Encoding");
    expect(again.headers.get("cache-control")).toBe("no-cache");
    expect((await raw(path, { "accept-encoding": "br", "if-none-match": `"x", W/${etag}` })).status).toBe(304);
    expect((await raw(path, { "accept-encoding": "br", "if-none-match": "*" })).status).toBe(304);
    const other = await raw(path, { "accept-encoding": "gzip", "if-none-match": etag });
    expect(other.status).toBe(200);
    expect(other.headers.get("content-encoding")).toBe("gzip");
    const page = await raw("/", { "if-none-match": (await raw("/")).headers.get("etag") as string });
    expect(page.status).toBe(304);
  });

  test("HEAD answers the GET's headers, Content-Length included, without a body", async () => {
    for (const path of ["/", "/openapi", "/openapi/assets/scalar.js"]) {
      const get = await raw(path, { "accept-encoding": "br" });
      const head = await raw(path, { "accept-encoding": "br" }, "HEAD");
      expect(head.status).toBe(200);
      expect(head.bytes.length).toBe(0);
      for (const name of ["content-type", "content-encoding", "etag", "cache-control", "vary", "content-security-policy"]) {
        expect({ path, name, value: head.headers.get(name) }).toEqual({ path, name, value: get.headers.get(name) });
      }
      expect(Number(head.headers.get("content-length"))).toBe(get.bytes.length);
    }
  });

  test("the pages carry the security headers: a self-only CSP that forbids framing, nosniff, no referrer", async () => {
    for (const path of ["/", "/openapi"]) {
      const r = await raw(path);
      expect(r.headers.get("content-type")).toBe("text/html; charset=utf-8");
      const csp = r.headers.get("content-security-policy") as string;
      const directives = Object.fromEntries(csp.split(";").map((d) => d.trim().split(/\s+/)).map(([name, ...values]) => [name, values]));
      expect(directives["default-src"]).toEqual(["'self'"]);
      expect(directives["script-src"]).toEqual(["'self'"]);
      expect(directives["connect-src"]).toEqual(["'self'"]);
      expect(directives["frame-ancestors"]).toEqual(["'none'"]);
      expect(directives["object-src"]).toEqual(["'none'"]);
      // Nothing from another origin anywhere: every source is a keyword or a data: URI.
      for (const values of Object.values(directives)) for (const v of values) expect(v === "data:" || v.startsWith("'")).toBe(true);
      expect(r.headers.get("x-content-type-options")).toBe("nosniff");
      expect(r.headers.get("referrer-policy")).toBe("no-referrer");
    }
    const script = await raw("/openapi/assets/scalar.js", {}, "HEAD");
    expect(script.headers.get("x-content-type-options")).toBe("nosniff");
  });

  test("each page's scripts and styles are served assets, and the pages have no inline script", async () => {
    const served = new Map(manifest.assets.map((a) => [a.path, a]));
    for (const path of ["/", "/openapi"]) {
      const html = new TextDecoder().decode((await raw(path)).bytes);
      const references = [...html.matchAll(/(?:src|href)="(\/[^"]+)"/g)].map((m) => m[1]).filter((p) => p !== "/openapi");
      expect(references.length).toBeGreaterThan(0);
      for (const reference of references) {
        const asset = served.get(reference);
        expect({ path, reference, served: asset !== undefined }).toEqual({ path, reference, served: true });
        const r = await raw(reference);
        expect(r.status).toBe(200);
        expect(r.headers.get("content-type")).toMatch(/^text\/(javascript|css)/);
        expect(r.bytes.length).toBeGreaterThan(1000);
      }
      // Every script element has a src or nothing in it (CSP: script-src 'self'); no on* handlers.
      for (const m of html.matchAll(/<script\b([^>]*)>([\s\S]*?)<\/script>/g)) expect(m[1].includes("src=") || m[2].trim() === "").toBe(true);
      expect(html).not.toMatch(/\son[a-z]+=/);
    }
    expect(new TextDecoder().decode((await raw("/")).bytes)).toContain("<h1>Users listing service</h1>");
    // The stable name serves the bundle the docs page loads by its hashed name.
    const docs = new TextDecoder().decode((await raw("/openapi")).bytes);
    const hashed = /src="(\/openapi\/assets\/scalar-[0-9a-f]+\.js)"/.exec(docs)?.[1] as string;
    expect((await raw(hashed)).bytes).toEqual((await raw("/openapi/assets/scalar.js")).bytes);
    // the same page at /docs, with the same headers
    const atDocs = await raw("/docs");
    expect(atDocs.status).toBe(200);
    expect(new TextDecoder().decode(atDocs.bytes)).toBe(docs);
    expect(atDocs.headers.get("content-security-policy")).toBe((await raw("/openapi")).headers.get("content-security-policy"));
  });

  test("without the demo, / and its bundle are 404 problems; the docs UI stays", async () => {
    const bundle = manifest.assets.find((a) => a.path.startsWith("/assets/"))?.path as string;
    for (const path of ["/", bundle]) {
      const r = await raw(path, {}, "GET", withoutDemo);
      expect(r.status).toBe(404);
      expect(r.headers.get("content-type")).toBe("application/problem+json");
    }
    expect((await raw("/openapi", {}, "GET", withoutDemo)).status).toBe(200);
    expect((await raw("/docs", {}, "GET", withoutDemo)).status).toBe(200);
    expect((await raw("/openapi/assets/scalar.js", {}, "HEAD", withoutDemo)).status).toBe(200);
  });

  test("other methods are 405 with Allow; a trailing slash is 404", async () => {
    const post = await raw("/openapi", {}, "POST");
    expect(post.status).toBe(405);
    expect(post.headers.get("allow")).toContain("GET");
    expect((await raw("/openapi/")).status).toBe(404);
    expect((await raw("/assets/")).status).toBe(404);
  });
});

describe("chooseEncoding", () => {
  const all: Encoding[] = ["br", "zstd", "gzip"];
  test("honours q-values, wildcards and the identity coding", () => {
    expect(chooseEncoding(null, all)).toBeNull();
    expect(chooseEncoding("gzip, br", all)).toBe("br");
    expect(chooseEncoding("gzip, br", ["zstd", "gzip"])).toBe("gzip");
    expect(chooseEncoding("br;q=0.4, zstd;q=0.6", all)).toBe("zstd");
    expect(chooseEncoding("BR; Q=0.9", all)).toBe("br");
    expect(chooseEncoding("identity;q=1, br;q=0.5", all)).toBeNull();
    expect(chooseEncoding("br;q=abc", all)).toBeNull();
    expect(chooseEncoding("gzip", [])).toBeNull();
  });
});

describe("staleAssetsReason", () => {
  test("names what makes a build stale: no manifest, another Bun, a changed or gone input, a missing output", () => {
    const root = mkdtempSync(join(tmpdir(), "users-assets-root-"));
    try {
      const out = join(root, ASSETS_DIR);
      mkdirSync(out, { recursive: true });
      mkdirSync(join(root, "src"));
      expect(staleAssetsReason(root)).toBe("no manifest");
      writeFileSync(join(root, "src/page.html"), "<p>one</p>");
      writeFileSync(join(out, "page.html"), "<p>one</p>");
      writeFileSync(join(out, EMBED_FILE), "");
      const fresh: AssetManifest = {
        version: MANIFEST_VERSION,
        bun: Bun.version,
        inputs: { "src/page.html": contentHash(new TextEncoder().encode("<p>one</p>")) },
        assets: [{ path: "/", group: "demo", file: "page.html", contentType: "text/html; charset=utf-8", cacheControl: "no-cache", html: true, size: 10, hash: "0", variants: {} }],
      };
      const write = (m: AssetManifest) => writeFileSync(join(out, MANIFEST_FILE), JSON.stringify(m));
      write(fresh);
      expect(staleAssetsReason(root)).toBeNull();
      write({ ...fresh, bun: "0.0.1" });
      expect(staleAssetsReason(root)).toBe("built by Bun 0.0.1");
      write(fresh);
      writeFileSync(join(root, "src/page.html"), "<p>two</p>");
      expect(staleAssetsReason(root)).toBe("src/page.html changed");
      rmSync(join(root, "src/page.html"));
      expect(staleAssetsReason(root)).toBe("src/page.html is gone");
      writeFileSync(join(root, "src/page.html"), "<p>one</p>");
      rmSync(join(out, "page.html"));
      expect(staleAssetsReason(root)).toBe("page.html is missing");
    } finally {
      rmSync(root, { recursive: true, force: true });
    }
  });
});
