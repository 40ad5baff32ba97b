import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import type { UserRecord } from "../../src/generate/record.ts";
import { type TestServer, startTestServer } from "../support/server.ts";

const RECORDS: UserRecord[] = [
  { id: 1, name: "Alice Martin", email: "alice.21@example.com", status: "active" },
  { id: 2, name: "alice martín", email: "alice.111@example.com", status: "inactive" },
  { id: 3, name: "Bob Stone", email: "bob@example.org", status: "active" },
  { id: 4, name: "José Núñez", email: "jose@example.es", status: "active" },
  { id: 5, name: "Émile Zola", email: "emile@example.fr", status: "inactive" },
  { id: 6, name: "Zoë Adams", email: "zoe@example.com", status: "active" },
  { id: 7, name: "Ivan Petrov", email: "ivan@example.ru", status: "inactive" },
  { id: 8, name: "Mary Ann Lee", email: "mary.ann@example.com", status: "active" },
  { id: 9, name: "eve", email: "eve@example.com", status: "active" },
  { id: 10, name: "Walter White", email: "walter@example.com", status: "inactive" },
  { id: 11, name: "Ann", email: "ann@example.com", status: "active" },
  { id: 12, name: "Карл", email: "karl@example.ru", status: "active" },
];

let srv: TestServer;
beforeAll(() => {
  srv = startTestServer(RECORDS, 50);
});
afterAll(() => srv.close());

async function get(query: string) {
  const res = await fetch(`${srv.url}/api/users${query}`);
  return { status: res.status, type: res.headers.get("content-type"), body: await res.json() };
}
async function post(body: unknown, headers: Record<string, string> = { "content-type": "application/json" }) {
  const res = await fetch(`${srv.url}/api/users`, { method: "POST", headers, body: typeof body === "string" ? body : JSON.stringify(body) });
  return { status: res.status, type: res.headers.get("content-type"), allow: res.headers.get("allow"), body: await res.json() };
}
const ids = (body: { data: UserRecord[] }) => body.data.map((r) => r.id);

