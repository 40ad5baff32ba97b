/**
 * Global search, facets and export over a real socket (docs/api.md "Global search", "Facets",
 * "Export"): random requests on the default data (100,000 generated users) checked against the
 * naive oracle, a wide snapshot's every column kind, the envelope (ETag, 304, HEAD, gzip,
 * Content-Disposition), every refusal as problem+json, and an export's back-pressure and abort.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { Writable } from "node:stream";
import { gunzipSync } from "node:zlib";
import fc from "fast-check";
import pino from "pino";
import { DEFAULT_DATA } from "../../src/cli.ts";
import { generateUsers } from "../../src/generate/users.ts";
import type { ColumnSpec } from "../../src/schema/kinds.ts";
import { oracleFacets, oraclePost, oracleRows } from "../support/table-oracle.ts";
import { csvRows } from "../support/csv.ts";
import { openRaw } from "../support/raw-http.ts";
import { type TestServer, startTestServer } from "../support/server.ts";
import { SEED_SPECS, type Table, type WideRecord, buildStoreFromRecords, buildWideStore } from "../support/table-store.ts";

/** The default data's table: the seed's four columns, keyed by id. */
const SEED_TABLE: Table = { specs: SEED_SPECS, key: "id" };

let srv: TestServer;
let records: WideRecord[];
// building the default data's 100,000 users takes seconds on a busy machine: past the hook's default bound
beforeAll(() => {
  srv = startTestServer("default");
  records = Array.from(generateUsers(DEFAULT_DATA)) as WideRecord[];
}, 120_000);
afterAll(() => srv.close());

/** A search term: a piece of a record's name, email or id, in random case. */
const termArb = fc
  .tuple(fc.nat(DEFAULT_DATA.count - 1), fc.constantFrom("name", "email", "id"), fc.nat(30), fc.integer({ min: 1, max: 6 }), fc.boolean())
  .map(([i, column, at, len, upper]) => {
    const value = String(records[i][column]);
    const start = at % Math.max(1, value.length);
    const piece = value.slice(start, start + len).trim() || value;
    return upper ? piece.toUpperCase() : piece;
  });
const searchArb = fc.array(termArb, { minLength: 1, maxLength: 2 }).map((terms) => terms.join(" "));

const json = async (response: Response) => ({ status: response.status, body: (await response.json()) as Record<string, unknown>, response });
const postJson = (path: string, body: unknown, headers: Record<string, string> = {}) =>
  fetch(srv.url + path, { method: "POST", headers: { "content-type": "application/json", ...headers }, body: JSON.stringify(body) });

describe("global search on the default data", () => {
  test("GET q and search, POST quickFilter: the oracle's rows and totals", async () => {
    const cases = fc.sample(fc.record({ q: searchArb, status: fc.option(fc.constantFrom("active", "inactive"), { nil: undefined }), sortBy: fc.constantFrom("id", "name", "email") }), 30);
    for (const c of cases) {
      const filterModel: Record<string, Record<string, unknown>> = c.status === undefined ? {} : { status: { filterType: "set", values: [c.status] } };
      const expected = oraclePost(records, SEED_TABLE, { startRow: 0, endRow: 20, sortModel: [{ colId: c.sortBy, sort: "asc" }], filterModel, quickFilter: c.q });
      const params = new URLSearchParams({ q: c.q, sortBy: c.sortBy, pageSize: "20" });
      if (c.status !== undefined) params.set("filter[status]", c.status);
      const get = await json(await fetch(`${srv.url}/api/users?${params}`));
      expect(get.status).toBe(200);
      expect({ keys: (get.body.data as WideRecord[]).map((r): unknown => r.id), total: get.body.total }).toEqual(expected);
      expect((get.body.meta as { q: string }).q).toBe(c.q.split(/\s+/).filter(Boolean).join(" "));
      const alias = await json(await fetch(`${srv.url}/api/users?${params.toString().replace(/^q=/, "search=")}`));
      expect(alias.body.total).toBe(expected.total);
      const post = await json(await postJson("/api/users", { startRow: 0, endRow: 20, sortModel: [{ colId: c.sortBy, sort: "asc" }], filterModel, quickFilter: c.q }));
      expect({ keys: (post.body.data as WideRecord[]).map((r): unknown => r.id), total: post.body.total }).toEqual(expected);
    }
  }, 120_000);

  test("an empty search is no search; refusals are problem+json", async () => {
    const all = await json(await fetch(`${srv.url}/api/users?q=%20%20`));
    expect(all.body.total).toBe(DEFAULT_DATA.count);
    const long = await json(await fetch(`${srv.url}/api/users?q=${"x".repeat(257)}`));
    expect(long.status).toBe(400);
    expect(long.response.headers.get("content-type")).toBe("application/problem+json");
    expect(long.body.errors).toEqual([{ parameter: "q", detail: "is 257 characters long; at most 256 are accepted" }]);
    const disagree = await json(await fetch(`${srv.url}/api/users?q=ab&search=cd`));
    expect(disagree.status).toBe(400);
    const notString = await json(await postJson("/api/users", { quickFilter: 42 }));
    expect(notString.status).toBe(400);
    expect(notString.body.errors).toEqual([{ pointer: "/quickFilter", detail: "must be a string (got 42)" }]);
  });
});

