/**
 * Every rule of docs/api.md on the default data (100,000 generated users, seed 1): random GET
 * and POST requests over a real socket, checked against the naive oracle. The test builds the
 * expected query from the request itself, independently of src/query.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import fc from "fast-check";
import { DEFAULT_DATA } from "../../src/cli.ts";
import { generateUsers } from "../../src/generate/users.ts";
import type { Predicate, Query, SortKey } from "../../src/query/types.ts";
import { COLUMN_IDS, type UserRecord } from "../../src/generate/record.ts";
import { naiveQuery } from "../support/oracle.ts";
import { type TestServer, startTestServer } from "../support/server.ts";

let srv: TestServer;
let records: UserRecord[];
beforeAll(() => {
  srv = startTestServer("default");
  records = Array.from(generateUsers(DEFAULT_DATA));
});
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

const and = (children: Predicate[]): Predicate | null => (children.length === 0 ? null : children.length === 1 ? children[0] : { kind: "and", children });

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
        const sort: SortKey[] = [];
        if (r.sort) {
          params.push(`${r.spelling.alt ? "sort" : "sortBy"}=${r.sort[0]}`, `${r.spelling.alt ? "order" : "sortOrder"}=${r.sort[1]}`);
          sort.push({ column: r.sort[0], direction: r.sort[1].toLowerCase() as "asc" | "desc", absolute: false });
        }
        const filters: Predicate[] = [];
        if (r.name !== undefined && r.name !== "") {
          params.push(`${key("name")}=${enc(r.name)}`);
          filters.push({ kind: "text", column: "name", op: "contains", value: r.name });
        }
        if (r.email !== undefined && r.email !== "") {
          params.push(`${key("email")}=${enc(r.email)}`);
          filters.push({ kind: "text", column: "email", op: "contains", value: r.email });
        }
        if (r.status !== undefined) {
          params.push(`${key("status")}=${enc(r.status)}`);
          const wanted = r.status.toLowerCase().split(",").filter((s) => s !== "");
          filters.push({ kind: "status", codes: wanted.map((s) => (s === "active" ? 0 : 1)) });
        }
        if (r.id !== undefined) {
          const [a, b, form] = r.id;
          const text = form === "eq" ? `${a}` : form === "range" ? `${a},${b}` : form === "from" ? `${a},` : `,${b}`;
          params.push(`${key("id")}=${enc(text)}`);
          if (form === "eq") filters.push({ kind: "number", column: "id", op: "equals", value: a });
          if (form === "range" || form === "from") filters.push({ kind: "number", column: "id", op: "greaterThanOrEqual", value: a });
          if (form === "range" || form === "to") filters.push({ kind: "number", column: "id", op: "lessThanOrEqual", value: b });
        }
        const query: Query = { filter: and(filters), sort, offset: (r.page - 1) * r.pageSize, limit: r.pageSize };
        const expected = naiveQuery(records, query);
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
    textModel.map(([type, filter]) => ({ column: "name", model: { filterType: "text", type, filter } as Record<string, unknown>, p: { kind: "text", column: "name", op: type, value: filter } as Predicate })),
    textModel.map(([type, filter]) => ({ column: "email", model: { filterType: "text", type, filter }, p: { kind: "text", column: "email", op: type, value: filter } as Predicate })),
    fc.tuple(fc.integer({ min: 0, max: 100_000 }), fc.integer({ min: 1, max: 50_000 })).map(([lo, w]) => ({
      column: "id",
      model: { filterType: "number", type: "inRange", filter: lo, filterTo: String(lo + w) },
      p: { kind: "number", column: "id", op: "inRange", value: lo, valueTo: lo + w } as Predicate,
    })),
    fc.constantFrom("active", "inactive").map((v) => ({ column: "status", model: { filterType: "set", values: [v] }, p: { kind: "status", codes: [v === "active" ? 0 : 1] } as Predicate })),
    fc.tuple(fc.constant(0).chain(() => pieceArb), fc.constant(0).chain(() => pieceArb)).map(([a, b]) => ({
      column: "name",
      model: { filterType: "text", operator: "OR", conditions: [{ filterType: "text", type: "contains", filter: a }, { filterType: "text", type: "startsWith", filter: b }] },
      p: { kind: "or", children: [{ kind: "text", column: "name", op: "contains", value: a }, { kind: "text", column: "name", op: "startsWith", value: b }] } as Predicate,
    })),
  );
  const postArb = fc.record({
    startRow: fc.oneof(fc.constant(0), fc.integer({ min: 0, max: 2_000 }).map((b) => b * 100), fc.nat(100_500)),
    sortModel: fc.uniqueArray(fc.record({ colId: fc.constantFrom(...COLUMN_IDS), sort: fc.constantFrom("asc", "desc") }), { maxLength: 3, selector: (s) => s.colId }),
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
        const query: Query = {
          filter: and(r.filters.map((f) => f.p)),
          sort: r.sortModel.map((s) => ({ column: s.colId, direction: s.sort as "asc" | "desc", absolute: false })),
          offset: r.startRow,
          limit: 100,
        };
        const expected = naiveQuery(records, query);
        const res = await fetch(`${srv.url}/api/users`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify(body) });
        expect(res.status).toBe(200);
        const got = await res.json();
        expect(got.total).toBe(expected.total);
        expect(got.data).toEqual(expected.rows);
        // AG Grid's next block of the same query (served from the cached match set / checkpoint).
        const next = await fetch(`${srv.url}/api/users`, { method: "POST", body: JSON.stringify({ ...body, startRow: r.startRow + 100, endRow: r.startRow + 200 }) });
        expect((await next.json()).data).toEqual(naiveQuery(records, { ...query, offset: r.startRow + 100 }).rows);
      }),
      { numRuns: 40 },
    );
  }, 180_000);
});
