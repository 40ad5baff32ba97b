/**
 * Every rule of docs/api.md on the default data (100,000 generated users, seed 1): random GET
 * and POST requests over a real socket, checked against the naive request-level oracle
 * (test/support/table-oracle.ts), which reads the request itself, independently of src/query.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import fc from "fast-check";
import { DEFAULT_DATA } from "../../src/cli.ts";
import { generateUsers } from "../../src/generate/users.ts";
import type { UserRecord } from "../../src/generate/record.ts";
import { type TableRecord, oracleGet, oraclePost } from "../support/table-oracle.ts";
import { type TestServer, startTestServer } from "../support/server.ts";
import { SEED_SPECS } from "../support/table-store.ts";

const COLUMN_IDS = ["id", "name", "email", "status"] as const;
const TABLE = { specs: SEED_SPECS, key: "id" };

let srv: TestServer;
let records: UserRecord[];
let byId: Map<unknown, UserRecord>;
beforeAll(() => {
  srv = startTestServer("default");
  records = Array.from(generateUsers(DEFAULT_DATA));
  byId = new Map(records.map((r) => [r.id, r]));
  // building the default data (when absent) takes seconds on a busy machine
}, 120_000);

/** The records of the oracle's keys. */
const recordsOf = (keys: unknown[]) => keys.map((k) => byId.get(k));
afterAll(() => srv.close());

/** A piece of a value: what users type into a filter box, in random case. */
const pieceArb = fc
  .tuple(fc.nat(DEFAULT_DATA.count - 1), fc.constantFrom("name", "email"), fc.nat(30), fc.integer({ min: 1, max: 5 }), fc.constantFrom("same", "upper", "lower"))
  .map(([i, column, at, len, casing]) => {
    const value = (records[i] as unknown as Record<string, string>)[column];
    const start = value.length === 0 ? 0 : at % value.length;
    const piece = value.slice(start, start + len);
    return casing === "upper" ? piece.toUpperCase() : casing === "lower" ? piece.toLowerCase() : piece;
  });

describe("GET on the default data", () => {
  const getArb = fc.record({
    page: fc.oneof(fc.integer({ min: 1, max: 5 }), fc.integer({ min: 1, max: 10_001 })),
    pageSize: fc.constantFrom(10, 20, 50, 100),
    sort: fc.option(fc.tuple(fc.constantFrom(...COLUMN_IDS), fc.constantFrom("asc", "desc", "ASC", "Desc")), { nil: undefined }),
    name: fc.option(fc.constant(0).chain(() => pieceArb), { nil: undefined }),
    email: fc.option(fc.constant(0).chain(() => pieceArb), { nil: undefined }),
    status: fc.option(fc.constantFrom("active", "inactive", "Active,INACTIVE", "inactive,"), { nil: undefined }),
    id: fc.option(fc.tuple(fc.integer({ min: 0, max: 100_100 }), fc.integer({ min: 0, max: 100_100 }), fc.constantFrom("eq", "range", "from", "to")), { nil: undefined }),
    spelling: fc.record({ alt: fc.boolean(), encoded: fc.boolean(), plus: fc.boolean() }),
  });

  test("random requests, both spellings, raw and encoded brackets", async () => {
    await fc.assert(
      fc.asyncProperty(getArb, async (r) => {
        const params: string[] = [];
        const enc = (s: string) => {
          const e = encodeURIComponent(s);
          return r.spelling.plus ? e.replace(/%20/g, "+") : e;
        };
        const key = (col: string) => (r.spelling.encoded ? `filter%5B${col}%5D` : `filter[${col}]`);
        params.push(`page=${r.page}`, `${r.spelling.alt ? "limit" : "pageSize"}=${r.pageSize}`);
        let sortBy: string | undefined;
        let sortOrder: "asc" | "desc" = "asc";
        if (r.sort) {
          params.push(`${r.spelling.alt ? "sort" : "sortBy"}=${r.sort[0]}`, `${r.spelling.alt ? "order" : "sortOrder"}=${r.sort[1]}`);
          sortBy = r.sort[0];
          sortOrder = r.sort[1].toLowerCase() as "asc" | "desc";
        }
        const filters: Record<string, string> = {};
        const filter = (column: string, value: string) => {
          params.push(`${key(column)}=${enc(value)}`);
          filters[column] = value;
        };
        if (r.name !== undefined && r.name !== "") filter("name", r.name);
        if (r.email !== undefined && r.email !== "") filter("email", r.email);
        if (r.status !== undefined) filter("status", r.status);
        if (r.id !== undefined) {
          const [a, b, form] = r.id;
          filter("id", form === "eq" ? `${a}` : form === "range" ? `${a},${b}` : form === "from" ? `${a},` : `,${b}`);
        }
        const oracle = oracleGet(records as unknown as TableRecord[], TABLE, { filters, sortBy, sortOrder, page: r.page, pageSize: r.pageSize });
        const expected = { total: oracle.total, rows: recordsOf(oracle.keys) };
        const res = await fetch(`${srv.url}/api/users?${params.join("&")}`);
        expect(res.status).toBe(200);
        const body = await res.json();
        expect(body.total).toBe(expected.total);
        expect(body.data).toEqual(expected.rows);
        expect(body.pagination).toEqual({ page: r.page, pageSize: r.pageSize, total: expected.total, totalPages: Math.ceil(expected.total / r.pageSize) });
      }),
      { numRuns: 40 },
    );
  }, 180_000);
});