describe("facets on the default data", () => {
  test("GET and POST: status, name, email and id under filters and a search, against the oracle", async () => {
    const cases = fc.sample(
      fc.record({
        q: fc.option(searchArb, { nil: undefined }),
        name: fc.option(termArb, { nil: undefined }),
        status: fc.option(fc.constantFrom("active", "inactive"), { nil: undefined }),
        columns: fc.subarray(["status", "name", "email", "id"], { minLength: 1 }),
        limit: fc.integer({ min: 1, max: 30 }),
        search: fc.option(fc.constantFrom("a", "li", "ÉM", "gmail"), { nil: undefined }),
      }),
      6,
    );
    for (const c of cases) {
      const filterModel: Record<string, Record<string, unknown>> = {};
      if (c.name !== undefined) filterModel.name = { filterType: "text", type: "contains", filter: c.name };
      if (c.status !== undefined) filterModel.status = { filterType: "set", values: [c.status] };
      const expected = oracleFacets(records, SEED_TABLE, { columns: c.columns, filterModel, quickFilter: c.q, limit: c.limit, search: c.search });
      const post = await json(await postJson("/api/users/facets", { columns: c.columns, filterModel, quickFilter: c.q ?? null, limit: c.limit, search: c.search ?? null }));
      expect(post.status).toBe(200);
      expect(post.body).toEqual(expected);
      const params = new URLSearchParams({ columns: c.columns.join(","), facetLimit: String(c.limit) });
      if (c.q !== undefined) params.set("q", c.q);
      if (c.search !== undefined) params.set("facetSearch", c.search);
      if (c.name !== undefined) params.set("filter[name]", c.name);
      if (c.status !== undefined) params.set("filter[status]", c.status);
      const get = await json(await fetch(`${srv.url}/api/users/facets?${params}`));
      expect(get.body).toEqual(expected);
    }
  }, 120_000);

  test("unfiltered status counts are the partition sizes; ETag, 304, HEAD", async () => {
    const first = await json(await fetch(`${srv.url}/api/users/facets?columns=status`));
    const active = records.filter((r) => r.status === "active").length;
    expect(first.body).toEqual({
      facets: { status: { kind: "enum", values: [{ value: "active", count: active }, { value: "inactive", count: records.length - active }].sort((a, b) => b.count - a.count), distinct: 2, nulls: 0 } },
      total: records.length,
    });
    const etag = first.response.headers.get("etag") as string;
    expect(first.response.headers.get("x-snapshot-id")).toMatch(/^[0-9a-f]{16}$/);
    expect(first.response.headers.get("cache-control")).toBe("no-cache");
    const again = await fetch(`${srv.url}/api/users/facets?columns=status`, { headers: { "if-none-match": etag } });
    expect(again.status).toBe(304);
    expect(await again.text()).toBe("");
    const other = await fetch(`${srv.url}/api/users/facets?columns=status&q=ali`, { headers: { "if-none-match": etag } });
    expect(other.status).toBe(200);
    const head = await fetch(`${srv.url}/api/users/facets?columns=status`, { method: "HEAD" });
    expect(head.status).toBe(200);
    expect(head.headers.get("etag")).toBe(etag);
  });

  test("refusals: no columns, unknown column, bad limit and search, as problem+json listing each", async () => {
    const none = await json(await fetch(`${srv.url}/api/users/facets`));
    expect(none.status).toBe(400);
    expect(none.body.errors).toEqual([{ parameter: "columns", detail: "required: a comma list of the columns to count" }]);
    const bad = await json(await fetch(`${srv.url}/api/users/facets?columns=status,nope&facetLimit=1001&filter[id]=abc`));
    expect(bad.status).toBe(400);
    expect((bad.body.errors as { parameter: string }[]).map((e) => e.parameter).sort()).toEqual(["columns", "facetLimit", "filter[id]"]);
    const body = await json(await postJson("/api/users/facets", { columns: ["status", 7], limit: 0, search: 3, quickFilter: "x".repeat(300) }));
    expect(body.status).toBe(400);
    expect((body.body.errors as { pointer: string }[]).map((e) => e.pointer).sort()).toEqual(["/columns/1", "/limit", "/quickFilter", "/search"]);
    const empty = await json(await postJson("/api/users/facets", {}));
    expect(empty.body.errors).toEqual([{ pointer: "/columns", detail: "required: a non-empty array of column ids" }]);
  });
});

