/**
 * The engine against the naive oracle (test/support/table-oracle.ts) on random tables of any
 * shape: a number or a text key (a text key ordered by code point), with or without `name`,
 * `email` and `status`, enums of random values (a partition when one qualifies), every kind,
 * many nulls and ties; random AG Grid bodies (every filter type on every kind it applies to,
 * combined conditions, multi-key and absolute sorts, the quick filter, consecutive blocks), GET
 * queries (every `filter[col]` form, the search), facets and exports — under every plan.
 */
import { describe, expect, test } from "bun:test";
import fc from "fast-check";
import { createEngine, executeQuery } from "../../src/engine/execute.ts";
import { openExport } from "../../src/engine/export.ts";
import { computeFacets } from "../../src/engine/facets.ts";
import { parseFacetsPost } from "../../src/query/facets.ts";
import { parseGetQuery } from "../../src/query/get.ts";
import { parsePostBody } from "../../src/query/post.ts";
import type { ColumnSpec } from "../../src/schema/kinds.ts";
import { type Table, type TableRecord, oracleFacets, oracleGet, oraclePost, oracleRows } from "../support/table-oracle.ts";
import { DATES, NUMBERS, filterModelArb, filterable, needleArb, quickArb, sortModelArb, tableArb } from "../support/table-arbitraries.ts";
import { buildTableStore, keysOf } from "../support/table-store.ts";

const caseArb = tableArb.chain(({ table, records }) =>
  fc.record({
    table: fc.constant(table),
    records: fc.constant(records),
    bodies: fc.array(
      fc.record({ startRow: fc.integer({ min: 0, max: 40 }), size: fc.integer({ min: 1, max: 25 }), sortModel: sortModelArb(table), filterModel: filterModelArb(records, table), quickFilter: quickArb(records, table) }),
      { minLength: 1, maxLength: 5 },
    ),
  }),
);

