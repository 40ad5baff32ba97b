/**
 * The HTTP envelope over a real socket (docs/api.md "HTTP envelope"): conditional requests,
 * HEAD, compression, CORS, API keys, OPTIONS, trailing slashes, /readyz, /metrics, security
 * headers, the body limit while streaming, and the log of a client that hangs up mid-body.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { Writable } from "node:stream";
import { brotliDecompressSync, gunzipSync } from "node:zlib";
import pino from "pino";
import { entityTag, ifNoneMatchHits } from "../../src/service/conditional.ts";
import { parseCorsOrigins } from "../../src/http/cors.ts";
import { genericHandler } from "../../src/http/envelope.ts";
import { operationsHandlers } from "../../src/http/app.ts";
import type { UserRecord } from "../../src/generate/record.ts";
import { chunk, openRaw, parseAnswer } from "../support/raw-http.ts";
import { type TestServer, startTestServer } from "../support/server.ts";

/** 60 users: a page of 50 is a body of several KiB, a page of 1 under 1 KiB. */
const RECORDS: UserRecord[] = Array.from({ length: 60 }, (_, i) => ({
  id: i + 1,
  name: `User Number ${i + 1}`,
  email: `user.${i + 1}@example.com`,
  status: i % 3 === 0 ? "inactive" : "active",
}));

let srv: TestServer;
beforeAll(() => {
  srv = startTestServer(RECORDS, 100);
});
afterAll(() => srv.close());

/** A fetch that shows the bytes as sent: no Accept-Encoding unless given, no decompression. */
function raw(path: string, init: RequestInit & { headers?: Record<string, string> } = {}, base = srv.url) {
  return fetch(`${base}${path}`, { ...init, headers: { "accept-encoding": "identity", ...init.headers }, decompress: false } as RequestInit);
}

