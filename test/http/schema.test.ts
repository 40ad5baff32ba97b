/**
 * Columns beyond the four over a real socket (docs/api.md "Columns beyond the four"): GET
 * /api/users/schema, sorts and filters of every kind through GET and POST, records with every
 * column, the OpenAPI document of a wide snapshot (Redocly strict), and a reload to another
 * schema.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { join } from "node:path";
import { createConfig, lintFromString } from "@redocly/openapi-core";
import type { ColumnSpec } from "../../src/schema/kinds.ts";
import { writeSnapshot } from "../../src/snapshot/write.ts";
import { buildStoreFromRecords } from "../support/table-store.ts";
import { type TestServer, startTestServer } from "../support/server.ts";
import { type WideRecord, buildWideStore } from "../support/table-store.ts";

const SPECS: ColumnSpec[] = [
  { id: "created_at", kind: "datetime" },
  { id: "birthday", kind: "date" },
  { id: "role", kind: "enum", values: ["owner", "admin", "member"] },
  { id: "age", kind: "number" },
  { id: "verified", kind: "boolean" },
  { id: "notes", kind: "text" },
  { id: "prefs", kind: "json" },
];

const RECORDS: WideRecord[] = [
  { id: 1, name: "Ana", email: "ana@x.com", status: "active", created_at: "2024-03-01T10:00:00.000Z", birthday: "1990-05-01", role: "admin", age: 34, verified: true, notes: "Café owner", prefs: { theme: "dark" } },
  { id: 2, name: "Bob", email: "bob@x.com", status: "inactive", created_at: "2024-03-02T00:00:00.000Z", birthday: null, role: "member", age: null, verified: false, notes: null, prefs: [1, 2] },
  { id: 3, name: "Cy", email: "cy@x.com", status: "active", created_at: null, birthday: "2001-12-31", role: null, age: 19, verified: null, notes: "  ", prefs: null },
  { id: 4, name: "Di", email: "di@x.com", status: "active", created_at: "2023-12-31T23:59:59.999Z", birthday: "1985-01-01", role: "owner", age: 40, verified: true, notes: "cafe regular", prefs: "plain" },
  { id: 5, name: "Ed", email: "ed@x.com", status: "inactive", created_at: "2024-03-01T00:00:00.000Z", birthday: "1990-05-01", role: "member", age: 34.5, verified: false, notes: "", prefs: 7 },
];

let wide: TestServer;
let seed: TestServer;
beforeAll(() => {
  wide = startTestServer(buildWideStore(RECORDS, SPECS));
  seed = startTestServer([{ id: 1, name: "A", email: "a@x", status: "active" }]);
});
afterAll(async () => {
  await wide.close();
  await seed.close();
});

const getJson = async (server: TestServer, path: string) => {
  const response = await fetch(server.url + path);
  return { status: response.status, body: (await response.json()) as Record<string, unknown>, response };
};
const post = async (body: unknown) => {
  const response = await fetch(`${wide.url}/api/users`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify(body) });
  return { status: response.status, body: (await response.json()) as { data: WideRecord[]; total: number; errors?: { pointer: string; detail: string }[] } };
};
const ids = (data: unknown) => (data as WideRecord[]).map((r) => r.id);

describe("GET /api/users/schema", () => {
  test("the seed's four on a four-column snapshot", async () => {
    const { status, body } = await getJson(seed, "/api/users/schema");
    expect(status).toBe(200);
    expect(body).toEqual({
      columns: [
        { id: "id", kind: "number" },
        { id: "name", kind: "text" },
        { id: "email", kind: "text" },
        { id: "status", kind: "enum", values: ["active", "inactive"] },
      ],
      key: "id",
      // one row: no enum has the two values a partition needs
      partition: null,
      rows: 1,
      snapshotId: seed.server.engine().store.snapshotId,
    });
  });

  test("every column of a wide snapshot in schema order, with an ETag that answers 304", async () => {
    const { body, response } = await getJson(wide, "/api/users/schema");
    expect((body.columns as ColumnSpec[]).map((c) => c.id)).toEqual(["id", "name", "email", "status", ...SPECS.map((s) => s.id)]);
    expect((body.columns as ColumnSpec[])[6]).toEqual({ id: "role", kind: "enum", values: ["owner", "admin", "member"] });
    expect({ key: body.key, partition: body.partition }).toEqual({ key: "id", partition: "status" });
    const etag = response.headers.get("etag") as string;
    expect(etag).toMatch(/^"/);
    const again = await fetch(`${wide.url}/api/users/schema`, { headers: { "if-none-match": etag } });
    expect(again.status).toBe(304);
  });
});

describe("records, sorts and filters on every kind", () => {
  test("records carry every column in schema order, in each kind's output format", async () => {
    const { body } = await getJson(wide, "/api/users?pageSize=5");
    const data = body.data as Record<string, unknown>[];
    expect(Object.keys(data[0])).toEqual(["id", "name", "email", "status", ...SPECS.map((s) => s.id)]);
    expect(data[1]).toEqual({ id: 2, name: "Bob", email: "bob@x.com", status: "inactive", created_at: "2024-03-02T00:00:00.000Z", birthday: null, role: "member", age: null, verified: false, notes: null, prefs: [1, 2] });
  });

  test("GET: sort by a datetime descending (nulls last), date range, enum list, boolean, text", async () => {
    expect(ids((await getJson(wide, "/api/users?sortBy=created_at&sortOrder=desc")).body.data)).toEqual([2, 1, 5, 4, 3]);
    expect(ids((await getJson(wide, "/api/users?sortBy=age")).body.data)).toEqual([2, 3, 1, 5, 4]);
    expect(ids((await getJson(wide, "/api/users?filter[created_at]=2024-03-01")).body.data)).toEqual([1, 5]);
    expect(ids((await getJson(wide, "/api/users?filter[birthday]=,1995-01-01")).body.data)).toEqual([1, 4, 5]);
    const roles = await getJson(wide, "/api/users?filter[role]=OWNER,admin");
    expect(ids(roles.body.data)).toEqual([1, 4]);
    expect(roles.body.meta).toEqual({ filters: { role: "owner,admin" } });
    expect(ids((await getJson(wide, "/api/users?filter[verified]=false")).body.data)).toEqual([2, 5]);
    expect(ids((await getJson(wide, "/api/users?filter[notes]=CAFE")).body.data)).toEqual([1, 4]);
    expect(ids((await getJson(wide, "/api/users?filter[age]=30,35")).body.data)).toEqual([1, 5]);
  });

  test("POST: AG Grid's date, number, set and text models; multi-key sorts", async () => {
    const dates = await post({ filterModel: { created_at: { filterType: "date", type: "inRange", dateFrom: "2023-12-31 00:00:00", dateTo: "2024-03-02 00:00:00" } } });
    expect(ids(dates.body.data)).toEqual([1, 5]);
    const numbers = await post({ filterModel: { age: { filterType: "number", type: "greaterThanOrEqual", filter: "34" } }, sortModel: [{ colId: "age", sort: "desc" }] });
    expect(ids(numbers.body.data)).toEqual([4, 5, 1]);
    const set = await post({ filterModel: { role: { filterType: "set", values: ["member", null] } }, sortModel: [{ colId: "role", sort: "asc" }, { colId: "birthday", sort: "desc" }] });
    expect(ids(set.body.data)).toEqual([3, 5, 2]);
    const text = await post({ filterModel: { created_at: { filterType: "text", type: "startsWith", filter: "2024-03" } } });
    expect(ids(text.body.data)).toEqual([1, 2, 5]);
    const blank = await post({ filterModel: { notes: { filterType: "text", type: "blank" } }, sortModel: [{ colId: "notes", sort: "asc" }] });
    expect(ids(blank.body.data)).toEqual([2, 5, 3]);
  });

  test("a json sort, a model that does not fit its kind, and an unknown column are 400s", async () => {
    const sort = await post({ sortModel: [{ colId: "prefs", sort: "asc" }] });
    expect(sort.status).toBe(400);
    expect(sort.body.errors).toEqual([{ pointer: "/sortModel/0/colId", detail: 'column "prefs" is json: it is returned, never sorted' }]);
    const model = await post({ filterModel: { notes: { filterType: "date", type: "equals", dateFrom: "2024-01-01" } } });
    expect(model.status).toBe(400);
    expect(model.body.errors?.[0].detail).toContain('does not fit column "notes" (text); it takes text, set');
    const unknown = await getJson(wide, "/api/users?sortBy=nope");
    expect(unknown.status).toBe(400);
    expect(JSON.stringify(unknown.body)).toContain("valid columns: id, name, email, status, created_at, birthday, role, age, verified, notes, prefs");
  });
});

describe("the OpenAPI document of a wide snapshot", () => {
  test("describes every column and passes Redocly's recommended-strict rules", async () => {
    const { body: doc } = await getJson(wide, "/openapi/json");
    const schemas = (doc.components as { schemas: Record<string, { properties?: Record<string, unknown>; enum?: string[] }> }).schemas;
    expect(Object.keys(schemas.User.properties ?? {})).toEqual(["id", "name", "email", "status", ...SPECS.map((s) => s.id)]);
    expect(schemas.User.properties?.created_at).toEqual({ type: ["string", "null"], format: "date-time" });
    expect(schemas.User.properties?.role).toEqual({ type: ["string", "null"], enum: ["owner", "admin", "member", null] });
    expect(schemas.ColumnId.enum).not.toContain("prefs");
    expect(Object.keys(schemas.FilterModel.properties ?? {})).not.toContain("prefs");
    const params = ((doc.paths as Record<string, { get: { parameters: { name: string }[] } }>)["/api/users"].get.parameters).map((p) => p.name);
    expect(params).toContain("filter[created_at]");
    expect(params).not.toContain("filter[prefs]");
    const config = await createConfig({ extends: ["recommended-strict"], rules: { "info-license": "off", "no-unused-components": "off" } } as never);
    const problems = await lintFromString({ source: JSON.stringify(doc), absoluteRef: join(import.meta.dir, "openapi.json"), config });
    expect(problems.map((p) => `${p.ruleId}: ${p.message} at ${p.location?.[0]?.pointer}`)).toEqual([]);
  });

  test("after a reload to a snapshot of another schema, the schema route and the document follow it", async () => {
    const server = startTestServer(buildWideStore(RECORDS, SPECS));
    try {
      writeSnapshot(server.snapshot, buildStoreFromRecords([{ id: 9, name: "Zed", email: "z@x", status: "active" }]));
      await server.server.reload();
      const { body } = await getJson(server, "/api/users/schema");
      expect((body.columns as ColumnSpec[]).map((c) => c.id)).toEqual(["id", "name", "email", "status"]);
      const { body: doc } = await getJson(server, "/openapi/json");
      const user = (doc.components as { schemas: Record<string, { properties: Record<string, unknown> }> }).schemas.User;
      expect(Object.keys(user.properties)).toEqual(["id", "name", "email", "status"]);
      const sorted = await getJson(server, "/api/users?sortBy=age");
      expect(sorted.status).toBe(400);
    } finally {
      await server.close();
    }
  });
});