describe("GET /api/users", () => {
  test("defaults: page 1, pageSize 10, id ascending, shapes A and B together", async () => {
    const r = await get("");
    expect(r.status).toBe(200);
    expect(r.type).toStartWith("application/json");
    expect(ids(r.body)).toEqual([1, 2, 3, 4, 5, 6, 7, 8, 9, 10]);
    expect(r.body.data[0]).toEqual(RECORDS[0]);
    expect(r.body).toMatchObject({ total: 12, page: 1, pageSize: 10, pagination: { page: 1, pageSize: 10, total: 12, totalPages: 2 }, meta: {} });
  });

  test("the seed's spelling and the alternative spelling give the same page", async () => {
    const a = await get("?page=4&pageSize=3&sortBy=name&sortOrder=desc");
    const b = await get("?page=4&limit=3&sort=name&order=DESC");
    expect(a.status).toBe(200);
    expect(a.body).toEqual(b.body);
    // Names descending (Карл first: Cyrillic sorts after Latin), case/accent-insensitive:
    // 12, 6, 10 | 8, 4, 7 | 9, 5, 3 | 11, 2, 1 — the tie alice martín = Alice Martin by id descending.
    expect(ids(a.body)).toEqual([11, 2, 1]);
    expect(ids((await get("?page=2&pageSize=3&sortBy=name&sortOrder=desc")).body)).toEqual([8, 4, 7]);
    expect(a.body.meta).toEqual({ sortBy: "name", sortOrder: "desc" });
  });

  test("brackets raw and percent-encoded; spaces as + and %20", async () => {
    const forms = ["?filter[name]=mary+ann", "?filter%5Bname%5D=mary%20ann", "?filter%5bname%5d=Mary+Ann", "?filter[name]=MARY%20ANN"];
    for (const q of forms) {
      const r = await get(q);
      expect(r.status).toBe(200);
      expect(ids(r.body)).toEqual([8]);
    }
    expect((await get("?filter[name]=mary+ann")).body.meta).toEqual({ filters: { name: "mary ann" } });
  });

  test("matching folds case and accents: jose finds José, ALI finds alice", async () => {
    expect(ids((await get("?filter[name]=jose")).body)).toEqual([4]);
    expect(ids((await get("?filter[name]=ALI&sortBy=id&sortOrder=desc")).body)).toEqual([2, 1]);
    expect(ids((await get("?filter[email]=.COM&pageSize=50")).body)).toEqual([1, 2, 6, 8, 9, 10, 11]);
  });

  test("status: whole values, comma list, case-insensitive", async () => {
    expect((await get("?filter[status]=inactive")).body.total).toBe(4);
    expect((await get("?filter[status]=ACTIVE,inactive")).body.total).toBe(12);
    expect((await get("?filter[status]=Active")).body.meta).toEqual({ filters: { status: "active" } });
  });

  test("id: equals, inclusive ranges with either side empty", async () => {
    expect(ids((await get("?filter[id]=4")).body)).toEqual([4]);
    expect(ids((await get("?filter[id]=3,5")).body)).toEqual([3, 4, 5]);
    expect(ids((await get("?filter[id]=10,")).body)).toEqual([10, 11, 12]);
    expect(ids((await get("?filter[id]=,2")).body)).toEqual([1, 2]);
    expect((await get("?filter[id]=10,")).body.meta).toEqual({ filters: { id: "10," } });
  });

  test("filters AND together; empty filter values are no filter; other parameters are ignored", async () => {
    const r = await get("?filter[status]=active&filter[email]=example.com&filter[name]=&_=12345&foo=bar");
    expect(ids(r.body)).toEqual([1, 6, 8, 9, 11]);
    expect(r.body.meta).toEqual({ filters: { status: "active", email: "example.com" } });
  });

  test("a page past the end has no rows and the true total", async () => {
    const r = await get("?page=99&pageSize=5");
    expect(r.body.data).toEqual([]);
    expect(r.body.total).toBe(12);
    expect(r.body.pagination.totalPages).toBe(3);
    const none = await get("?filter[name]=nobody");
    expect(none.body.pagination).toEqual({ page: 1, pageSize: 10, total: 0, totalPages: 0 });
  });

  const badCases: [string, string][] = [
    ["?page=0", "page"],
    ["?page=abc", "page"],
    ["?page=1.5", "page"],
    ["?pageSize=0", "pageSize"],
    ["?pageSize=51", "pageSize"],
    ["?limit=-1", "limit"],
    ["?pageSize=10&limit=20", "limit"],
    ["?sortBy=age", "sortBy"],
    ["?sort=age", "sort"],
    ["?sortBy=name&sort=email", "sort"],
    ["?sortOrder=up", "sortOrder"],
    ["?sortOrder=asc&order=desc", "order"],
    ["?filter[age]=3", "filter[age]"],
    ["?filter[status]=pending", "filter[status]"],
    ["?filter[id]=abc", "filter[id]"],
    ["?filter[id]=1,2,3", "filter[id]"],
    [`?filter[name]=${"x".repeat(257)}`, "filter[name]"],
    ["?filter[name=x", "filter[name"],
    ["?page=1&page=2", "page"],
  ];
  for (const [q, parameter] of badCases) {
    test(`400 problem+json for ${q.slice(0, 40)}`, async () => {
      const r = await get(q);
      expect(r.status).toBe(400);
      expect(r.type).toBe("application/problem+json");
      expect(r.body).toMatchObject({ type: "/problems/bad-parameter", title: "Invalid query parameter", status: 400 });
      expect(r.body.errors.map((e: { parameter: string }) => e.parameter)).toContain(parameter);
      expect(r.body.data).toBeUndefined();
    });
  }

  test("an unknown column's error lists the valid ones", async () => {
    const r = await get("?sortBy=age");
    expect(r.body.errors[0].detail).toContain("id, name, email, status");
  });
});