describe("conditional requests", () => {
  test("a GET 200 carries ETag, X-Snapshot-Id, Cache-Control: no-cache and Vary", async () => {
    const res = await raw("/api/users?pageSize=5");
    expect(res.status).toBe(200);
    expect(res.headers.get("etag")).toMatch(/^"[0-9a-z]{1,7}-[0-9a-z]{1,7}"$/);
    expect(res.headers.get("x-snapshot-id")).toBe(srv.server.engine().store.snapshotId);
    expect(res.headers.get("cache-control")).toBe("no-cache");
    expect(res.headers.get("vary")).toBe("Accept-Encoding");
  });

  test("equal requests get equal tags, other requests other tags", async () => {
    const tag = async (q: string) => (await raw(`/api/users${q}`)).headers.get("etag");
    const a = await tag("?page=4&pageSize=3&sortBy=name&sortOrder=desc");
    expect(await tag("?page=4&pageSize=3&sortBy=name&sortOrder=desc")).toBe(a);
    // Two spellings of one request answer the same bytes, so they share the tag.
    expect(await tag("?page=4&limit=3&sort=name&order=DESC&_=123")).toBe(a);
    expect(await tag("?page=5&pageSize=3&sortBy=name&sortOrder=desc")).not.toBe(a);
    expect(await tag("?page=4&pageSize=3&sortBy=name&sortOrder=asc")).not.toBe(a);
    expect(await tag("?page=4&pageSize=3&sortBy=name&sortOrder=desc&filter[status]=active")).not.toBe(a);
  });

  test("If-None-Match with the tag, a list holding it, its weak form or * answers 304 with no body", async () => {
    const first = await raw("/api/users?pageSize=7&sortBy=email");
    const etag = first.headers.get("etag") as string;
    for (const header of [etag, `"0000000000000000", ${etag}`, `W/${etag}`, "*"]) {
      const res = await raw("/api/users?pageSize=7&sortBy=email", { headers: { "if-none-match": header } });
      expect(res.status).toBe(304);
      expect(await res.text()).toBe("");
      expect(res.headers.get("etag")).toBe(etag);
      expect(res.headers.get("x-snapshot-id")).toBe(srv.server.engine().store.snapshotId);
      expect(res.headers.get("cache-control")).toBe("no-cache");
      expect(res.headers.get("vary")).toBe("Accept-Encoding");
    }
    const other = await raw("/api/users?pageSize=7&sortBy=email", { headers: { "if-none-match": '"0000000000000000", W/"abc"' } });
    expect(other.status).toBe(200);
    expect((await other.json()).data).toHaveLength(7);
  });

  test("a 304 is answered without running the query", async () => {
    const q = "/api/users?pageSize=3&filter[name]=number+1&sortBy=email";
    const etag = (await raw(q)).headers.get("etag") as string;
    // A fresh engine over the same snapshot: empty caches, the same snapshot id.
    await srv.server.reload();
    const engine = srv.server.engine();
    const res = await raw(q, { headers: { "if-none-match": etag } });
    expect(res.status).toBe(304);
    expect(engine.filters.misses + engine.filters.hits).toBe(0);
    expect(engine.filters.size).toBe(0);
    expect((await raw(q)).status).toBe(200);
    expect(engine.filters.misses).toBe(1);
  });

  test("If-None-Match lists compare weakly; malformed ones match nothing", () => {
    const tag = '"00ab"';
    expect(ifNoneMatchHits('"00ab"', tag)).toBe(true);
    expect(ifNoneMatchHits(' W/"x" ,W/"00ab"', tag)).toBe(true);
    expect(ifNoneMatchHits('"x",\t"00ab"', tag)).toBe(true);
    expect(ifNoneMatchHits("*", tag)).toBe(true);
    expect(ifNoneMatchHits('"00ab-gzip"', tag)).toBe(false);
    expect(ifNoneMatchHits('"00a"', tag)).toBe(false);
    expect(ifNoneMatchHits("00ab", tag)).toBe(false);
    expect(ifNoneMatchHits('"00ab', tag)).toBe(false);
    expect(ifNoneMatchHits('w/"00ab"', tag)).toBe(false);
  });

  test("the tag depends on the snapshot, the coding and every part of the request", () => {
    const tag = (id: string, coding: "gzip" | null, route: number, a: number, b: number, text: string, filter: string) => entityTag(id, coding, route, a, b, text, filter);
    const a = tag("eb4f3fb3835d5212", null, 1, 2, 10, '{"sortBy":"name"}', "");
    expect(a).toMatch(/^"[0-9a-z]{1,7}-[0-9a-z]{1,7}"$/);
    expect(tag("eb4f3fb3835d5212", null, 1, 2, 10, '{"sortBy":"name"}', "")).toBe(a);
    const others = [
      tag("0000000000000001", null, 1, 2, 10, '{"sortBy":"name"}', ""),
      tag("eb4f3fb3835d5212", "gzip", 1, 2, 10, '{"sortBy":"name"}', ""),
      tag("eb4f3fb3835d5212", null, 2, 2, 10, '{"sortBy":"name"}', ""),
      tag("eb4f3fb3835d5212", null, 1, 3, 10, '{"sortBy":"name"}', ""),
      tag("eb4f3fb3835d5212", null, 1, 2, 11, '{"sortBy":"name"}', ""),
      tag("eb4f3fb3835d5212", null, 1, 10, 2, '{"sortBy":"name"}', ""),
      tag("eb4f3fb3835d5212", null, 1, 2 + 2 ** 32, 10, '{"sortBy":"name"}', ""),
      tag("eb4f3fb3835d5212", null, 1, 2, 10, '{"sortBy":"email"}', ""),
      tag("eb4f3fb3835d5212", null, 1, 2, 10, '{"sortBy":"name"}', "x"),
      tag("eb4f3fb3835d5212", null, 1, 2, 10, '{"sortBy":"nam', 'e"}'),
    ];
    expect(new Set([a, ...others]).size).toBe(others.length + 1);
  });

  test("POST answers carry an ETag and X-Snapshot-Id, and never 304", async () => {
    const body = JSON.stringify({ startRow: 0, endRow: 4 });
    const post = (headers: Record<string, string> = {}) => raw("/api/users", { method: "POST", body, headers: { "content-type": "application/json", ...headers } });
    const first = await post();
    expect(first.status).toBe(200);
    const etag = first.headers.get("etag") as string;
    expect(etag).toMatch(/^"[0-9a-z]{1,7}-[0-9a-z]{1,7}"$/);
    expect(first.headers.get("x-snapshot-id")).toBe(srv.server.engine().store.snapshotId);
    expect((await post()).headers.get("etag")).toBe(etag);
    const again = await post({ "if-none-match": etag });
    expect(again.status).toBe(200);
    expect((await again.json()).data).toHaveLength(4);
    const other = await raw("/api/users", { method: "POST", body: JSON.stringify({ startRow: 1, endRow: 4 }) });
    expect(other.headers.get("etag")).not.toBe(etag);
  });

  test("HEAD works on every GET route: the GET's headers, no body", async () => {
    for (const path of ["/api/users?pageSize=5", "/healthz", "/readyz", "/openapi/json", "/metrics"]) {
      const get = await raw(path);
      const head = await raw(path, { method: "HEAD" });
      expect(head.status).toBe(200);
      expect(await head.text()).toBe("");
      expect(head.headers.get("content-type")).toBe(get.headers.get("content-type"));
      expect(head.headers.get("etag")).toBe(get.headers.get("etag"));
    }
    const head = await raw("/api/users?pageSize=5", { method: "HEAD" });
    expect(head.headers.get("x-snapshot-id")).toBe(srv.server.engine().store.snapshotId);
    expect(head.headers.get("cache-control")).toBe("no-cache");
  });
});

