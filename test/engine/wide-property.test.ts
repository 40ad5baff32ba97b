/**
 * The engine against the naive wide oracle (test/support/wide-oracle.ts) on random wide datasets
 * — every column kind, many nulls and ties, an enum declared out of collation order — and random
 * AG Grid bodies and GET queries: every filter type on every kind it applies to, combined
 * conditions, multi-key sorts on every sortable column, consecutive blocks, under every plan.
 */
import { describe, expect, test } from "bun:test";
import fc from "fast-check";
import { createEngine, executeQuery } from "../../src/engine/execute.ts";
import { parseGetQuery } from "../../src/query/get.ts";
import { parsePostBody } from "../../src/query/post.ts";
import { oracleGet, oraclePost } from "../support/wide-oracle.ts";
import { KIND_SCHEMA, KIND_SPECS, type WideRecord, buildWideStore } from "../support/wide-store.ts";

const SPECS = KIND_SPECS;
const SCHEMA = KIND_SCHEMA;
const SORTABLE = ["id", "name", "status", "n", "d", "t", "e", "b", "s"];

const NUMBERS = [-3, -1, 0, 0.5, 2, 10, 100, 2.25];
const DATES = ["1969-12-31", "1970-01-01", "2000-02-29", "2024-03-01", "2024-03-02", "2024-12-31"];
const DATETIMES = ["1969-12-31T23:59:59.999Z", "2024-03-01T00:00:00.000Z", "2024-03-01T10:30:00.123Z", "2024-03-01T23:59:59.999Z", "2024-03-02T00:00:00.000Z", "2023-06-15T12:00:00.000Z"];
const TEXTS = ["", "  ", "Café", "cafe", "CAFÉ au lait", "zoë", "Zoe", "a1", "a10", "a2", "ñ", "x y"];
const NAMES = ["Ana", "ana", "Bob", "Émile"];

const orNull = <T>(arb: fc.Arbitrary<T>) => fc.oneof({ weight: 1, arbitrary: fc.constant(null) }, { weight: 3, arbitrary: arb });

const recordArb = (id: number): fc.Arbitrary<WideRecord> =>
  fc.record({
    id: fc.constant(id),
    name: fc.constantFrom(...NAMES),
    email: fc.constant(`u${id}@x`),
    status: fc.constantFrom("active", "inactive"),
    n: orNull(fc.constantFrom(...NUMBERS)),
    d: orNull(fc.constantFrom(...DATES)),
    t: orNull(fc.constantFrom(...DATETIMES)),
    e: orNull(fc.constantFrom("zeta", "Alpha", "beta")),
    b: orNull(fc.boolean()),
    s: orNull(fc.constantFrom(...TEXTS)),
    j: orNull(fc.constantFrom<unknown>({ a: 1 }, [1, "x"], "str", 5, true)),
  }) as fc.Arbitrary<WideRecord>;

const datasetArb: fc.Arbitrary<WideRecord[]> = fc
  .uniqueArray(fc.integer({ min: -40, max: 200 }), { minLength: 1, maxLength: 60 })
  .chain((ids) => fc.tuple(...ids.map(recordArb)));

/** A text needle: pieces of the values' output strings, so matches are frequent. */
const needleArb = fc.constantFrom("", "a", "caf", "É", "2024-03-01", "t10", "1", "-", "0.5", "tru", "false", "zeta", "ALPHA", " ", "z", ".123z");

