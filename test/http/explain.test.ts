/**
 * Explain over a real socket (docs/api.md "Explain"): GET and POST take the listing's
 * parameters and body, answer the normalized query and the plan without reading rows, and with
 * analyze run the query: the steps' rows are the listing's rows and totals, the root's op is
 * the path the executor took, and an expensive plan still answers (from the deferred queue).
 * Every error is the listing's.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { DEFER_ABOVE } from "../../src/engine/planner.ts";
import { generateUsers } from "../../src/generate/users.ts";
import { type TestServer, startTestServer } from "../support/server.ts";

/** 20,000 generated users: enough rows for every kind of plan (posting lists, scans, walks, sorts). */
const USERS = Array.from(generateUsers({ count: 20_000, seed: 11 }));

let srv: TestServer;
beforeAll(() => {
  srv = startTestServer(USERS, 1000);
}, 60_000);
afterAll(() => srv.close());

/** A printed plan step (docs/api.md "Explain"). */
interface Step {
  op: string;
  column?: string;
  index?: string;
  detail?: string;
  estimatedRows: number;
  estimatedCost: number;
  rows?: number;
  ms?: number;
  children?: Step[];
}

/** An answer's status, headers and JSON body. */
async function answer(response: Response) {
  return { status: response.status, headers: response.headers, body: (await response.json()) as any };
}
const get = async (path: string, headers: Record<string, string> = {}) => answer(await fetch(srv.url + path, { headers }));
const post = async (path: string, body: unknown) =>
  answer(await fetch(srv.url + path, { method: "POST", headers: { "content-type": "application/json" }, body: typeof body === "string" ? body : JSON.stringify(body) }));

/** Every step of a plan, depth first. */
function steps(step: Step): Step[] {
  return [step, ...(step.children ?? []).flatMap(steps)];
}

/** A fresh engine over the same snapshot: empty caches. */
async function freshEngine() {
  await srv.server.reload();
  return srv.server.engine();
}

