/**
 * The global search, facets and export against the naive wide oracle (test/support/table-oracle.ts)
 * on random wide datasets — every column kind, nulls, ties, ids of 1 to 4 digits (so that id
 * terms of 3+ digits go through the ids' trigram lists) — and random requests: search texts of
 * several terms (short and long, digits, accents, enum values), AG Grid filter models, facet
 * columns of every kind with limits and value searches, exports in every sort.
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
import { rowsCsv, rowsNdjson } from "../../src/store/rows-export.ts";
import { parseCsv } from "../support/csv.ts";
import { oracleFacets, oraclePost, oracleRows } from "../support/table-oracle.ts";
import { KIND_SCHEMA, KIND_SPECS, KIND_TABLE, type WideRecord, buildWideStore, keysOf } from "../support/table-store.ts";

const SPECS = KIND_SPECS;
const SCHEMA = KIND_SCHEMA;
const TABLE = KIND_TABLE;
const SORTABLE = ["id", "name", "email", "status", "n", "d", "t", "e", "b", "s"];
const FACETABLE = ["id", "name", "email", "status", "n", "d", "t", "e", "b", "s"];

const TEXTS = ["", "  ", "Café", "cafe", "CAFÉ au lait", "zoë", "Zoe", "a1", "a10", "a2", "ñ", "x y", "Straße 12", "naïve, \"quoted\"", "line\nbreak", "comma,here"];
const NAMES = ["Ana", "ana", "Bob", "Émile", "Zoë Café", "José 123"];

const orNull = <T>(arb: fc.Arbitrary<T>) => fc.oneof({ weight: 1, arbitrary: fc.constant(null) }, { weight: 3, arbitrary: arb });

const recordArb = (id: number): fc.Arbitrary<WideRecord> =>
  fc.record({
    id: fc.constant(id),
    name: fc.constantFrom(...NAMES),
    email: fc.constantFrom(`u${id}@x.org`, `ana.${id}@café.fr`, `bob${id % 7}@x.com`),
    status: fc.constantFrom("active", "inactive"),
    n: orNull(fc.constantFrom(-3, -1, 0, 0.5, 2, 10, 100, 2.25)),
    d: orNull(fc.constantFrom("1969-12-31", "1970-01-01", "2000-02-29", "2024-03-01", "2024-12-31")),
    t: orNull(fc.constantFrom("1969-12-31T23:59:59.999Z", "2024-03-01T00:00:00.000Z", "2024-03-01T10:30:00.123Z", "2023-06-15T12:00:00.000Z")),
    e: orNull(fc.constantFrom("zeta", "Alpha", "beta")),
    b: orNull(fc.boolean()),
    s: orNull(fc.constantFrom(...TEXTS)),
    j: orNull(fc.constantFrom<unknown>({ a: 1, "b,c": "x\"y" }, [1, "x"], "str", 5, true)),
  }) as fc.Arbitrary<WideRecord>;

const datasetArb: fc.Arbitrary<WideRecord[]> = fc
  .uniqueArray(fc.integer({ min: -60, max: 1500 }), { minLength: 1, maxLength: 70 })
  .chain((ids) => fc.tuple(...ids.map(recordArb)));

/** Search terms: pieces of every searchable column (ids of 1–4 digits, enum values, accents), and terms nothing holds. */
const termArb = fc.constantFrom("1", "12", "123", "-1", "10", "100", "0", "caf", "CAFÉ", "ana", "émile", "act", "inactive", "zeta", "alp", "BET", "@x", "x.org", "a1", "straße", "zoe", "naïve", "qqq", "u1", ".", "é", "lait", "jos", "23");
const searchArb = fc.oneof(
  { weight: 1, arbitrary: fc.constantFrom("", "   ", "\t") },
  { weight: 5, arbitrary: fc.array(termArb, { minLength: 1, maxLength: 3 }).chain((terms) => fc.constantFrom(" ", "  ", "\t", " \u00a0").map((sep) => terms.join(sep))) },
);

const textModel = fc.record({ filterType: fc.constant("text"), type: fc.constantFrom("contains", "notContains", "equals", "startsWith"), filter: fc.constantFrom("a", "caf", "12", "zeta", "x y") });
const modelArb: Record<string, fc.Arbitrary<Record<string, unknown>>> = {
  n: fc.record({ filterType: fc.constant("number"), type: fc.constantFrom("greaterThan", "lessThanOrEqual", "notBlank", "blank"), filter: fc.constantFrom(0, 2, 10) }),
  d: fc.record({ filterType: fc.constant("date"), type: fc.constantFrom("greaterThan", "lessThan"), dateFrom: fc.constantFrom("2000-01-01 00:00:00", "2024-03-01 00:00:00") }),
  e: fc.oneof(textModel, fc.record({ filterType: fc.constant("set"), values: fc.subarray(["zeta", "Alpha", "beta", null]) })),
  b: fc.record({ filterType: fc.constant("set"), values: fc.subarray([true, false, null]) }),
  s: fc.oneof(textModel, fc.record({ filterType: fc.constant("set"), values: fc.subarray(["Café", "a1", "x y", null]) })),
  name: textModel,
  status: fc.record({ filterType: fc.constant("set"), values: fc.subarray(["active", "inactive"], { minLength: 1 }) }),
};
const filterModelArb = fc
  .subarray(Object.keys(modelArb), { maxLength: 3 })
  .chain((columns) => fc.tuple(...columns.map((c) => modelArb[c].map((m) => [c, m] as const))))
  .map((entries) => Object.fromEntries(entries));