describe("compression", () => {
  const page = "/api/users?pageSize=50";
  let identity: string;
  beforeAll(async () => {
    identity = await (await raw(page)).text();
  });

  test("gzip, br and zstd bodies decode to the identity body", async () => {
    expect(identity.length).toBeGreaterThan(1024);
    const decode: Record<string, (b: Uint8Array) => Uint8Array> = {
      gzip: (b) => gunzipSync(b),
      br: (b) => brotliDecompressSync(b),
      zstd: (b) => Bun.zstdDecompressSync(b),
    };
    for (const coding of ["gzip", "br", "zstd"]) {
      const res = await raw(page, { headers: { "accept-encoding": coding } });
      expect(res.headers.get("content-encoding")).toBe(coding);
      expect(res.headers.get("vary")).toBe("Accept-Encoding");
      const bytes = new Uint8Array(await res.arrayBuffer());
      expect(bytes.length).toBeLessThan(identity.length / 2);
      expect(new TextDecoder().decode(decode[coding](bytes))).toBe(identity);
    }
  });

  test("q-values choose: the highest acceptable, ties to zstd then gzip then br, q=0 refuses", async () => {
    const coding = async (accept: string) => (await raw(page, { headers: { "accept-encoding": accept } })).headers.get("content-encoding");
    expect(await coding("gzip, deflate, br, zstd")).toBe("zstd");
    expect(await coding("gzip, br")).toBe("gzip");
    expect(await coding("br;q=1, gzip;q=0.5")).toBe("br");
    expect(await coding("zstd;q=0, gzip")).toBe("gzip");
    expect(await coding("*")).toBe("zstd");
    expect(await coding("*;q=0.5, zstd;q=0")).toBe("gzip");
    expect(await coding("GZIP;Q=0.8")).toBe("gzip");
    expect(await coding("deflate")).toBeNull();
    expect(await coding("gzip;q=0, br;q=0, zstd;q=0")).toBeNull();
    expect(await coding("identity")).toBeNull();
  });

  test("each coding has its own entity tag, and 304 works for it", async () => {
    const gz = await raw(page, { headers: { "accept-encoding": "gzip" } });
    const plain = await raw(page);
    expect(gz.headers.get("etag")).not.toBe(plain.headers.get("etag"));
    const again = await raw(page, { headers: { "accept-encoding": "gzip", "if-none-match": gz.headers.get("etag") as string } });
    expect(again.status).toBe(304);
  });

  test("bodies under 1 KiB go uncompressed, still with Vary: Accept-Encoding", async () => {
    const small = await raw("/api/users?pageSize=1", { headers: { "accept-encoding": "gzip, br, zstd" } });
    expect(small.headers.get("content-encoding")).toBeNull();
    expect(small.headers.get("vary")).toBe("Accept-Encoding");
    expect((await small.json()).data).toHaveLength(1);
    const notFound = await raw("/nope", { headers: { "accept-encoding": "gzip" } });
    expect(notFound.headers.get("content-encoding")).toBeNull();
    expect(notFound.headers.get("vary")).toBe("Accept-Encoding");
  });

  test("problem+json bodies of 1 KiB or more are compressed", async () => {
    const query = Array.from({ length: 30 }, (_, i) => `filter[column${i}]=x`).join("&");
    const res = await raw(`/api/users?${query}`, { headers: { "accept-encoding": "gzip" } });
    expect(res.status).toBe(400);
    expect(res.headers.get("content-type")).toBe("application/problem+json");
    expect(res.headers.get("content-encoding")).toBe("gzip");
    const body = JSON.parse(gunzipSync(new Uint8Array(await res.arrayBuffer())).toString());
    expect(body.errors).toHaveLength(20);
    expect(body.moreErrors).toBe(10);
  });

  test("POST bodies and the OpenAPI document are compressed too", async () => {
    const post = await raw("/api/users", { method: "POST", body: JSON.stringify({ startRow: 0, endRow: 50 }), headers: { "accept-encoding": "zstd" } });
    expect(post.headers.get("content-encoding")).toBe("zstd");
    expect(JSON.parse(new TextDecoder().decode(Bun.zstdDecompressSync(new Uint8Array(await post.arrayBuffer())))).total).toBe(60);
    const doc = await raw("/openapi/json", { headers: { "accept-encoding": "gzip" } });
    expect(doc.headers.get("content-encoding")).toBe("gzip");
    expect(doc.headers.get("vary")).toContain("Accept-Encoding");
    expect(Object.keys(JSON.parse(gunzipSync(new Uint8Array(await doc.arrayBuffer())).toString()).paths)).toContain("/api/users");
  });
});