describe("POST /api/users", () => {
  test("a row window with defaults is shape C", async () => {
    const r = await post({ startRow: 0, endRow: 3 });
    expect(r.status).toBe(200);
    expect(r.body).toEqual({ data: RECORDS.slice(0, 3), total: 12 });
    expect(ids((await post({})).body)).toEqual(RECORDS.map((x) => x.id));
    expect(ids((await post("", {})).body)).toHaveLength(12);
  });

  test("endRow is exclusive and not clamped to the total", async () => {
    expect(ids((await post({ startRow: 10, endRow: 20 })).body)).toEqual([11, 12]);
    expect((await post({ startRow: 40, endRow: 50 })).body).toEqual({ data: [], total: 12 });
  });

  test("multi-key sortModel in array order", async () => {
    const r = await post({ startRow: 0, endRow: 5, sortModel: [{ colId: "status", sort: "desc" }, { colId: "name", sort: "asc" }] });
    // inactive first: alice martín(2), Émile(5), Ivan(7), Walter(10); then active by name: Alice Martin(1)...
    expect(ids(r.body)).toEqual([2, 5, 7, 10, 1]);
  });

  test("text, number, set and combined filter models", async () => {
    const q = async (filterModel: unknown, sortModel: unknown[] = []) => (await post({ startRow: 0, endRow: 50, filterModel, sortModel })).body;
    expect(ids(await q({ name: { filterType: "text", type: "startsWith", filter: "ALI" } }))).toEqual([1, 2]);
    expect(ids(await q({ name: { filterType: "text", type: "endsWith", filter: "ZOLA" } }))).toEqual([5]);
    expect(ids(await q({ name: { filterType: "text", type: "equals", filter: "eve" } }))).toEqual([9]);
    expect((await q({ name: { filterType: "text", type: "notContains", filter: "a" } })).total).toBe(4);
    expect(ids(await q({ id: { filterType: "number", type: "inRange", filter: 3, filterTo: 6 } }))).toEqual([4, 5]);
    expect(ids(await q({ id: { filterType: "number", type: "greaterThan", filter: "10" } }))).toEqual([11, 12]);
    expect(ids(await q({ status: { filterType: "set", values: ["inactive"] } }))).toEqual([2, 5, 7, 10]);
    expect(ids(await q({ status: { filterType: "text", type: "contains", filter: "act" } }))).toHaveLength(12);
    expect(ids(await q({ id: { filterType: "text", type: "startsWith", filter: "1" } }))).toEqual([1, 10, 11, 12]);
    const or = { filterType: "text", operator: "OR", conditions: [{ filterType: "text", type: "contains", filter: "zoë" }, { filterType: "text", type: "contains", filter: "karl" }] };
    expect(ids(await q({ name: or }))).toEqual([6]);
    expect(ids(await q({ email: or }))).toEqual([6, 12]);
    expect(ids(await q({ name: { filterType: "text", type: "notBlank" }, status: { filterType: "set", values: ["ACTIVE"] } }))).toEqual([1, 3, 4, 6, 8, 9, 11, 12]);
    expect(await q(null)).toMatchObject({ total: 12 });
    expect(await q({})).toMatchObject({ total: 12 });
  });

  test("other fields are ignored (context, empty grouping arrays of the SSRM shape)", async () => {
    const r = await post({ startRow: 0, endRow: 2, context: { x: 1 }, rowGroupCols: [], groupKeys: [], pivotMode: false, valueCols: [] });
    expect(r.status).toBe(200);
    expect(ids(r.body)).toEqual([1, 2]);
  });

  const badBodies: [string, unknown, string][] = [
    ["array body", [1, 2], ""],
    ["negative startRow", { startRow: -1 }, "/startRow"],
    ["fractional startRow", { startRow: 1.5 }, "/startRow"],
    ["string endRow", { startRow: 0, endRow: "100" }, "/endRow"],
    ["endRow before startRow", { startRow: 10, endRow: 5 }, "/endRow"],
    ["window over the max page size", { startRow: 0, endRow: 51 }, "/endRow"],
    ["sortModel not an array", { sortModel: {} }, "/sortModel"],
    ["unknown sort column", { sortModel: [{ colId: "age", sort: "asc" }] }, "/sortModel/0/colId"],
    ["bad sort direction", { sortModel: [{ colId: "name", sort: "up" }] }, "/sortModel/0/sort"],
    ["unknown filter column", { filterModel: { age: { filterType: "text", filter: "x" } } }, "/filterModel/age"],
    ["unknown filterType", { filterModel: { name: { filterType: "agSetColumnFilter", values: ["x"] } } }, "/filterModel/name/filterType"],
    ["date filter on a text column", { filterModel: { name: { filterType: "date", dateFrom: "2020-01-01" } } }, "/filterModel/name"],
    ["unknown text type", { filterModel: { name: { filterType: "text", type: "fuzzy", filter: "x" } } }, "/filterModel/name/type"],
    ["number filter on a string column", { filterModel: { name: { filterType: "number", type: "equals", filter: 1 } } }, "/filterModel/name"],
    ["non-numeric number filter", { filterModel: { id: { filterType: "number", type: "equals", filter: "abc" } } }, "/filterModel/id/filter"],
    ["inRange without filterTo", { filterModel: { id: { filterType: "number", type: "inRange", filter: 1 } } }, "/filterModel/id/filterTo"],
    ["set value outside the enum", { filterModel: { status: { filterType: "set", values: ["pending"] } } }, "/filterModel/status/values/0"],
    ["bad combined operator", { filterModel: { name: { filterType: "text", operator: "XOR", conditions: [] } } }, "/filterModel/name/operator"],
  ];
  for (const [what, body, pointer] of badBodies) {
    test(`400 problem+json for ${what}`, async () => {
      const r = await post(body);
      expect(r.status).toBe(400);
      expect(r.type).toBe("application/problem+json");
      expect(r.body).toMatchObject({ type: "/problems/bad-body", status: 400 });
      expect(r.body.errors.map((e: { pointer: string }) => e.pointer)).toContain(pointer);
    });
  }

  test("grouping or pivoting asked for is a 400 that says so", async () => {
    const r = await post({ rowGroupCols: [{ id: "status", field: "status" }], groupKeys: [] });
    expect(r.status).toBe(400);
    expect(r.body.type).toBe("/problems/grouping-not-served");
    expect(r.body.detail).toContain("grouping");
    expect((await post({ pivotMode: true })).status).toBe(400);
  });

  test("malformed JSON is a 400 problem", async () => {
    const r = await post("{not json");
    expect(r.status).toBe(400);
    expect(r.type).toBe("application/problem+json");
    expect(r.body.type).toBe("/problems/malformed-json");
  });

  test("a body with no content type is read as JSON", async () => {
    const res = await fetch(`${srv.url}/api/users`, { method: "POST", body: new TextEncoder().encode(JSON.stringify({ startRow: 1, endRow: 2 })) });
    expect(res.status).toBe(200);
    expect(ids(await res.json())).toEqual([2]);
  });

  test("an explicit non-JSON content type is a 415", async () => {
    const r = await post("a=1", { "content-type": "application/x-www-form-urlencoded" });
    expect(r.status).toBe(415);
    expect(r.type).toBe("application/problem+json");
    expect((await post("{}", { "content-type": "application/json; charset=utf-8" })).status).toBe(200);
  });

  test("a body over 64 KiB is a 413 with a problem body", async () => {
    const big = JSON.stringify({ startRow: 0, context: "x".repeat(70_000) });
    const r = await post(big);
    expect(r.status).toBe(413);
    expect(r.type).toBe("application/problem+json");
    expect(r.body.title).toBe("Request body too large");
  });
});