const textModel = fc.record({ filterType: fc.constant("text"), type: fc.constantFrom("contains", "notContains", "equals", "notEqual", "startsWith", "endsWith", "blank", "notBlank"), filter: needleArb });
const numberModel = fc.oneof(
  fc.record({ filterType: fc.constant("number"), type: fc.constantFrom("equals", "notEqual", "lessThan", "lessThanOrEqual", "greaterThan", "greaterThanOrEqual"), filter: fc.constantFrom<number | string>(...NUMBERS, "2", "-1") }),
  fc.record({ filterType: fc.constant("number"), type: fc.constant("inRange"), filter: fc.constantFrom(...NUMBERS), filterTo: fc.constantFrom(...NUMBERS) }),
  fc.record({ filterType: fc.constant("number"), type: fc.constantFrom("blank", "notBlank") }),
);
const day = fc.constantFrom("1969-12-31 00:00:00", "1970-01-01 00:00:00", "2024-03-01 00:00:00", "2024-03-02 00:00:00", "2000-02-28 00:00:00", "2024-12-31");
const dateModel = fc.oneof(
  fc.record({ filterType: fc.constant("date"), type: fc.constantFrom("equals", "notEqual", "lessThan", "greaterThan"), dateFrom: day }),
  fc.record({ filterType: fc.constant("date"), type: fc.constant("inRange"), dateFrom: day, dateTo: day }),
  fc.record({ filterType: fc.constant("date"), type: fc.constantFrom("blank", "notBlank") }),
);
const setValues: Record<string, fc.Arbitrary<unknown>> = {
  n: fc.constantFrom<unknown>(...NUMBERS, "0.50", "10"),
  d: fc.constantFrom<unknown>(...DATES, "2024-03-03"),
  t: fc.constantFrom<unknown>(...DATETIMES, "2024-03-01T10:30:00.123z"),
  e: fc.constantFrom<unknown>("zeta", "ALPHA", "beta"),
  b: fc.constantFrom<unknown>(true, false, "TRUE", "false"),
  s: fc.constantFrom<unknown>(...TEXTS, "CAFE"),
};
const setModel = (column: string) => fc.record({ filterType: fc.constant("set"), values: fc.array(fc.oneof({ weight: 1, arbitrary: fc.constant(null) }, { weight: 4, arbitrary: setValues[column] }), { maxLength: 4 }) });

/** A simple model fitting the column's kind. */
function simpleModel(column: string): fc.Arbitrary<Record<string, unknown>> {
  const kind = SPECS.find((s) => s.id === column)?.kind;
  const options: fc.Arbitrary<Record<string, unknown>>[] = [textModel, setModel(column)];
  if (kind === "number") options.push(numberModel, numberModel);
  if (kind === "date" || kind === "datetime") options.push(dateModel, dateModel);
  return fc.oneof(...options);
}

/** A simple model, or two or three of one filter type combined with AND or OR. */
function columnModel(column: string): fc.Arbitrary<Record<string, unknown>> {
  return fc.oneof(
    { weight: 3, arbitrary: simpleModel(column) },
    {
      weight: 1,
      arbitrary: simpleModel(column).chain((first) =>
        fc.record({
          filterType: fc.constant(first.filterType),
          operator: fc.constantFrom("AND", "OR"),
          conditions: fc.array(simpleModel(column).filter((m) => m.filterType === first.filterType), { minLength: 1, maxLength: 2 }).map((rest) => [first, ...rest]),
        }),
      ),
    },
  );
}

const filterModelArb = fc
  .subarray(["n", "d", "t", "e", "b", "s"], { maxLength: 3 })
  .chain((columns) => fc.tuple(...columns.map((c) => columnModel(c).map((m) => [c, m] as const))))
  .chain((entries) =>
    fc.oneof(
      { weight: 4, arbitrary: fc.constant(Object.fromEntries(entries)) },
      { weight: 1, arbitrary: fc.constantFrom("active", "inactive").map((s) => ({ ...Object.fromEntries(entries), status: { filterType: "set", values: [s] } })) },
    ),
  );

const sortModelArb = fc.uniqueArray(fc.constantFrom(...SORTABLE), { maxLength: 3 }).chain((columns) => fc.tuple(...columns.map((colId) => fc.constantFrom("asc", "desc").map((sort) => ({ colId, sort: sort as "asc" | "desc" })))));

const bodyArb = fc.record({
  startRow: fc.integer({ min: 0, max: 40 }),
  size: fc.integer({ min: 1, max: 25 }),
  sortModel: sortModelArb,
  filterModel: filterModelArb,
});