describe("paths and methods", () => {
  test("a trailing slash is a 404 problem", async () => {
    for (const path of ["/api/users/", "/healthz/", "/readyz/", "/api/users//"]) {
      const res = await raw(path);
      expect(res.status).toBe(404);
      expect(res.headers.get("content-type")).toBe("application/problem+json");
      expect(await res.json()).toEqual({ type: "/problems/not-found", title: "Not found", status: 404, detail: `no resource at ${path}` });
    }
  });

  test("OPTIONS without CORS answers 204 with Allow; an unknown path stays 404", async () => {
    const users = await raw("/api/users", { method: "OPTIONS" });
    expect(users.status).toBe(204);
    expect(users.headers.get("allow")).toBe("GET, HEAD, POST, OPTIONS");
    expect(users.headers.get("access-control-allow-origin")).toBeNull();
    // A preflight when CORS is off: no CORS headers, so the browser refuses the request.
    const preflight = await raw("/healthz", { method: "OPTIONS", headers: { origin: "https://app.example", "access-control-request-method": "GET" } });
    expect(preflight.status).toBe(204);
    expect(preflight.headers.get("allow")).toBe("GET, HEAD, OPTIONS");
    expect(preflight.headers.get("access-control-allow-origin")).toBeNull();
    expect((await raw("/nope", { method: "OPTIONS" })).status).toBe(404);
  });

  test("a wrong method is 405 with Allow", async () => {
    const res = await raw("/readyz", { method: "DELETE" });
    expect(res.status).toBe(405);
    expect(res.headers.get("allow")).toBe("GET, HEAD, OPTIONS");
  });
});