describe("other paths and methods", () => {
  test("404 problem for an unknown path", async () => {
    const res = await fetch(`${srv.url}/api/nope`);
    expect(res.status).toBe(404);
    expect(res.headers.get("content-type")).toBe("application/problem+json");
    expect((await res.json()).status).toBe(404);
  });

  test("405 with Allow for a wrong method", async () => {
    for (const method of ["PUT", "DELETE", "PATCH"]) {
      const res = await fetch(`${srv.url}/api/users`, { method });
      expect(res.status).toBe(405);
      expect(res.headers.get("allow")).toBe("GET, HEAD, POST, OPTIONS");
      expect(res.headers.get("content-type")).toBe("application/problem+json");
    }
    const h = await fetch(`${srv.url}/healthz`, { method: "POST" });
    expect(h.status).toBe(405);
    expect(h.headers.get("allow")).toBe("GET, HEAD, OPTIONS");
  });

  test("healthz gives the row count and snapshot id", async () => {
    const before = Date.now();
    const body = await (await fetch(`${srv.url}/healthz`)).json();
    const after = Date.now();
    expect(body).toEqual({ status: "ok", rows: 12, snapshotId: srv.server.engine().store.snapshotId, createdAt: expect.any(String), ageSeconds: expect.any(Number) });
    // the version's age: whole seconds since the snapshot was built, as of the answer (between the request's start and end)
    const created = Date.parse(body.createdAt);
    expect(created).toBeLessThanOrEqual(after);
    expect(body.ageSeconds).toBeGreaterThanOrEqual(Math.floor((before - created) / 1000));
    expect(body.ageSeconds).toBeLessThanOrEqual(Math.floor((after - created) / 1000));
    expect(body.snapshotId).toMatch(/^[0-9a-f]{16}$/);
  });

  test("OpenAPI document and an offline docs UI", async () => {
    const doc = await (await fetch(`${srv.url}/openapi/json`)).json();
    expect(Object.keys(doc.paths)).toEqual(expect.arrayContaining(["/api/users", "/healthz"]));
    expect(doc.paths["/api/users"].get.parameters.map((p: { name: string }) => p.name)).toContain("filter[name]");
    expect(doc.paths["/api/users"].post.requestBody).toBeDefined();
    const html = await (await fetch(`${srv.url}/openapi`)).text();
    // the bundle under a content-hashed name (cached for a year), served from the package: no CDN
    const src = /src="(\/openapi\/assets\/scalar-[0-9a-f]+\.js)"/.exec(html)?.[1];
    expect(src).toBeDefined();
    expect(html).not.toContain("cdn.jsdelivr");
    const js = await fetch(`${srv.url}${src}`);
    expect(js.status).toBe(200);
    expect((await js.arrayBuffer()).byteLength).toBeGreaterThan(1_000_000);
  });
});

describe("reload", () => {
  test("a refused snapshot keeps the old one serving", async () => {
    const before = srv.server.engine();
    const { writeFileSync, readFileSync, renameSync } = await import("node:fs");
    const good = readFileSync(srv.snapshot);
    // Snapshots are replaced by rename (as the builder does), never rewritten in place.
    const replace = (bytes: Uint8Array | string) => {
      writeFileSync(`${srv.snapshot}.new`, bytes);
      renameSync(`${srv.snapshot}.new`, srv.snapshot);
    };
    replace("garbage");
    await expect(srv.server.reload()).rejects.toThrow(/bad magic|shorter than/);
    expect(srv.server.engine()).toBe(before);
    expect((await get("?pageSize=1")).body.total).toBe(12);
    replace(good);
    await srv.server.reload();
    expect(srv.server.engine()).not.toBe(before);
    expect((await get("?pageSize=1")).body.total).toBe(12);
  });
});