/** The engine's answer to a POST body: ids and total. */
function enginePost(engine: ReturnType<typeof createEngine>, body: object): { ids: number[]; total: number } {
  const { query } = parsePostBody(body, 1000, SCHEMA);
  const page = executeQuery(engine, query);
  return { ids: Array.from(page.rows, (row) => engine.store.ids[row]), total: page.total };
}

describe("wide datasets against the naive oracle", () => {
  for (const plan of ["auto", "walk", "gather"] as const) {
    test(`AG Grid bodies: every filter type on every kind, multi-key sorts, consecutive blocks (plan ${plan})`, () => {
      fc.assert(
        fc.property(datasetArb, fc.array(bodyArb, { minLength: 1, maxLength: 6 }), (records, bodies) => {
          const engine = createEngine(buildWideStore(records, SPECS), { plan });
          for (const b of bodies) {
            for (let block = 0; block < 2; block++) {
              const startRow = b.startRow + block * b.size;
              const body = { startRow, endRow: startRow + b.size, sortModel: b.sortModel, filterModel: b.filterModel };
              const expected = oraclePost(records, SPECS, body);
              expect(enginePost(engine, body)).toEqual(expected);
            }
          }
        }),
        { numRuns: 150 },
      );
    }, 120_000);
  }

  test("GET filter[col] forms on every kind, sorted by any column", () => {
    const filterArb: Record<string, fc.Arbitrary<string>> = {
      n: fc.oneof(fc.constantFrom(...NUMBERS).map(String), fc.tuple(fc.constantFrom("", "-1", "0", "2"), fc.constantFrom("", "0.5", "10")).map(([a, b]) => `${a},${b}`)),
      d: fc.oneof(fc.constantFrom(...DATES), fc.tuple(fc.constantFrom("", "1970-01-01", "2024-03-01"), fc.constantFrom("", "2024-03-01", "2024-12-31")).map(([a, b]) => `${a},${b}`)),
      t: fc.oneof(
        fc.constantFrom("2024-03-01", "2024-03-01T10:30:00.123Z", "1969-12-31"),
        fc.tuple(fc.constantFrom("", "2024-03-01", "2024-03-01T10:30:00.123Z"), fc.constantFrom("", "2024-03-01", "2024-03-02T00:00:00Z")).map(([a, b]) => `${a},${b}`),
      ),
      e: fc.subarray(["zeta", "ALPHA", "beta"], { minLength: 1 }).map((v) => v.join(",")),
      b: fc.constantFrom("true", "FALSE", "true,false"),
      s: fc.constantFrom("caf", "É", "a1", " ", "zo"),
    };
    const getArb = fc.record({
      columns: fc.subarray(Object.keys(filterArb), { maxLength: 3 }),
      sortBy: fc.option(fc.constantFrom(...SORTABLE), { nil: undefined }),
      sortOrder: fc.constantFrom("asc", "desc") as fc.Arbitrary<"asc" | "desc">,
      page: fc.integer({ min: 1, max: 4 }),
      pageSize: fc.integer({ min: 1, max: 20 }),
    }).chain((r) => fc.tuple(...r.columns.map((c) => filterArb[c].map((v) => [c, v] as const))).map((filters) => ({ ...r, filters: Object.fromEntries(filters) })));
    fc.assert(
      fc.property(datasetArb, fc.array(getArb, { minLength: 1, maxLength: 6 }), (records, requests) => {
        const engine = createEngine(buildWideStore(records, SPECS));
        for (const r of requests) {
          const params = new URLSearchParams({ page: String(r.page), pageSize: String(r.pageSize), sortOrder: r.sortOrder });
          if (r.sortBy !== undefined) params.set("sortBy", r.sortBy);
          for (const [c, v] of Object.entries(r.filters)) params.set(`filter[${c}]`, v);
          const { query } = parseGetQuery(params.toString(), 1000, SCHEMA);
          const page = executeQuery(engine, query);
          expect({ ids: Array.from(page.rows, (row) => engine.store.ids[row]), total: page.total }).toEqual(oracleGet(records, SPECS, r));
        }
      }),
      { numRuns: 200 },
    );
  }, 120_000);
});