describe("CORS", () => {
  let cors: TestServer;
  beforeAll(() => {
    cors = startTestServer(RECORDS, 100, { cors: parseCorsOrigins("https://app.example, http://localhost:5173") });
  });
  afterAll(() => cors.close());

  test("an allowed origin reads the answer and its ETag and X-Snapshot-Id", async () => {
    const res = await raw("/api/users?pageSize=2", { headers: { origin: "http://localhost:5173" } }, cors.url);
    expect(res.status).toBe(200);
    expect(res.headers.get("access-control-allow-origin")).toBe("http://localhost:5173");
    expect(res.headers.get("access-control-expose-headers")).toBe("ETag, X-Snapshot-Id");
    expect(res.headers.get("vary")).toBe("Accept-Encoding, Origin");
  });

  test("another origin gets no Access-Control-Allow-Origin, still Vary: Origin", async () => {
    const res = await raw("/api/users?pageSize=2", { headers: { origin: "https://evil.example" } }, cors.url);
    expect(res.status).toBe(200);
    expect(res.headers.get("access-control-allow-origin")).toBeNull();
    expect(res.headers.get("access-control-expose-headers")).toBeNull();
    expect(res.headers.get("vary")).toBe("Accept-Encoding, Origin");
    const noOrigin = await raw("/healthz", {}, cors.url);
    expect(noOrigin.headers.get("access-control-allow-origin")).toBeNull();
  });

  test("a preflight from an allowed origin answers 204 with the route's methods", async () => {
    const res = await raw("/api/users", { method: "OPTIONS", headers: { origin: "https://app.example", "access-control-request-method": "POST", "access-control-request-headers": "content-type" } }, cors.url);
    expect(res.status).toBe(204);
    expect(res.headers.get("access-control-allow-origin")).toBe("https://app.example");
    expect(res.headers.get("access-control-allow-methods")).toBe("GET, HEAD, POST");
    expect(res.headers.get("access-control-allow-headers")).toBe("content-type, authorization");
    expect(res.headers.get("access-control-max-age")).toBe("600");
    expect(res.headers.get("vary")).toBe("Origin");
    const health = await raw("/healthz", { method: "OPTIONS", headers: { origin: "https://app.example", "access-control-request-method": "GET" } }, cors.url);
    expect(health.headers.get("access-control-allow-methods")).toBe("GET, HEAD");
  });

  test("a preflight from another origin gets Allow and no CORS headers", async () => {
    const res = await raw("/api/users", { method: "OPTIONS", headers: { origin: "https://evil.example", "access-control-request-method": "POST" } }, cors.url);
    expect(res.status).toBe(204);
    expect(res.headers.get("access-control-allow-origin")).toBeNull();
    expect(res.headers.get("access-control-allow-methods")).toBeNull();
    expect(res.headers.get("allow")).toBe("GET, HEAD, POST, OPTIONS");
  });

  test("* allows every origin, each answer naming the request's", async () => {
    const any = startTestServer(RECORDS, 100, { cors: parseCorsOrigins("*") });
    try {
      const res = await raw("/api/users?pageSize=1", { headers: { origin: "https://whoever.example" } }, any.url);
      expect(res.headers.get("access-control-allow-origin")).toBe("https://whoever.example");
    } finally {
      await any.close();
    }
  });

  test("origins are checked when configured", () => {
    expect(() => parseCorsOrigins("example.com")).toThrow('CORS origin must be scheme://host[:port] or * (got "example.com")');
    expect(() => parseCorsOrigins("https://a.example/path")).toThrow("CORS origin must be");
    expect(parseCorsOrigins("")).toBeNull();
    expect([...(parseCorsOrigins("HTTPS://A.example:443/")?.origins ?? [])]).toEqual(["https://a.example"]);
  });
});