describe("export on the default data", () => {
  test("GET CSV: every match in order, RFC 4180, with its headers; gzip when accepted; 304", async () => {
    const response = await fetch(`${srv.url}/api/users/export?format=csv&q=ma&sortBy=email&sortOrder=desc&filter[status]=active`);
    expect(response.status).toBe(200);
    expect(response.headers.get("content-type")).toBe("text/csv; charset=utf-8; header=present");
    const snapshotId = response.headers.get("x-snapshot-id");
    expect(response.headers.get("content-disposition")).toBe(`attachment; filename="users-${snapshotId}.csv"`);
    const text = await response.text();
    const rows = csvRows(text);
    expect(rows[0]).toEqual(["id", "name", "email", "status"]);
    const expected = oracleRows(records, SEED_TABLE, { sortModel: [{ colId: "email", sort: "desc" }], filterModel: { status: { filterType: "set", values: ["active"] } }, quickFilter: "ma" });
    expect(expected.length).toBeGreaterThan(1000);
    expect(rows.slice(1)).toEqual(expected.map((r) => [String(r.id), String(r.name), String(r.email), String(r.status)]));
    const gz = await fetch(`${srv.url}/api/users/export?format=csv&q=ma&sortBy=email&sortOrder=desc&filter[status]=active`, { headers: { "accept-encoding": "gzip" }, decompress: false } as RequestInit);
    expect(gz.headers.get("content-encoding")).toBe("gzip");
    expect(gunzipSync(Buffer.from(await gz.arrayBuffer())).toString("utf8")).toBe(text);
    const etag = response.headers.get("etag") as string;
    const again = await fetch(`${srv.url}/api/users/export?format=csv&q=ma&sortBy=email&sortOrder=desc&filter[status]=active`, { headers: { "if-none-match": etag } });
    expect(again.status).toBe(304);
  }, 60_000);

  test("POST NDJSON: every row of an AG Grid model, multi-key sort; a whole-table export", async () => {
    const body = { format: "ndjson", sortModel: [{ colId: "status", sort: "desc" }, { colId: "name", sort: "asc" }], filterModel: { email: { filterType: "text", type: "endsWith", filter: ".com" } }, quickFilter: "an", startRow: 5, endRow: 6 };
    const response = await postJson("/api/users/export", body);
    expect(response.status).toBe(200);
    expect(response.headers.get("content-type")).toBe("application/x-ndjson");
    const lines = (await response.text()).split("\n");
    expect(lines.pop()).toBe("");
    expect(lines.map((l) => JSON.parse(l))).toEqual(oracleRows(records, SEED_TABLE, body as never));
    const all = await (await fetch(`${srv.url}/api/users/export?format=ndjson`)).text();
    expect(all.split("\n").length - 1).toBe(records.length);
  }, 60_000);

  test("refusals: an unknown format, a bad sort", async () => {
    const bad = await json(await fetch(`${srv.url}/api/users/export?format=xlsx&sortBy=nope`));
    expect(bad.status).toBe(400);
    expect((bad.body.errors as { parameter: string }[]).map((e) => e.parameter).sort()).toEqual(["format", "sortBy"]);
    const post = await json(await postJson("/api/users/export", { format: 1 }));
    expect(post.body.errors).toEqual([{ pointer: "/format", detail: "must be one of csv, ndjson (got 1)" }]);
  });
});