describe("POST on the default data", () => {
  const textModel = fc.tuple(fc.constantFrom("contains", "notContains", "equals", "startsWith", "endsWith"), fc.constant(0).chain(() => pieceArb));
  const modelArb = fc.oneof(
    textModel.map(([type, filter]) => ({ column: "name", model: { filterType: "text", type, filter } as Record<string, unknown> })),
    textModel.map(([type, filter]) => ({ column: "email", model: { filterType: "text", type, filter } as Record<string, unknown> })),
    fc.tuple(fc.integer({ min: 0, max: 100_000 }), fc.integer({ min: 1, max: 50_000 })).map(([lo, w]) => ({
      column: "id",
      model: { filterType: "number", type: "inRange", filter: lo, filterTo: String(lo + w) } as Record<string, unknown>,
    })),
    fc.constantFrom("active", "inactive").map((v) => ({ column: "status", model: { filterType: "set", values: [v] } as Record<string, unknown> })),
    fc.tuple(fc.constant(0).chain(() => pieceArb), fc.constant(0).chain(() => pieceArb)).map(([a, b]) => ({
      column: "name",
      model: { filterType: "text", operator: "OR", conditions: [{ filterType: "text", type: "contains", filter: a }, { filterType: "text", type: "startsWith", filter: b }] } as Record<string, unknown>,
    })),
  );
  const postArb = fc.record({
    startRow: fc.oneof(fc.constant(0), fc.integer({ min: 0, max: 2_000 }).map((b) => b * 100), fc.nat(100_500)),
    sortModel: fc.uniqueArray(fc.record({ colId: fc.constantFrom(...COLUMN_IDS), sort: fc.constantFrom<"asc" | "desc">("asc", "desc") }), { maxLength: 3, selector: (s) => s.colId }),
    filters: fc.uniqueArray(modelArb, { maxLength: 3, selector: (m) => m.column }),
  });

  test("random AG Grid blocks with sort and filter models", async () => {
    await fc.assert(
      fc.asyncProperty(postArb, async (r) => {
        const body = {
          startRow: r.startRow,
          endRow: r.startRow + 100,
          sortModel: r.sortModel,
          filterModel: Object.fromEntries(r.filters.map((f) => [f.column, f.model])),
        };
        const oracle = oraclePost(records as unknown as TableRecord[], TABLE, body);
        const expected = { total: oracle.total, rows: recordsOf(oracle.keys) };
        const res = await fetch(`${srv.url}/api/users`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify(body) });
        expect(res.status).toBe(200);
        const got = await res.json();
        expect(got.total).toBe(expected.total);
        expect(got.data).toEqual(expected.rows);
        // AG Grid's next block of the same query (served from the cached match set / checkpoint).
        const next = await fetch(`${srv.url}/api/users`, { method: "POST", body: JSON.stringify({ ...body, startRow: r.startRow + 100, endRow: r.startRow + 200 }) });
        expect((await next.json()).data).toEqual(recordsOf(oraclePost(records as unknown as TableRecord[], TABLE, { ...body, startRow: r.startRow + 100, endRow: r.startRow + 200 }).keys));
      }),
      { numRuns: 40 },
    );
  }, 180_000);
});