describe("API keys", () => {
  let keyed: TestServer;
  beforeAll(() => {
    keyed = startTestServer(RECORDS, 100, { apiKeys: ["first-key", "second-key"], cors: parseCorsOrigins("https://app.example") });
  });
  afterAll(() => keyed.close());
  const call = (path: string, headers: Record<string, string> = {}, method = "GET") => raw(path, { method, headers }, keyed.url);

  test("/api/* and /metrics need Authorization: Bearer <key>", async () => {
    for (const path of ["/api/users", "/metrics", "/api/nope", "/api/users/"]) {
      const res = await call(path);
      expect(res.status).toBe(401);
      expect(res.headers.get("www-authenticate")).toBe("Bearer");
      expect(res.headers.get("content-type")).toBe("application/problem+json");
      expect(await res.json()).toMatchObject({ type: "/problems/unauthorized", title: "Unauthorized", status: 401 });
    }
    const post = await call("/api/users", { "content-type": "application/json" }, "POST");
    expect(post.status).toBe(401);
  });

  test("any configured key passes; a wrong one is refused as invalid", async () => {
    expect((await call("/api/users?pageSize=1", { authorization: "Bearer first-key" })).status).toBe(200);
    expect((await call("/api/users?pageSize=1", { authorization: "Bearer second-key" })).status).toBe(200);
    expect((await call("/api/users?pageSize=1", { authorization: "bearer second-key" })).status).toBe(200);
    expect((await call("/metrics", { authorization: "Bearer first-key" })).status).toBe(200);
    expect((await call("/api/nope", { authorization: "Bearer first-key" })).status).toBe(404);
    for (const authorization of ["Bearer first-ke", "Bearer first-key2", "Basic Zmlyc3Qta2V5", "first-key"]) {
      const res = await call("/api/users", { authorization });
      expect(res.status).toBe(401);
      expect(res.headers.get("www-authenticate")).toBe(authorization.startsWith("Bearer") ? 'Bearer error="invalid_token"' : "Bearer");
    }
  });

  test("/healthz, /readyz and preflights stay open", async () => {
    for (const path of ["/healthz", "/readyz"]) expect((await call(path)).status).toBe(200);
    const preflight = await call("/api/users", { origin: "https://app.example", "access-control-request-method": "POST" }, "OPTIONS");
    expect(preflight.status).toBe(204);
    expect(preflight.headers.get("access-control-allow-origin")).toBe("https://app.example");
  });

  test("OPTIONS without a key is a 204 with Allow, on /api/* and /metrics too (docs/api.md: it needs no key)", async () => {
    for (const [path, allow] of [
      ["/api/users", "GET, HEAD, POST, OPTIONS"],
      ["/api/users/schema", "GET, HEAD, OPTIONS"],
      ["/metrics", "GET, HEAD, OPTIONS"],
      ["/openapi/json", "GET, HEAD, OPTIONS"],
    ]) {
      const res = await call(path, {}, "OPTIONS");
      expect({ path, status: res.status, allow: res.headers.get("allow") }).toEqual({ path, status: 204, allow });
      expect(await res.text()).toBe("");
    }
  });

  test("the OpenAPI document, which lists the columns and enum values as /api/users/schema does, needs a key like it", async () => {
    for (const path of ["/openapi/json", "/api/users/schema"]) {
      const refused = await call(path);
      expect({ path, status: refused.status, challenge: refused.headers.get("www-authenticate") }).toEqual({ path, status: 401, challenge: "Bearer" });
      expect(await refused.text()).not.toContain("inactive");
      const head = await call(path, {}, "HEAD");
      expect({ path, status: head.status }).toEqual({ path, status: 401 });
      const allowed = await call(path, { authorization: "Bearer second-key" });
      expect({ path, status: allowed.status }).toEqual({ path, status: 200 });
      expect(await allowed.text()).toContain("inactive");
    }
  });

  test("a 401 carries the CORS headers, so a browser script can read it", async () => {
    const res = await call("/api/users", { origin: "https://app.example" });
    expect(res.status).toBe(401);
    expect(res.headers.get("access-control-allow-origin")).toBe("https://app.example");
  });
});

describe("operations", () => {
  test("/readyz is 200 with the snapshot while serving", async () => {
    const res = await raw("/readyz");
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({ status: "ready", rows: 60, snapshotId: srv.server.engine().store.snapshotId, createdAt: expect.any(String), ageSeconds: expect.any(Number) });
  });

  test("/readyz is a 503 problem while starting or draining", async () => {
    for (const state of ["starting", "draining"] as const) {
      const handlers = operationsHandlers({ engine: srv.server.engine, state: () => state });
      const res = await handlers.readyz(new Request(`${srv.url}/readyz`));
      expect(res.status).toBe(503);
      expect(res.headers.get("content-type")).toBe("application/problem+json");
      expect(await res.json()).toMatchObject({ type: "/problems/not-ready", title: "Service not ready", status: 503, state });
    }
  });

  test("/metrics: durations by route, method and status; in flight; caches; snapshot; reloads", async () => {
    const own = startTestServer(RECORDS, 100);
    try {
      for (let i = 0; i < 3; i++) await raw("/api/users?pageSize=2", {}, own.url);
      await raw("/api/users?filter[name]=number+2", {}, own.url);
      await raw("/api/users?filter[name]=number+2&page=2", {}, own.url);
      await raw("/no/such/path", {}, own.url);
      await raw("/api/users", { method: "PUT" }, own.url);
      await own.server.reload();
      const { writeFileSync, readFileSync, renameSync } = await import("node:fs");
      const good = readFileSync(own.snapshot);
      writeFileSync(`${own.snapshot}.new`, "garbage");
      renameSync(`${own.snapshot}.new`, own.snapshot);
      await expect(own.server.reload()).rejects.toThrow();
      writeFileSync(own.snapshot, good);
      const res = await raw("/metrics", {}, own.url);
      expect(res.status).toBe(200);
      expect(res.headers.get("content-type")).toBe("text/plain; version=0.0.4; charset=utf-8");
      const text = await res.text();
      const id = own.server.engine().store.snapshotId;
      expect(text).toContain('users_listing_http_request_duration_seconds_count{route="/api/users",method="GET",status="200"} 5');
      expect(text).toContain('users_listing_http_request_duration_seconds_bucket{le="+Inf",route="/api/users",method="GET",status="200"} 5');
      expect(text).toContain('users_listing_http_request_duration_seconds_count{route="other",method="GET",status="404"} 1');
      expect(text).toContain('users_listing_http_request_duration_seconds_count{route="/api/users",method="PUT",status="405"} 1');
      expect(text).toContain("# TYPE users_listing_http_request_duration_seconds histogram");
      expect(text).toContain("users_listing_http_requests_in_flight 1");
      // The filter was computed once and found once, by the engine the reload replaced.
      expect(text).toContain('users_listing_cache_misses_total{cache="filters"} 1');
      expect(text).toContain('users_listing_cache_hits_total{cache="filters"} 1');
      expect(text).toMatch(/users_listing_cache_bytes\{cache="filters"\} \d+/);
      expect(text).toContain("users_listing_snapshot_rows 60");
      expect(text).toContain(`users_listing_snapshot_info{snapshot_id="${id}"} 1`);
      expect(text).toMatch(/users_listing_snapshot_load_seconds \d/);
      expect(text).toMatch(/users_listing_snapshot_age_seconds \d/);
      expect(text).toMatch(/users_listing_snapshot_created_timestamp_seconds \d/);
      expect(text).toContain('users_listing_snapshot_reloads_total{result="ok"} 1');
      expect(text).toContain('users_listing_snapshot_reloads_total{result="refused"} 1');
      // Each server its own registry: the other server's requests are not counted here.
      expect(text).not.toContain('route="/readyz"');
    } finally {
      await own.close();
    }
  });
});