const sortModelArb = fc.uniqueArray(fc.constantFrom(...SORTABLE), { maxLength: 3 }).chain((columns) => fc.tuple(...columns.map((colId) => fc.constantFrom("asc", "desc").map((sort) => ({ colId, sort: sort as "asc" | "desc" })))));

/** A record's CSV field for a column, as the export writes it (docs/api.md "Export"). */
function expectedField(spec: ColumnSpec, value: unknown): { text: string; quoted?: boolean } {
  if (value === null || value === undefined) return { text: "", quoted: false };
  if (spec.kind === "json") return { text: JSON.stringify(value) };
  if (typeof value === "string") return value === "" ? { text: "", quoted: true } : { text: value };
  return { text: String(value) };
}

describe("search, facets and export against the naive oracle", () => {
  test("search (POST quickFilter, GET q) ANDed with filters, sorted, in blocks", () => {
    fc.assert(
      fc.property(datasetArb, fc.array(fc.record({ search: searchArb, filterModel: filterModelArb, sortModel: sortModelArb, startRow: fc.integer({ min: 0, max: 30 }) }), { minLength: 1, maxLength: 5 }), (records, requests) => {
        const engine = createEngine(buildWideStore(records, SPECS));
        for (const r of requests) {
          const body = { startRow: r.startRow, endRow: r.startRow + 20, sortModel: r.sortModel, filterModel: r.filterModel, quickFilter: r.search };
          const { query } = parsePostBody(body, 1000, SCHEMA);
          const page = executeQuery(engine, query);
          expect({ keys: keysOf(engine.store, page.rows), total: page.total }).toEqual(oraclePost(records, TABLE, body));
          const get = parseGetQuery(new URLSearchParams({ q: r.search, pageSize: "1000" }).toString(), 1000, SCHEMA);
          const all = executeQuery(engine, get.query);
          expect(keysOf(engine.store, all.rows)).toEqual(oracleRows(records, TABLE, { sortModel: [], filterModel: {}, quickFilter: r.search }).map((x) => x.id));
        }
      }),
      { numRuns: 200 },
    );
  }, 120_000);

  test("a rare first term, then each next term checked on the rows left: through every searchable column", () => {
    // 40,000 plain rows holding every second term (so each is common, and "quokka" is evaluated
    // first), and a few rows holding the rare "quokka" that each reach the second term through
    // one column only (id digits, name, email, status, the enum, the text column)
    const plain: WideRecord[] = Array.from({ length: 40_000 }, (_, i) => ({ id: 7_123_000 + i, name: "Émile", email: `zebra${i}@x.org`, status: "inactive", n: null, d: null, t: null, e: "Alpha", b: null, s: "naïve", j: null }));
    const rare: WideRecord[] = [
      { id: 777_123, name: "Quokka", email: "q1@x.org", status: "active", n: null, d: null, t: null, e: null, b: null, s: null, j: null },
      { id: 2, name: "Quokka Émile", email: "q2@x.org", status: "active", n: null, d: null, t: null, e: null, b: null, s: null, j: null },
      { id: 3, name: "Quokka", email: "zebra@x.org", status: "active", n: null, d: null, t: null, e: null, b: null, s: null, j: null },
      { id: 4, name: "Quokka", email: "q4@x.org", status: "inactive", n: null, d: null, t: null, e: null, b: null, s: null, j: null },
      { id: 5, name: "Quokka", email: "q5@x.org", status: "active", n: null, d: null, t: null, e: "Alpha", b: null, s: null, j: null },
      { id: 6, name: "Quokka", email: "q6@x.org", status: "active", n: null, d: null, t: null, e: null, b: null, s: "naïve notes", j: null },
    ];
    const records = [...plain, ...rare];
    const engine = createEngine(buildWideStore(records, SPECS));
    for (const text of ["quokka 7123", "quokka EMILE", "quokka zebr", "quokka inact", "quokka alph", "quokka naive", "quokka nothing", "quokka a", "quokka \uD800"]) {
      const body = { startRow: 0, endRow: 50, sortModel: [], filterModel: {}, quickFilter: text };
      const page = executeQuery(engine, parsePostBody(body, 1000, SCHEMA).query);
      expect({ text, keys: keysOf(engine.store, page.rows), total: page.total }).toEqual({ text, ...oraclePost(records, TABLE, body) });
    }
  });

  test("facets: every kind, each column over every filter but its own, limits and value searches", () => {
    fc.assert(
      fc.property(
        datasetArb,
        fc.array(
          fc.record({
            columns: fc.subarray(FACETABLE, { minLength: 1, maxLength: 4 }),
            filterModel: filterModelArb,
            quickFilter: searchArb,
            limit: fc.option(fc.integer({ min: 1, max: 6 }), { nil: undefined }),
            search: fc.option(fc.constantFrom("", "a", "caf", "é", "ZE", "1", "x"), { nil: undefined }),
          }),
          { minLength: 1, maxLength: 4 },
        ),
        (records, requests) => {
          const engine = createEngine(buildWideStore(records, SPECS));
          for (const body of requests) {
            const answer = computeFacets(engine, parseFacetsPost(body, 1000, SCHEMA));
            expect(JSON.parse(JSON.stringify(answer))).toEqual(oracleFacets(records, TABLE, body));
          }
        },
      ),
      { numRuns: 200 },
    );
  }, 120_000);

  test("larger datasets (sparse posting lists and value runs, match sets held as rows): search, facets, export", () => {
    const bigArb = fc.uniqueArray(fc.integer({ min: -100, max: 20_000 }), { minLength: 1500, maxLength: 2500 }).chain((ids) => fc.tuple(...ids.map(recordArb)));
    fc.assert(
      fc.property(bigArb, searchArb, filterModelArb, sortModelArb, fc.subarray(FACETABLE, { minLength: 1, maxLength: 3 }), (records, quickFilter, filterModel, sortModel, columns) => {
        const engine = createEngine(buildWideStore(records, SPECS));
        const body = { startRow: 0, endRow: 50, sortModel, filterModel, quickFilter };
        const page = executeQuery(engine, parsePostBody(body, 1000, SCHEMA).query);
        expect({ keys: keysOf(engine.store, page.rows), total: page.total }).toEqual(oraclePost(records, TABLE, body));
        const facetsBody = { columns, filterModel, quickFilter, limit: 5 };
        expect(JSON.parse(JSON.stringify(computeFacets(engine, parseFacetsPost(facetsBody, 1000, SCHEMA))))).toEqual(oracleFacets(records, TABLE, facetsBody));
        const cursor = openExport(engine, parsePostBody(body, 1000, SCHEMA, { window: false, sort: true }).query, 300);
        const keys: unknown[] = [];
        for (let rows = cursor.next(); rows !== null; rows = cursor.next()) keys.push(...keysOf(engine.store, rows));
        expect(keys).toEqual(oracleRows(records, TABLE, body).map((r) => r.id));
      }),
      { numRuns: 25 },
    );
  }, 120_000);

  test("export: every match in order, batch by batch, as NDJSON records and RFC 4180 CSV fields", () => {
    fc.assert(
      fc.property(datasetArb, filterModelArb, sortModelArb, searchArb, fc.integer({ min: 1, max: 9 }), (records, filterModel, sortModel, quickFilter, batch) => {
        const engine = createEngine(buildWideStore(records, SPECS));
        const { query } = parsePostBody({ filterModel, sortModel, quickFilter }, 1000, SCHEMA, { window: false, sort: true });
        const cursor = openExport(engine, query, batch);
        const batches: Uint32Array[] = [];
        for (let rows = cursor.next(); rows !== null; rows = cursor.next()) {
          expect(rows.length).toBeLessThanOrEqual(batch);
          batches.push(rows.slice());
        }
        const expected = oracleRows(records, TABLE, { filterModel, sortModel, quickFilter }) as WideRecord[];
        const rows = batches.flatMap((b) => Array.from(b));
        expect(cursor.total).toBe(expected.length);
        expect(keysOf(engine.store, Uint32Array.from(rows))).toEqual(expected.map((r) => r.id));
        const store = engine.store;
        const ndjson = batches.map((b) => new TextDecoder().decode(rowsNdjson(store, b))).join("");
        const lines = ndjson.split("\n");
        expect(lines.pop()).toBe("");
        const normalized = (r: WideRecord) => Object.fromEntries(SCHEMA.columns.map((c) => [c.id, c.kind === "datetime" && typeof r[c.id] === "string" ? new Date(r[c.id] as string).toISOString() : (r[c.id] ?? null)]));
        expect(lines.map((l) => JSON.parse(l))).toEqual(expected.map(normalized));
        const csv = parseCsv(batches.map((b) => new TextDecoder().decode(rowsCsv(store, b))).join(""));
        expect(csv.length).toBe(expected.length);
        csv.forEach((fields, i) => {
          const record = normalized(expected[i]);
          expect(fields.length).toBe(SCHEMA.columns.length);
          SCHEMA.columns.forEach((spec, f) => {
            const want = expectedField(spec, record[spec.id]);
            expect(fields[f].text).toBe(want.text);
            if (want.quoted !== undefined) expect(fields[f].quoted).toBe(want.quoted);
          });
        });
      }),
      { numRuns: 200 },
    );
  }, 120_000);
});
