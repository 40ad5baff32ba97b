import { describe, expect, test } from "bun:test";
import fc from "fast-check";
import { popcount32 } from "../../src/bits/bitmap.ts";
import { createEngine, executeQuery, filterCacheKey, filterResultOf } from "../../src/engine/execute.ts";
import { buildSegments, normalizeSort, windowRows, windowRowsWork } from "../../src/engine/order.ts";
import { type FilterResult, matchRows } from "../../src/engine/row-set.ts";
import type { Predicate, Query } from "../../src/query/types.ts";
import type { UserRecord } from "../../src/generate/record.ts";
import { singleCode } from "../../src/engine/row-set.ts";
import { buildStoreFromRecords } from "../support/table-store.ts";
import { recordAt } from "../../src/store/rows-json.ts";
import { queryArb, recordsArb } from "../support/arbitraries.ts";
import { naiveQuery } from "../support/oracle.ts";

/** Runs the engine and returns the window's records and total. */
function run(engine: ReturnType<typeof createEngine>, query: Query): { rows: UserRecord[]; total: number } {
  const page = executeQuery(engine, query);
  return { rows: Array.from(page.rows, (row) => recordAt(engine.store, row) as unknown as UserRecord), total: page.total };
}

const ids = (rows: UserRecord[]) => rows.map((r) => r.id);

/** A bitmap over `rowCount` rows holding `rows`. */
function bitmapOf(rowCount: number, rows: Uint32Array): Uint32Array {
  const bits = new Uint32Array((rowCount + 31) >>> 5);
  for (const row of rows) bits[row >>> 5] |= 1 << (row & 31);
  return bits;
}

/** A text test on a column, as the registry compiles an AG Grid text model. */
const text = (column: string, type: "contains" | "notBlank", value: string): Predicate => ({ kind: "column", column, test: { op: "text", type, value } });

/** A filter on the status column: the rows of these values. */
const statusIn = (...values: string[]): Predicate => ({ kind: "column", column: "status", test: { op: "set", values, nulls: false } });