describe("security headers of HTML pages", () => {
  test("the docs UI page has a CSP that forbids framing, nosniff and no-referrer", async () => {
    const res = await raw("/openapi");
    expect(res.headers.get("content-type")).toStartWith("text/html");
    const csp = res.headers.get("content-security-policy") as string;
    expect(csp).toContain("frame-ancestors 'none'");
    expect(csp).toContain("script-src 'self'");
    expect(csp).not.toContain("unsafe-eval");
    expect(res.headers.get("x-content-type-options")).toBe("nosniff");
    expect(res.headers.get("referrer-policy")).toBe("no-referrer");
  });

  test("a page served by a plain handler gets them too", async () => {
    const page = genericHandler(() => new Response("<!doctype html><p>hi</p>", { headers: { "content-type": "text/html; charset=utf-8" } }));
    const res = (await page(new Request("http://localhost/x"))) as Response;
    expect(res.headers.get("content-security-policy")).toContain("frame-ancestors 'none'");
    expect(res.headers.get("x-content-type-options")).toBe("nosniff");
    expect(res.headers.get("referrer-policy")).toBe("no-referrer");
    const json = (await genericHandler(() => Response.json({}))(new Request("http://localhost/x"))) as Response;
    expect(json.headers.get("content-security-policy")).toBeNull();
  });
});

