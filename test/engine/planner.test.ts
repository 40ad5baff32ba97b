/**
 * The planner: which step answers each predicate (by the column's kind and stored parts, never
 * its name), how the window is ordered, what it costs — and that the plan explain prints is the
 * plan that ran (analyze's rows against the answer).
 */
import { describe, expect, test } from "bun:test";
import { createEngine, execute, explain, planOf } from "../../src/engine/execute.ts";
import type { FilterStep } from "../../src/engine/plan.ts";
import { COST, DEFER_ABOVE, gatherCost, planPredicate, walkCost, windowChoice } from "../../src/engine/planner.ts";
import type { Predicate, Query, SortKey } from "../../src/query/types.ts";
import type { Store } from "../../src/store/types.ts";
import { naiveQuery } from "../support/oracle.ts";
import { buildStoreFromRecords, buildTableStore } from "../support/table-store.ts";

const byName: SortKey[] = [{ column: "name", direction: "asc", absolute: false }];
const byNameThenEmail: SortKey[] = [...byName, { column: "email", direction: "desc", absolute: false }];

const text = (column: string, type: "contains" | "blank", value: string): Predicate => ({ kind: "column", column, test: { op: "text", type, value } });
const statusIn = (...values: string[]): Predicate => ({ kind: "column", column: "status", test: { op: "set", values, nulls: false } });
const idBelow = (x: number): Predicate => ({ kind: "column", column: "id", test: { op: "range", lo: Number.NEGATIVE_INFINITY, loOpen: false, hi: x, hiOpen: true, negate: false } });

const records = Array.from({ length: 2_000 }, (_, i) => ({ id: i + 1, name: `name ${i}`, email: `user${i}@example.com`, status: i % 2 ? "active" : "inactive" }));
const store = buildStoreFromRecords(records);

describe("window plans", () => {
  test("a walk costs the rows it reads at the match set's selectivity", () => {
    expect(walkCost(100, 1_000_000, 1_000_000)).toBe(100 * COST.WALK_ROW);
    expect(walkCost(100, 1_000_000, 1_000)).toBe(100_000 * COST.WALK_ROW);
    expect(walkCost(100, 1_000_000, 0)).toBe(0);
  });

  test("a comparator sort costs more than the packed one-key sort", () => {
    expect(gatherCost(10_000, byNameThenEmail)).toBeGreaterThan(gatherCost(10_000, byName));
  });

  test("sparse matches deep in the order are sorted; dense ones near the start are walked", () => {
    // only the partition's counts are read: a 10M-row store's shape without its arrays
    const tenMillion = { rowCount: 10_000_000, partition: { column: "status", codes: new Uint8Array(0), counts: Uint32Array.of(0, 7_000_000, 3_000_000) } } as unknown as Store;
    expect(windowChoice(tenMillion, 5_100, 0b110, 8_000, byName).op).toBe("sort");
    const walk = windowChoice(tenMillion, 100, 0b110, 5_000_000, byName);
    expect(walk).toEqual({ op: "walk", cost: walkCost(100, 10_000_000, 5_000_000) });
    // a deep window of a half-selective set: more than the deferral threshold either way
    expect(windowChoice(tenMillion, 4_900_100, 0b110, 5_000_000, byName).cost).toBeGreaterThan(DEFER_ABOVE);
  });
});