describe("any table against the naive oracle", () => {
  for (const plan of ["auto", "walk", "sort"] as const) {
    test(`AG Grid bodies: every filter type on every kind and on the key, multi-key sorts, the quick filter, consecutive blocks (plan ${plan})`, () => {
      fc.assert(
        fc.property(caseArb, ({ table, records, bodies }) => {
          const store = buildTableStore(records, table);
          const engine = createEngine(store, { plan });
          for (const b of bodies) {
            for (let block = 0; block < 2; block++) {
              const startRow = b.startRow + block * b.size;
              const body = { startRow, endRow: startRow + b.size, sortModel: b.sortModel, filterModel: b.filterModel, quickFilter: b.quickFilter };
              const { query } = parsePostBody(body, 1000, store.schema);
              const page = executeQuery(engine, query);
              expect({ keys: keysOf(store, page.rows), total: page.total }).toEqual(oraclePost(records, table, body));
            }
          }
        }),
        { numRuns: Number(process.env.PROPERTY_RUNS ?? 150) },
      );
    }, 300_000);
  }

  test("GET filter[col] forms on every kind and on the key, the search, sorted by any column", () => {
    const getArb = tableArb.chain(({ table, records }) => {
      const keyValues = records.map((r) => r[table.key]);
      const filterArb = (spec: ColumnSpec): fc.Arbitrary<string> => {
        if (spec.id === table.key && spec.kind === "text") return fc.subarray(keyValues as string[], { minLength: 1, maxLength: Math.min(3, keyValues.length) }).map((v) => v.map((x) => (x.trim() === x ? x.toUpperCase() : x)).join(","));
        switch (spec.kind) {
          case "number":
            return fc.oneof(fc.constantFrom(...NUMBERS, ...(spec.id === table.key ? (keyValues.slice(0, 3) as number[]) : [])).map(String), fc.tuple(fc.constantFrom("", "-1", "0", "2"), fc.constantFrom("", "0.5", "10", "150")).map(([a, b]) => `${a},${b}`));
          case "date":
            return fc.oneof(fc.constantFrom(...DATES), fc.tuple(fc.constantFrom("", "1970-01-01", "2024-03-01"), fc.constantFrom("", "2024-03-01", "2024-12-31")).map(([a, b]) => `${a},${b}`));
          case "datetime":
            return fc.oneof(
              fc.constantFrom("2024-03-01", "2024-03-01T10:30:00.123Z", "1969-12-31"),
              fc.tuple(fc.constantFrom("", "2024-03-01", "2024-03-01T10:30:00.123Z"), fc.constantFrom("", "2024-03-01", "2024-03-02T00:00:00Z")).map(([a, b]) => `${a},${b}`),
            );
          case "enum":
            return fc.subarray([...(spec.values as string[]), ...(spec.values as string[]).map((v) => v.toUpperCase())], { minLength: 1 }).map((v) => v.join(","));
          case "boolean":
            return fc.constantFrom("true", "FALSE", "true,false");
          default:
            return needleArb(records, table).filter((n) => n.trim() !== "");
        }
      };
      const request = fc
        .record({
          specs: fc.subarray(filterable(table), { maxLength: Math.min(3, filterable(table).length) }),
          sortBy: fc.option(fc.constantFrom(...filterable(table).map((s) => s.id)), { nil: undefined }),
          sortOrder: fc.constantFrom<"asc" | "desc">("asc", "desc"),
          q: quickArb(records, table),
          page: fc.integer({ min: 1, max: 4 }),
          pageSize: fc.integer({ min: 1, max: 20 }),
        })
        .chain((r) => fc.tuple(...r.specs.map((s) => filterArb(s).map((v) => [s.id, v] as const))).map((filters) => ({ ...r, filters: Object.fromEntries(filters) })));
      return fc.record({ table: fc.constant(table), records: fc.constant(records), requests: fc.array(request, { minLength: 1, maxLength: 5 }) });
    });
    fc.assert(
      fc.property(getArb, ({ table, records, requests }) => {
        const store = buildTableStore(records, table);
        const engine = createEngine(store);
        for (const r of requests) {
          const params = new URLSearchParams({ page: String(r.page), pageSize: String(r.pageSize), sortOrder: r.sortOrder });
          if (r.sortBy !== undefined) params.set("sortBy", r.sortBy);
          if (r.q !== undefined) params.set("q", r.q);
          for (const [c, v] of Object.entries(r.filters)) params.set(`filter[${c}]`, v);
          const { query } = parseGetQuery(params.toString(), 1000, store.schema);
          const page = executeQuery(engine, query);
          expect({ keys: keysOf(store, page.rows), total: page.total }).toEqual(oracleGet(records, table, r));
        }
      }),
      { numRuns: Number(process.env.PROPERTY_RUNS ?? 200) },
    );
  }, 300_000);

  test("facets of every column but json, over every filter but the column's own, with the search", () => {
    const facetsArb = tableArb.chain(({ table, records }) =>
      fc.record({
        table: fc.constant(table),
        records: fc.constant(records),
        columns: fc.uniqueArray(fc.constantFrom(...filterable(table).map((s) => s.id)), { minLength: 1, maxLength: Math.min(4, filterable(table).length) }),
        filterModel: filterModelArb(records, table),
        quickFilter: quickArb(records, table),
        limit: fc.integer({ min: 1, max: 6 }),
        search: fc.option(fc.constantFrom("a", "z", "1", "é", "2024"), { nil: undefined }),
      }),
    );
    fc.assert(
      fc.property(facetsArb, ({ table, records, ...body }) => {
        const store = buildTableStore(records, table);
        const engine = createEngine(store);
        const answer = computeFacets(engine, parseFacetsPost(body, 1000, store.schema));
        expect(JSON.parse(JSON.stringify(answer))).toEqual(oracleFacets(records, table, body));
      }),
      { numRuns: Number(process.env.PROPERTY_RUNS ?? 200) },
    );
  }, 300_000);

  test("exports: every matching row in the requested order, in batches", () => {
    fc.assert(
      fc.property(caseArb, fc.integer({ min: 1, max: 7 }), ({ table, records, bodies }, batch) => {
        const store = buildTableStore(records, table);
        const engine = createEngine(store);
        for (const b of bodies) {
          const { query } = parsePostBody({ sortModel: b.sortModel, filterModel: b.filterModel, quickFilter: b.quickFilter }, 1000, store.schema, { window: false, sort: true });
          const cursor = openExport(engine, query, batch);
          const keys: unknown[] = [];
          for (let rows = cursor.next(); rows !== null; rows = cursor.next()) keys.push(...keysOf(store, rows));
          const expected = oracleRows(records, table, b).map((r) => r[table.key]);
          expect({ keys, total: cursor.total }).toEqual({ keys: expected, total: expected.length });
        }
      }),
      { numRuns: Number(process.env.PROPERTY_RUNS ?? 100) },
    );
  }, 300_000);
});