describe("explain without analyze", () => {
  test("GET: the normalized query and the plan, and no row read", async () => {
    const engine = await freshEngine();
    const r = await get("/api/users/explain?page=3&limit=5&sort=name&order=DESC&filter[status]=Inactive&filter[id]=10,4000&q=ann");
    expect(r.status).toBe(200);
    expect(r.body.query).toEqual({
      filter: {
        kind: "and",
        children: [
          { kind: "column", column: "status", test: { op: "set", values: ["inactive"], nulls: false } },
          { kind: "column", column: "id", test: { op: "range", lo: 10, loOpen: false, hi: 4000, hiOpen: false, negate: false } },
          { kind: "search", terms: ["ann"] },
        ],
      },
      sort: [{ column: "name", direction: "desc", absolute: false }],
      offset: 10,
      limit: 5,
    });
    const plan = r.body.plan as Step;
    expect(plan.column).toBe("name");
    expect(plan.detail).toBe("rows 10..15 by name desc");
    expect(plan.children).toHaveLength(1);
    expect(plan.children?.[0].op).toBe("and");
    for (const step of steps(plan)) {
      expect(Number.isInteger(step.estimatedRows) && Number.isInteger(step.estimatedCost)).toBe(true);
      expect(step.rows).toBeUndefined();
      expect(step.ms).toBeUndefined();
    }
    // nothing ran: no filter evaluated or cached, no order made
    expect(engine.filters.hits + engine.filters.misses).toBe(0);
    expect(engine.filters.size).toBe(0);
    expect(engine.orders.size).toBe(0);
  });

  test("POST: the listing body's query; an open range leaves its bound out", async () => {
    const body = {
      startRow: 100,
      endRow: 150,
      sortModel: [{ colId: "email", sort: "asc" }],
      filterModel: { name: { filterType: "text", type: "contains", filter: "Mar" }, id: { filterType: "number", type: "greaterThan", filter: "500" } },
      quickFilter: "  ab   cd ",
      context: { ignored: true },
    };
    const r = await post("/api/users/explain", body);
    expect(r.status).toBe(200);
    expect(r.body.query).toEqual({
      filter: {
        kind: "and",
        children: [
          {
            kind: "and",
            children: [
              { kind: "column", column: "name", test: { op: "text", type: "contains", value: "Mar" } },
              { kind: "column", column: "id", test: { op: "range", lo: 500, loOpen: true, negate: false } },
            ],
          },
          { kind: "search", terms: ["ab", "cd"] },
        ],
      },
      sort: [{ column: "email", direction: "asc", absolute: false }],
      offset: 100,
      limit: 50,
    });
    expect(r.body.plan.column).toBe("email");
    expect(steps(r.body.plan).every((s) => s.rows === undefined)).toBe(true);
  });

  test("a weak ETag, X-Snapshot-Id, Cache-Control; 304 on If-None-Match; other requests other tags; HEAD", async () => {
    const path = "/api/users/explain?pageSize=7&sortBy=email&filter[name]=ann";
    const r = await get(path);
    const etag = r.headers.get("etag") as string;
    expect(etag).toMatch(/^W\/"[0-9a-z]+-[0-9a-z]+"$/);
    expect(r.headers.get("x-snapshot-id")).toBe(srv.server.engine().store.snapshotId);
    expect(r.headers.get("cache-control")).toBe("no-cache");
    const again = await fetch(srv.url + path, { headers: { "if-none-match": etag } });
    expect(again.status).toBe(304);
    expect(again.headers.get("etag")).toBe(etag);
    expect(await again.text()).toBe("");
    // the strong form names the same representation under weak comparison
    expect((await fetch(srv.url + path, { headers: { "if-none-match": etag.slice(2) } })).status).toBe(304);
    expect((await get("/api/users/explain?pageSize=8&sortBy=email&filter[name]=ann")).headers.get("etag")).not.toBe(etag);
    // the listing's own tag is another representation's
    expect((await fetch(srv.url + path.replace("/explain", ""), { headers: { "if-none-match": etag } })).status).toBe(200);
    // analyze asks for a run: never a 304, and its own tag
    const analyzed = await fetch(`${srv.url}${path}&analyze=true`, { headers: { "if-none-match": etag } });
    expect(analyzed.status).toBe(200);
    expect(analyzed.headers.get("etag")).not.toBe(etag);
    const analyzedTag = analyzed.headers.get("etag") as string;
    expect((await fetch(`${srv.url}${path}&analyze=true`, { headers: { "if-none-match": analyzedTag } })).status).toBe(200);
    const head = await fetch(srv.url + path, { method: "HEAD" });
    expect(head.status).toBe(200);
    expect(head.headers.get("etag")).toBe(etag);
    expect(await head.text()).toBe("");
    const posted = await fetch(`${srv.url}/api/users/explain`, { method: "POST", body: "{}" });
    expect(posted.headers.get("etag")).toMatch(/^W\//);
    expect(posted.headers.get("x-snapshot-id")).toBe(srv.server.engine().store.snapshotId);
  });
});

/** Listing requests, as GET query strings, whose plans cover the kinds of steps. */
const GET_QUERIES = [
  "pageSize=20",
  "page=50&pageSize=30&sortBy=name&sortOrder=desc",
  "pageSize=20&sortBy=email&filter[name]=mar",
  "page=3&pageSize=25&filter[status]=inactive&sortBy=name",
  "pageSize=10&filter[name]=ma&filter[id]=100,15000",
  "pageSize=15&sortBy=id&sortOrder=desc&filter[email]=gmail&filter[status]=active",
  "page=2&pageSize=50&filter[id]=,900",
  "pageSize=5&sortBy=email&filter[name]=zzzzqq",
];

describe("explain with analyze: the plan that ran", () => {
  test("GET: the root's rows are the page's rows, the filter's the total; every step has its rows and time", async () => {
    for (const query of GET_QUERIES) {
      await freshEngine();
      const listing = await get(`/api/users?${query}`);
      expect(listing.status).toBe(200);
      await freshEngine();
      const r = await get(`/api/users/explain?${query}&analyze=true`);
      expect(r.status).toBe(200);
      const plan = r.body.plan as Step;
      expect({ query, rows: plan.rows }).toEqual({ query, rows: listing.body.data.length });
      expect({ query, total: plan.children?.[0].rows }).toEqual({ query, total: listing.body.total });
      for (const step of steps(plan)) {
        expect({ query, op: step.op, rows: typeof step.rows, ms: typeof step.ms }).toEqual({ query, op: step.op, rows: "number", ms: "number" });
        expect(step.ms as number).toBeGreaterThanOrEqual(0);
      }
      // the query ran: its filter was evaluated (and cached) as the listing's would be
      const engine = srv.server.engine();
      expect(engine.filters.misses).toBe(query.includes("filter[") ? 1 : 0);
    }
  });

  test("an AND's children give each filter's own total", async () => {
    const r = await get("/api/users/explain?pageSize=10&sortBy=email&filter[name]=an&filter[email]=yahoo&filter[id]=1000,12000&analyze=true");
    const and = (r.body.plan as Step).children?.[0] as Step;
    expect(and.op).toBe("and");
    const totals = await Promise.all(["filter[name]=an", "filter[email]=yahoo", "filter[id]=1000,12000"].map(async (f) => (await get(`/api/users?${f}`)).body.total));
    // the children in the order the planner chose: compare as sets of (column, rows)
    const byColumn = Object.fromEntries((and.children as Step[]).map((c) => [c.column, c.rows]));
    expect(byColumn).toEqual({ name: totals[0], email: totals[1], id: totals[2] });
    expect(and.rows).toBe((await get("/api/users?filter[name]=an&filter[email]=yahoo&filter[id]=1000,12000")).body.total);
  });

  test("POST: rows of a row window and the total, for AG Grid's models", async () => {
    const bodies = [
      { startRow: 0, endRow: 100, sortModel: [{ colId: "status", sort: "asc" }, { colId: "name", sort: "desc" }], filterModel: {} },
      { startRow: 200, endRow: 300, sortModel: [{ colId: "name", sort: "asc" }], filterModel: { email: { filterType: "text", type: "endsWith", filter: ".com" } } },
      { startRow: 0, endRow: 100, sortModel: [], filterModel: { status: { filterType: "set", values: ["inactive"] }, name: { filterType: "text", type: "startsWith", filter: "j" } } },
      { startRow: 19_950, endRow: 20_050, sortModel: [{ colId: "id", sort: "desc" }], filterModel: null, quickFilter: "a" },
    ];
    for (const body of bodies) {
      await freshEngine();
      const listing = await post("/api/users", body);
      await freshEngine();
      const r = await post("/api/users/explain", { ...body, analyze: true });
      expect(r.status).toBe(200);
      const plan = r.body.plan as Step;
      expect({ body, rows: plan.rows, total: plan.children?.[0].rows }).toEqual({ body, rows: listing.body.data.length, total: listing.body.total });
    }
  });

  test("the root's op is the path the executor took", async () => {
    const query = "pageSize=20&sortBy=name&filter[email]=mar";
    // forced: the executor sorts the matches, and says so; the next window reads the order it cached
    let engine = await freshEngine();
    engine.plan = "sort";
    expect((await get(`/api/users/explain?${query}&analyze=true`)).body.plan.op).toBe("sort");
    expect(engine.orders.size).toBe(1);
    expect((await get(`/api/users/explain?${query}&page=2&analyze=true`)).body.plan.op).toBe("cachedOrder");
    // forced: the executor walks the name order
    engine = await freshEngine();
    engine.plan = "walk";
    expect((await get(`/api/users/explain?${query}&analyze=true`)).body.plan.op).toBe("walk");
    expect((await get(`/api/users/explain?${query}&page=2&analyze=true`)).body.plan.op).toBe("walk");
    // chosen by cost: one of the two, and the next window follows from it
    await freshEngine();
    const chosen = (await get(`/api/users/explain?${query}&analyze=true`)).body.plan.op;
    expect(["walk", "sort"]).toContain(chosen);
    // a sort keeps the sorted matches: the next window is a slice of them
    const next = (await get(`/api/users/explain?${query}&page=2&analyze=true`)).body.plan.op;
    if (chosen === "sort") expect(next).toBe("cachedOrder");
    else expect(["walk", "sort"]).toContain(next);
    // no filter, or one on the partition column: a slice of a stored order; no order cached
    engine = await freshEngine();
    expect((await get("/api/users/explain?pageSize=20&sortBy=email&analyze=true")).body.plan.op).toBe("slice");
    expect((await get("/api/users/explain?pageSize=20&sortBy=email&filter[status]=inactive&analyze=true")).body.plan.op).toBe("slice");
    // no sort, a few hundred matches verified from trigram lists: the first matches in key order
    expect((await get("/api/users/explain?pageSize=20&filter[name]=mari&analyze=true")).body.plan.op).toBe("keyOrder");
    expect(engine.orders.size).toBe(0);
    // the filter ran once and is then read from the cache
    const again = (await get("/api/users/explain?pageSize=20&filter[name]=mari&page=3&analyze=true")).body.plan as Step;
    expect(again.children?.[0].op).toBe("cached");
  });

  test("an expensive plan runs from the deferred queue and answers the same", async () => {
    await freshEngine();
    const query = "pageSize=20&sortBy=email&filter[name]=ma&q=ab";
    const planned = (await get(`/api/users/explain?${query}`)).body.plan as Step;
    expect(planned.estimatedCost).toBeGreaterThan(DEFER_ABOVE);
    const r = await get(`/api/users/explain?${query}&analyze=true`);
    const listing = await get(`/api/users?${query}`);
    expect(r.body.plan.rows).toBe(listing.body.data.length);
    expect(r.body.plan.children[0].rows).toBe(listing.body.total);
  });
});

describe("explain refuses what the listing refuses, with the same problem", () => {
  test("GET: every bad listing request gets the listing's answer", async () => {
    const bad = [
      "page=0",
      "pageSize=1001",
      "pageSize=5&limit=6",
      "sortBy=nope",
      "sortBy=name&sortOrder=up",
      "filter[nope]=1",
      "filter[id]=abc",
      "filter[status]=pending",
      `filter[name]=${"x".repeat(257)}`,
      "q=ab&search=cd",
      "page=x&sortBy=nope&filter[id]=1,2,3",
    ];
    for (const query of bad) {
      const listing = await get(`/api/users?${query}`);
      const explained = await get(`/api/users/explain?${query}`);
      expect(listing.status).toBe(400);
      expect({ query, status: explained.status, body: explained.body }).toEqual({ query, status: 400, body: listing.body });
      expect(explained.headers.get("content-type")).toBe("application/problem+json");
      // analyze changes nothing in the refusal
      expect((await get(`/api/users/explain?${query}&analyze=true`)).body).toEqual(listing.body);
    }
  });

  test("GET: a bad analyze is a 400 naming it, listed after the listing's own errors", async () => {
    const r = await get("/api/users/explain?analyze=yes");
    expect(r.status).toBe(400);
    expect(r.body).toMatchObject({ type: "/problems/bad-parameter", errors: [{ parameter: "analyze", detail: 'must be true or false (got "yes")' }] });
    const both = await get("/api/users/explain?sortBy=nope&analyze=1");
    expect(both.body.errors.map((e: { parameter: string }) => e.parameter)).toEqual(["sortBy", "analyze"]);
    expect((await get("/api/users/explain?analyze=TRUE&pageSize=1")).body.plan.rows).toBe(1);
    expect((await get("/api/users/explain?analyze=false&pageSize=1")).body.plan.rows).toBeUndefined();
  });

  test("POST: bad bodies, malformed JSON, grouping, media types and sizes as the listing answers them", async () => {
    const bodies: unknown[] = [
      [],
      "7",
      { startRow: -1 },
      { startRow: 10, endRow: 5 },
      { startRow: 0, endRow: 5000 },
      { sortModel: [{ colId: "nope", sort: "asc" }] },
      { filterModel: { name: { filterType: "number", type: "equals", filter: 1 } } },
      { filterModel: { status: { filterType: "set", values: ["pending"] } } },
      { filterModel: { id: { filterType: "number", type: "inRange", filter: 1 } } },
      { quickFilter: 42 },
      { rowGroupCols: [{ id: "status" }], groupKeys: [] },
      { pivotMode: true },
      "{not json",
    ];
    for (const body of bodies) {
      const listing = await post("/api/users", body);
      const explained = await post("/api/users/explain", body);
      expect(listing.status).toBe(400);
      expect({ body, status: explained.status, problem: explained.body }).toEqual({ body, status: 400, problem: listing.body });
    }
    const bad = await post("/api/users/explain", { analyze: "yes", startRow: -1 });
    expect(bad.body.errors.map((e: { pointer: string }) => e.pointer)).toEqual(["/startRow", "/analyze"]);
    const media = await fetch(`${srv.url}/api/users/explain`, { method: "POST", headers: { "content-type": "text/plain" }, body: "{}" });
    expect(media.status).toBe(415);
    const large = await fetch(`${srv.url}/api/users/explain`, { method: "POST", headers: { "content-type": "application/json" }, body: `{"x":"${"a".repeat(70_000)}"}` });
    expect(large.status).toBe(413);
    expect((await large.json()).type).toBe("/problems/payload-too-large");
  });

  test("another method is a 405 listing the path's methods", async () => {
    const r = await fetch(`${srv.url}/api/users/explain`, { method: "DELETE" });
    expect(r.status).toBe(405);
    expect(r.headers.get("allow")).toBe("GET, HEAD, POST, OPTIONS");
    expect((await fetch(`${srv.url}/api/users/explain/`)).status).toBe(404);
  });
});