describe("steps by kind and stored parts", () => {
  const step = (p: Predicate): FilterStep => planPredicate(store, p);

  test("a 3-letter contains is its posting list; a shorter needle is a scan; a key's 2 digits format every key", () => {
    const list = step(text("email", "contains", "use"));
    const scan = step(text("email", "contains", "us"));
    const keys = step(text("id", "contains", "12"));
    expect([list.op, scan.op, keys.op]).toEqual(["postingList", "scan", "values"]);
    expect(list.estimatedCost).toBeLessThan(scan.estimatedCost);
    expect(scan.estimatedCost).toBeLessThan(keys.estimatedCost);
    // a key's 3 digits: its own trigram lists (over its decimal forms)
    expect(step(text("id", "contains", "123")).op).toBe("postingList");
  });

  test("a test on the partition column is a mask of its values; on another enum, values of its order", () => {
    const mask = step(statusIn("inactive"));
    expect(mask).toMatchObject({ op: "partition", column: "status", detail: "inactive", estimatedRows: 1_000 });
    expect(step(text("status", "contains", "act"))).toMatchObject({ op: "all" });
    expect(step(text("status", "contains", "in"))).toMatchObject({ op: "partition", detail: "inactive" });
  });

  test("a needle with a trigram no row holds costs its lookups only", () => {
    const none = step(text("name", "contains", "qqqq"));
    expect(none.op).toBe("none");
    expect(none.estimatedCost).toBeLessThan(DEFER_ABOVE / 100);
  });

  test("combinations cost their children plus a bitmap pass each; a posting list under a mask is counted exactly", () => {
    const a = statusIn("active");
    const b = idBelow(10);
    const words = Math.ceil(2_000 / 32);
    const both = step({ kind: "and", children: [a, b] });
    expect(both.estimatedCost).toBe(step(a).estimatedCost + step(b).estimatedCost + 2 * words * COST.BITMAP_WORD);
    const exact = step({ kind: "and", children: [a, text("email", "contains", "r19")] });
    expect(exact.estimatedRows).toBe(records.filter((r) => r.status === "active" && r.email.includes("r19")).length);
  });

  test("the same column of another name is planned the same: nothing is special by name", () => {
    const renamed = buildTableStore(
      records.map((r) => ({ user_id: r.id, handle: r.name, mail: r.email, state: r.status })),
      { specs: [{ id: "user_id", kind: "number" }, { id: "handle", kind: "text" }, { id: "mail", kind: "text" }, { id: "state", kind: "enum", values: ["active", "inactive"] }], key: "user_id" },
    );
    const ops = (s: Store, p: Predicate) => planPredicate(s, p);
    const printable = (f: FilterStep) => JSON.stringify(f, (k, v) => (["stored", "list", "source"].includes(k) ? undefined : v));
    const a = ops(store, { kind: "and", children: [statusIn("active"), text("email", "contains", "use")] });
    const b = ops(renamed, { kind: "and", children: [{ kind: "column", column: "state", test: { op: "set", values: ["active"], nulls: false } }, text("mail", "contains", "use")] });
    expect(printable(b).replaceAll('"state"', '"status"').replaceAll('"mail"', '"email"')).toBe(printable(a));
  });
});

describe("the plan explain prints is the plan that ran", () => {
  const cases: Query[] = [
    { filter: null, sort: byName, offset: 100, limit: 10 },
    { filter: statusIn("inactive"), sort: byName, offset: 100, limit: 10 },
    { filter: text("email", "contains", "r1"), sort: byName, offset: 5, limit: 10 },
    { filter: { kind: "and", children: [statusIn("active"), text("name", "contains", "e 1")] }, sort: [], offset: 0, limit: 10 },
    { filter: { kind: "search", terms: ["name", "19"] }, sort: [{ column: "email", direction: "desc", absolute: false }], offset: 3, limit: 10 },
  ];
  for (const [i, query] of cases.entries()) {
    test(`case ${i}: every step's rows, and the root's op and rows, are what the answer shows`, () => {
      const engine = createEngine(store);
      const expected = naiveQuery(records as never, query);
      const { plan, page } = explain(engine, query, true);
      expect(page?.total).toBe(expected.total);
      expect(plan.rows).toBe(expected.rows.length);
      // the root's child is the filter: its rows are the total
      expect(plan.children?.[0].rows).toBe(expected.total);
      expect(["slice", "keyOrder", "walk", "sort", "cachedOrder"]).toContain(plan.op);
      // every step ran: rows and ms everywhere
      const walk = (s: typeof plan): void => {
        expect(typeof s.rows).toBe("number");
        expect(typeof s.ms).toBe("number");
        for (const c of s.children ?? []) walk(c);
      };
      walk(plan);
      // without analyze, the same tree without rows
      const estimated = explain(createEngine(store), query, false).plan;
      // the executor carries the plan out: the op planned is the op that ran
      expect(estimated.op).toBe(plan.op);
      expect(estimated.rows).toBeUndefined();
    });
  }

  test("a cached filter is a cached step; its next block walks from the checkpoint or slices the cached order", () => {
    const engine = createEngine(store);
    const query: Query = { filter: text("email", "contains", "r1"), sort: byName, offset: 0, limit: 10 };
    execute(engine, planOf(engine, query), false);
    const next = planOf(engine, { ...query, offset: 10 });
    expect(next.root.children[0].op).toBe("cached");
    expect(next.root.estimatedCost).toBeLessThan(DEFER_ABOVE);
  });
});