describe("engine against the naive oracle", () => {
  for (const plan of ["auto", "walk", "sort"] as const) {
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

  test("a walk in pieces (order.ts windowRowsWork) gives the window one walk gives, pausing between its pieces", () => {
    fc.assert(
      fc.property(
        recordsArb.chain((records) => fc.tuple(fc.constant(records), fc.array(queryArb(records), { minLength: 1, maxLength: 8 }), fc.integer({ min: 1, max: 40 }))),
        ([records, queries, perPiece]) => {
          const store = buildStoreFromRecords(records);
          const engine = createEngine(store);
          for (const query of queries) {
            const result = filterResultOf(engine, query.filter);
            // the walks that run in pieces are of match sets (a mask's rows are a slice)
            if (result.kind !== "set" || query.offset >= result.set.count) continue;
            const keys = normalizeSort(store, query.sort);
            // a walk tests an exact bitmap of the matches
            const filter: FilterResult = { kind: "set", set: { ...result.set, bits: bitmapOf(store.rowCount, matchRows(store, result.set)), bitsExact: true, sharedBits: false, rows: null, list: null } };
            const segments = buildSegments(store, keys, result.set.mask);
            const work = windowRowsWork((offset, limit, resume) => windowRows(store, segments, filter, offset, limit, resume), query.offset, query.limit, null, perPiece);
            let pauses = 0;
            let step = work.next();
            while (step.done !== true) {
              pauses++;
              step = work.next();
            }
            const expected = naiveQuery(records, query);
            expect(Array.from(step.value.rows, (row) => (recordAt(store, row) as unknown as UserRecord).id)).toEqual(ids(expected.rows));
            // one pause per piece of the walk to the window's start
            expect(pauses).toBe(Math.max(0, Math.ceil(query.offset / perPiece) - 1));
          }
        },
      ),
      { numRuns: 100 },
    );
  }, 120_000);

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
    { filter: statusIn("inactive"), sort: [{ column: "name", direction: "desc", absolute: false }], offset: 100, limit: 100 },
    { filter: text("name", "contains", "emi"), sort: [{ column: "email", direction: "asc", absolute: false }], offset: 50, limit: 100 },
    { filter: { kind: "and", children: [statusIn("active"), text("email", "contains", "ex1")] }, sort: [{ column: "name", direction: "asc", absolute: false }, { column: "id", direction: "desc", absolute: false }], offset: 700, limit: 100 },
    { filter: null, sort: [{ column: "id", direction: "desc", absolute: true }], offset: 2000, limit: 50 },
    { filter: statusIn("active"), sort: [{ column: "status", direction: "desc", absolute: false }, { column: "id", direction: "asc", absolute: true }], offset: 10, limit: 50 },
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

describe("posting lists under status filters, dense and sparse", () => {
  // 4000 rows of random syllables: some trigrams are in more than 4000 / 32 = 125 rows (dense
  // lists, bitmaps), many in fewer (sparse lists, grouped by status).
  const syllables = ["ka", "ri", "mo", "na", "el", "so", "ли", "на", "ва", "zu", "qe", "xo", "ée"];
  let state = 12345;
  const next = (m: number) => {
    state = (Math.imul(state, 1103515245) + 12345) >>> 0;
    return (state >>> 8) % m;
  };
  const word = (parts: number) => Array.from({ length: parts }, () => syllables[next(syllables.length)]).join("");
  const records: UserRecord[] = [];
  for (let i = 0; i < 4000; i++) {
    records.push({
      id: i * 2 + 1,
      name: `${word(2 + next(2))} ${word(2)}`,
      email: `${word(3)}.${next(500)}@${["ex", "mail", "corp"][next(3)]}.org`,
      status: next(10) < 7 ? "active" : "inactive",
    });
  }
  const store = buildStoreFromRecords(records);
  const needles = ["kar", "ris", "mon", "лин", "ава", "zuq", "xoé", "éek", "ena", "a k", "qex", ".1@", "orp", "kam", "sok", "нал"];
  const sorts: Query["sort"][] = [
    [],
    [{ column: "id", direction: "desc", absolute: false }],
    [{ column: "name", direction: "asc", absolute: false }],
    [{ column: "email", direction: "desc", absolute: false }],
    [{ column: "status", direction: "asc", absolute: false }, { column: "name", direction: "desc", absolute: false }],
  ];
  const queryArbitrary = fc.record({
    needle: fc.constantFrom(...needles),
    other: fc.option(fc.constantFrom(...needles), { nil: undefined }),
    column: fc.constantFrom("name" as const, "email" as const),
    statuses: fc.constantFrom<string[]>(["active"], ["inactive"], ["active", "inactive"]),
    nested: fc.boolean(),
    sort: fc.constantFrom(...sorts),
    offset: fc.nat(400),
    limit: fc.integer({ min: 1, max: 120 }),
  });

  for (const plan of ["auto", "walk", "sort"] as const) {
    test(`status AND contains, nested and combined (plan ${plan})`, () => {
      const engine = createEngine(store, { plan });
      fc.assert(
        fc.property(queryArbitrary, (q) => {
          const contains = text(q.column, "contains", q.needle);
          const status = statusIn(...q.statuses);
          let filter: Predicate = { kind: "and", children: [status, contains] };
          if (q.nested) filter = { kind: "and", children: [filter, text("name", "notBlank", "")] };
          if (q.other !== undefined) filter = { kind: "and", children: [filter, text("email", "contains", q.other)] };
          const query: Query = { filter, sort: q.sort, offset: q.offset, limit: q.limit };
          for (const window of [query, { ...query, offset: query.offset + query.limit }]) {
            const expected = naiveQuery(records, window);
            const got = run(engine, window);
            expect(got.total).toBe(expected.total);
            expect(ids(got.rows)).toEqual(ids(expected.rows));
          }
        }),
        { numRuns: 300 },
      );
    }, 120_000);
  }

  test("the dataset has both dense and sparse lists for the needles", () => {
    const counts = needles.map((needle) => records.filter((r) => r.name.toLowerCase().normalize("NFKD").replace(/\p{M}/gu, "").includes(needle)).length);
    expect(counts.some((c) => c * 32 > records.length)).toBe(true);
    expect(counts.some((c) => c > 0 && c * 32 <= records.length)).toBe(true);
  });
});

test("a needle of 4 code points with one distinct trigram is checked, not taken as its list", () => {
  // "1111" has the single trigram "111", which "111ué" also holds.
  const records: UserRecord[] = [
    { id: 1, name: "1111", email: "a@x", status: "active" },
    { id: 2, name: "111ué01", email: "b@x", status: "active" },
    { id: 3, name: "x11111", email: "c@x", status: "inactive" },
  ];
  const engine = createEngine(buildStoreFromRecords(records));
  for (const statuses of [["active"], ["active", "inactive"]]) {
    const query: Query = {
      filter: { kind: "and", children: [statusIn(...statuses), text("name", "contains", "1111")] },
      sort: [],
      offset: 0,
      limit: 10,
    };
    expect(run(engine, query)).toEqual({ rows: naiveQuery(records, query).rows, total: naiveQuery(records, query).total });
  }
});

test("the scratch bitmap of a walk is kept for the same set's next window and cleared for another", () => {
  // 6400 rows; "zzq" in 100 of them, "qqz" in 50: sparse lists (count * 32 <= 6400), walked in name order.
  const records: UserRecord[] = Array.from({ length: 6400 }, (_, i) => ({
    id: i + 1,
    name: `n${(i * 7919) % 6400}${i % 64 === 0 ? " zzq" : ""}${i % 128 === 1 ? " qqz" : ""}`,
    email: `u${i}@x`,
    status: "active",
  }));
  const engine = createEngine(buildStoreFromRecords(records), { plan: "walk" });
  const query = (needle: string, offset: number): Query => ({
    filter: text("name", "contains", needle),
    sort: [{ column: "name", direction: "asc", absolute: false }],
    offset,
    limit: 10,
  });
  const bitsSet = () => (engine.scratch.bits as Uint32Array).reduce((n, w) => n + (w === 0 ? 0 : popcount32(w)), 0);
  for (const [needle, offset, total] of [["zzq", 0, 100], ["zzq", 10, 100], ["qqz", 0, 50], ["zzq", 20, 100], ["qqz", 40, 50]] as const) {
    expect(run(engine, query(needle, offset))).toEqual({ rows: naiveQuery(records, query(needle, offset)).rows, total });
    // The scratch holds exactly the last walked set's rows.
    expect(bitsSet()).toBe(total);
  }
});

describe("filter cache keys and partition masks", () => {
  test("equal predicate trees share a key, different ones do not", () => {
    const a: Predicate = { kind: "and", children: [statusIn("inactive"), text("name", "contains", "ann")] };
    const b: Predicate = JSON.parse(JSON.stringify(a));
    const c: Predicate = text("name", "contains", "ann");
    expect(filterCacheKey(a)).toBe(JSON.stringify(a));
    expect(filterCacheKey(a)).toBe(filterCacheKey(a));
    expect(filterCacheKey(b)).toBe(filterCacheKey(a));
    expect(filterCacheKey(c)).not.toBe(filterCacheKey(a));
  });

  test("singleCode names the one code of a one-bit mask", () => {
    expect([0, 1, 2, 3, 4, 6, -1].map(singleCode)).toEqual([-1, 0, 1, -1, 2, -1, -1]);
  });
});

describe("the cache budget counts keys", () => {
  test("thousands of distinct long filter values stay within the byte budget, keys included", () => {
    const records = Array.from({ length: 500 }, (_, i) => ({ id: i + 1, name: `name ${i}`, email: `u${i}@example.com`, status: i % 2 ? "active" : "inactive" }) as UserRecord);
    const budget = 1 << 20;
    const engine = createEngine(buildStoreFromRecords(records), { cacheBytes: budget });
    for (let i = 0; i < 3_000; i++) {
      const value = `${i}`.padStart(256, "x");
      executeQuery(engine, { filter: text("name", "contains", value), sort: [], offset: 0, limit: 10 });
    }
    // each key holds its 256-character value: 2 bytes a character at least
    expect(engine.filters.size * 2 * 256).toBeLessThanOrEqual(engine.filters.maxBytes);
    expect(engine.filters.bytes).toBeLessThanOrEqual(engine.filters.maxBytes);
  });
});