describe("export streaming", () => {
  let big: TestServer;
  const lines: Record<string, unknown>[] = [];
  const waiters: { msg: string; resolve: () => void }[] = [];
  /** Settles once the server has logged a line with message `msg`. */
  const logged = (msg: string) =>
    lines.some((l) => l.msg === msg)
      ? Promise.resolve()
      : new Promise<void>((resolve) => {
          waiters.push({ msg, resolve });
        });
  beforeAll(() => {
    const sink = new Writable({
      write(chunk, _encoding, done) {
        for (const line of String(chunk).split("\n")) if (line !== "") lines.push(JSON.parse(line));
        for (const waiter of [...waiters]) if (lines.some((l) => l.msg === waiter.msg)) waiter.resolve();
        done();
      },
    });
    const users = Array.from(generateUsers({ count: 400_000, seed: 7 }));
    big = startTestServer(buildStoreFromRecords(users), 1000, { logger: pino({ level: "info" }, sink) });
  }, 120_000);
  afterAll(() => big.close());

  test("a client that stops reading stops the batches; one that goes away ends the export", async () => {
    // a raw socket: fetch would read the whole body into its own buffer whatever the reader does
    const raw = await openRaw(Number(new URL(big.url).port));
    raw.socket.write("GET /api/users/export?format=csv HTTP/1.1\r\nHost: x\r\n\r\n");
    await raw.waitFor((text) => text.length > 100_000);
    raw.socket.pause();
    // not reading while the server answers 200 other requests, one after the other (each a
    // turn of its event loop): it writes what the socket buffers take, then waits (without
    // back-pressure it would make all 400,000 rows, ~35 MB, in far fewer turns)
    for (let i = 0; i < 200; i++) expect((await fetch(`${big.url}/api/users?pageSize=1&page=${i + 1}`)).status).toBe(200);
    raw.socket.destroy();
    await logged("export stopped: the client went away");
    const stopped = lines.find((l) => l.msg === "export stopped: the client went away") as { rows: number; total: number };
    expect(stopped).toBeDefined();
    expect(stopped.total).toBe(400_000);
    expect(stopped.rows).toBeLessThan(200_000);
    // the server still answers
    expect((await fetch(`${big.url}/api/users?pageSize=1`)).status).toBe(200);
  }, 60_000);
});

describe("a wide snapshot: search, facets and export on every kind", () => {
  const SPECS: ColumnSpec[] = [
    { id: "role", kind: "enum", values: ["owner", "admin", "member"] },
    { id: "age", kind: "number" },
    { id: "joined", kind: "date" },
    { id: "verified", kind: "boolean" },
    { id: "notes", kind: "text" },
    { id: "prefs", kind: "json" },
  ];
  const WIDE: WideRecord[] = [
    { id: 1, name: "Ana", email: "ana@x.com", status: "active", role: "admin", age: 34, joined: "2020-01-05", verified: true, notes: "Café owner", prefs: { a: 1 } },
    { id: 2, name: "Bob", email: "bob@x.com", status: "inactive", role: "member", age: null, joined: null, verified: false, notes: null, prefs: [1, "x,y"] },
    { id: 3, name: "Cy", email: "cy@x.com", status: "active", role: null, age: 19, joined: "2021-07-01", verified: null, notes: 'says "hi", twice', prefs: null },
    { id: 4, name: "Di", email: "di@x.com", status: "active", role: "owner", age: 40, joined: "2019-03-03", verified: true, notes: "cafe regular", prefs: "plain" },
    { id: 5, name: "Ed", email: "ed@x.com", status: "inactive", role: "member", age: 34.5, joined: "2020-01-05", verified: false, notes: "", prefs: 7 },
  ];
  let wide: TestServer;
  beforeAll(() => {
    wide = startTestServer(buildWideStore(WIDE, SPECS));
  });
  afterAll(() => wide.close());

  test("search reaches text and enum columns; facets of every kind; CSV of every kind", async () => {
    const search = (await json(await fetch(`${wide.url}/api/users?q=CAFE%20ow`))).body;
    // "ow": Ana's notes ("owner") and Di's role (owner)
    expect((search.data as WideRecord[]).map((r) => r.id)).toEqual([1, 4]);
    expect((await json(await fetch(`${wide.url}/api/users?q=memb`))).body.total).toBe(2);
    const facets = await json(await fetch(`${wide.url}/api/users/facets?columns=role,age,joined,verified,notes&filter[role]=member`));
    expect(facets.body).toEqual(oracleFacets(WIDE, { specs: [...SEED_SPECS, ...SPECS], key: "id" }, { columns: ["role", "age", "joined", "verified", "notes"], filterModel: { role: { filterType: "set", values: ["member"] } } }));
    expect((facets.body.facets as Record<string, unknown>).role).toEqual({ kind: "enum", values: [{ value: "member", count: 2 }, { value: "owner", count: 1 }, { value: "admin", count: 1 }], distinct: 3, nulls: 1 });
    const json400 = await json(await fetch(`${wide.url}/api/users/facets?columns=prefs`));
    expect(json400.status).toBe(400);
    const csv = await (await fetch(`${wide.url}/api/users/export`)).text();
    expect(csv.split("\r\n")).toEqual([
      "id,name,email,status,role,age,joined,verified,notes,prefs",
      '1,Ana,ana@x.com,active,admin,34,2020-01-05,true,Café owner,"{""a"":1}"',
      '2,Bob,bob@x.com,inactive,member,,,false,,"[1,""x,y""]"',
      '3,Cy,cy@x.com,active,,19,2021-07-01,,"says ""hi"", twice",',
      '4,Di,di@x.com,active,owner,40,2019-03-03,true,cafe regular,"""plain"""',
      '5,Ed,ed@x.com,inactive,member,34.5,2020-01-05,false,"",7',
      "",
    ]);
  });
});