describe("POST body limit", () => {
  const port = () => srv.server.port;

  test("a declared body over 64 KiB is a 413 problem and the connection closes", async () => {
    const c = await openRaw(port());
    c.socket.write("POST /api/users HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 70000\r\n\r\n{");
    const answer = parseAnswer(await c.waitFor((t) => parseAnswer(t) !== undefined)) as NonNullable<ReturnType<typeof parseAnswer>>;
    expect(answer.status).toBe(413);
    expect(answer.headers["content-type"]).toBe("application/problem+json");
    expect(answer.headers.connection).toBe("close");
    expect(JSON.parse(answer.body)).toMatchObject({ type: "/problems/payload-too-large", status: 413, detail: "the body is 70000 bytes; at most 65536 are accepted" });
    await c.waitClosed();
  });

  test("a chunked body over 64 KiB is a 413 problem; one under it is served", async () => {
    const big = new ReadableStream({
      start(controller) {
        for (let i = 0; i < 10; i++) controller.enqueue(new TextEncoder().encode(" ".repeat(10_000)));
        controller.close();
      },
    });
    const res = await fetch(`${srv.url}/api/users`, { method: "POST", body: big, headers: { "content-type": "application/json" } });
    expect(res.status).toBe(413);
    expect(await res.json()).toMatchObject({ type: "/problems/payload-too-large", detail: "the body is more than 65536 bytes; at most 65536 are accepted" });
    const small = new ReadableStream({
      start(controller) {
        controller.enqueue(new TextEncoder().encode('{"startRow": 2,'));
        controller.enqueue(new TextEncoder().encode(`${" ".repeat(60_000)}"endRow": 4}`));
        controller.close();
      },
    });
    const ok = await fetch(`${srv.url}/api/users`, { method: "POST", body: small });
    expect(ok.status).toBe(200);
    expect((await ok.json()).data.map((r: UserRecord) => r.id)).toEqual([3, 4]);
  });

  test("a 10 MB chunked body is refused after 64 KiB, long before it is all sent", async () => {
    const c = await openRaw(port());
    c.socket.write("POST /api/users HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n");
    const piece = chunk(" ".repeat(16 * 1024));
    let sent = 0;
    let sentWhenAnswered = -1;
    // 16 KiB, then a round trip to the server on another connection (a turn of its loop, in which
    // it reads what arrived): the answer comes after about 5 chunks, long before 10 MB.
    while (sent < 10_000_000 && !c.closed()) {
      if (sentWhenAnswered < 0 && parseAnswer(c.received()) !== undefined) sentWhenAnswered = sent;
      c.socket.write(piece);
      sent += 16 * 1024;
      await fetch(`http://127.0.0.1:${port()}/healthz`);
    }
    if (sentWhenAnswered < 0) sentWhenAnswered = sent;
    const answer = parseAnswer(c.received());
    expect(answer?.status).toBe(413);
    expect(answer?.headers["content-type"]).toBe("application/problem+json");
    expect(answer?.headers.connection).toBe("close");
    expect(sentWhenAnswered).toBeLessThan(1024 * 1024);
    expect(c.closed()).toBe(true);
    expect(sent).toBeLessThan(10_000_000);
  });

  test("a body declared over Bun's own limit gets Bun's bare 413 and a closed connection", async () => {
    const c = await openRaw(port());
    c.socket.write("POST /api/users HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 10000000\r\n\r\n");
    await c.waitFor((t) => t.includes("\r\n\r\n"));
    expect(c.received()).toStartWith("HTTP/1.1 413 ");
    expect(c.received().toLowerCase()).toContain("connection: close");
    await c.waitClosed();
  });
});

describe("a client that hangs up mid-body", () => {
  test("is logged once at info level in one short line, never as an error", async () => {
    const lines: { level: number; msg: string }[] = [];
    let wake: (() => void) | null = null;
    const stream = new Writable({
      write(chunkBytes, _encoding, done) {
        for (const line of String(chunkBytes).split("\n")) if (line !== "") lines.push(JSON.parse(line));
        wake?.();
        done();
      },
    });
    /** Settles once `count` hang-ups are logged. */
    const closedLine = async (count: number) => {
      while (lines.filter((l) => l.msg.includes("closed the connection")).length < count) {
        await new Promise<void>((resolve) => {
          wake = resolve;
        });
      }
    };
    const logged = startTestServer(RECORDS, 100, { logger: pino({ level: "debug" }, stream) });
    try {
      for (const framing of ["Content-Length: 1000", "Transfer-Encoding: chunked"]) {
        const c = await openRaw(logged.server.port);
        const first = framing.startsWith("Content") ? '{"startRow": 0,' : chunk('{"startRow": 0,').toString();
        c.socket.write(`POST /api/users HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n${framing}\r\n\r\n${first}`);
        // the server has the request (it answers another one on the same turn of its loop after reading it)
        expect((await fetch(`${logged.url}/healthz`)).status).toBe(200);
        c.socket.destroy();
        const hangups = lines.filter((l) => l.msg.includes("closed the connection")).length;
        await closedLine(hangups + 1);
      }
      const aborted = lines.filter((l) => l.msg.includes("closed the connection"));
      expect(aborted.map((l) => [l.level, l.msg])).toEqual([
        [30, "the client closed the connection before sending the whole body"],
        [30, "the client closed the connection before sending the whole body"],
      ]);
      expect(lines.filter((l) => l.level >= 50)).toEqual([]);
      // The server goes on answering.
      expect((await fetch(`${logged.url}/api/users?pageSize=1`)).status).toBe(200);
    } finally {
      await logged.close();
    }
  });
});
