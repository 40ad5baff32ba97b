import { describe, expect, test } from "bun:test";
import fc from "fast-check";
import { createEngine, executeQuery } from "../../src/engine/execute.ts";
import type { Query } from "../../src/query/types.ts";
import type { UserRecord } from "../../src/schema.ts";
import { buildStoreFromRecords } from "../../src/store/build.ts";
import { recordAt } from "../../src/store/rows-json.ts";
import { queryArb, recordsArb } from "../support/arbitraries.ts";
import { naiveQuery } from "../support/oracle.ts";

/** Runs the engine and returns the window's records and total. */
function run(engine: ReturnType<typeof createEngine>, query: Query): { rows: UserRecord[]; total: number } {
  const page = executeQuery(engine, query);
  return { rows: Array.from(page.rows, (row) => recordAt(engine.store, row)), total: page.total };
}

const ids = (rows: UserRecord[]) => rows.map((r) => r.id);

describe("engine against the naive oracle", () => {
  for (const plan of ["auto", "walk", "gather"] as const) {
    test(`random datasets and queries (plan ${plan})`, () => {
      fc.assert(
        fc.property(
          recordsArb.chain((records) => fc.tuple(fc.constant(records), fc.array(queryArb(records), { minLength: 1, maxLength: 12 }))),
          ([records, queries]) => {
            const engine = createEngine(buildStoreFromRecords(records), { plan });
            for (const query of queries) {
              const expected = naiveQuery(records, query);
              const got = run(engine, query);
              expect(got.total).toBe(expected.total);
              expect(ids(got.rows)).toEqual(ids(expected.rows));
              // The same query again (now from the cache), then the next window (checkpoint resume).
              expect(ids(run(engine, query).rows)).toEqual(ids(expected.rows));
              const next = { ...query, offset: query.offset + query.limit };
              expect(ids(run(engine, next).rows)).toEqual(ids(naiveQuery(records, next).rows));
            }
          },
        ),
        { numRuns: 400 },
      );
    }, 120_000);
  }

  test("records come back exactly as stored", () => {
    fc.assert(
      fc.property(recordsArb, (records) => {
        const engine = createEngine(buildStoreFromRecords(records));
        const got = run(engine, { filter: null, sort: [], offset: 0, limit: records.length });
        expect(got.rows).toEqual([...records].sort((a, b) => a.id - b.id));
      }),
      { numRuns: 100 },
    );
  }, 60_000);
});

describe("engine plans on a larger dataset", () => {
  // Enough rows for long runs of equal names and for walks to matter.
  const records: UserRecord[] = [];
  const first = ["Ana", "ána", "Bob", "Émile", "emile", "Zoë", "Ölaf", "Ivan", "Иван", "李"];
  for (let i = 0; i < 5000; i++) {
    records.push({
      id: i * 3 - 7000,
      name: `${first[(i * 7) % first.length]} ${i % 13 === 0 ? "" : String.fromCharCode(65 + (i % 26))}${i % 5}`,
      email: `user.${(i * 37) % 1000}@ex${i % 3}.com`,
      status: i % 10 < 7 ? "active" : "inactive",
    });
  }
  const engine = createEngine(buildStoreFromRecords(records));
  const cases: Query[] = [
    { filter: null, sort: [{ column: "name", direction: "asc", absolute: false }], offset: 2500, limit: 100 },
    { filter: null, sort: [{ column: "status", direction: "asc", absolute: false }, { column: "name", direction: "desc", absolute: false }], offset: 2500, limit: 100 },
    { filter: null, sort: [{ column: "name", direction: "asc", absolute: false }, { column: "email", direction: "desc", absolute: false }], offset: 1234, limit: 200 },
    { filter: { kind: "status", codes: [1] }, sort: [{ column: "name", direction: "desc", absolute: false }], offset: 100, limit: 100 },
    { filter: { kind: "text", column: "name", op: "contains", value: "emi" }, sort: [{ column: "email", direction: "asc", absolute: false }], offset: 50, limit: 100 },
    { filter: { kind: "and", children: [{ kind: "status", codes: [0] }, { kind: "text", column: "email", op: "contains", value: "ex1" }] }, sort: [{ column: "name", direction: "asc", absolute: false }, { column: "id", direction: "desc", absolute: false }], offset: 700, limit: 100 },
    { filter: null, sort: [{ column: "id", direction: "desc", absolute: true }], offset: 2000, limit: 50 },
    { filter: { kind: "status", codes: [0] }, sort: [{ column: "status", direction: "desc", absolute: false }, { column: "id", direction: "asc", absolute: true }], offset: 10, limit: 50 },
  ];
  for (const [i, query] of cases.entries()) {
    test(`case ${i}: consecutive 100-row blocks match the oracle`, () => {
      for (let block = 0; block < 5; block++) {
        const q = { ...query, offset: query.offset + block * query.limit };
        const expected = naiveQuery(records, q);
        const got = run(engine, q);
        expect(got.total).toBe(expected.total);
        expect(ids(got.rows)).toEqual(ids(expected.rows));
      }
    });
  }
});
