import { describe, expect, test } from "bun:test";
import { COST, DEFER_ABOVE, filterCost, gatherCost, queryCost, walkCost, windowPlan } from "../../src/engine/planner.ts";
import type { Store } from "../../src/store/types.ts";
import type { Predicate, SortKey } from "../../src/query/types.ts";
import { buildStoreFromRecords } from "../support/table-store.ts";

const byName: SortKey[] = [{ column: "name", direction: "asc", absolute: false }];
const byNameThenEmail: SortKey[] = [...byName, { column: "email", direction: "desc", absolute: false }];

describe("window plans", () => {
  test("a walk costs the rows it reads at the match set's selectivity", () => {
    expect(walkCost(100, 1_000_000, 1_000_000)).toBe(100 * COST.WALK_ROW);
    expect(walkCost(100, 1_000_000, 1_000)).toBe(100_000 * COST.WALK_ROW);
    expect(walkCost(100, 1_000_000, 0)).toBe(0);
  });

  test("a comparator sort costs more than the packed one-key sort", () => {
    expect(gatherCost(10_000, byNameThenEmail)).toBeGreaterThan(gatherCost(10_000, byName));
  });

  test("sparse matches deep in the order are gathered; dense ones near the start are walked", () => {
    expect(windowPlan(5_100, 1_000_000, 8_000, byName).plan).toBe("gather");
    expect(windowPlan(100, 1_000_000, 500_000, byName).plan).toBe("walk");
    const { plan, cost } = windowPlan(100, 1_000_000, 500_000, byName);
    expect(plan === "walk" && cost).toBe(walkCost(100, 1_000_000, 500_000));
  });
});

describe("filter costs", () => {
  const store = buildStoreFromRecords(
    Array.from({ length: 2_000 }, (_, i) => ({ id: i + 1, name: `name ${i}`, email: `user${i}@example.com`, status: i % 2 ? "active" : "inactive" })),
  );

  test("a referenced posting list costs less than a scan, which costs less than formatting every id", () => {
    const list = filterCost(store, { kind: "text", column: "email", op: "contains", value: "use" });
    const scan = filterCost(store, { kind: "text", column: "email", op: "contains", value: "us" });
    const ids = filterCost(store, { kind: "text", column: "id", op: "contains", value: "12" });
    expect(list).toBeLessThan(scan);
    expect(scan).toBeLessThan(ids);
    expect(ids).toBe(2_000 * COST.ID_TEXT_ROW);
  });

  test("a needle with a trigram no row holds costs its lookups only", () => {
    expect(filterCost(store, { kind: "text", column: "name", op: "contains", value: "qqqq" })).toBeLessThan(DEFER_ABOVE / 100);
  });

  test("combinations cost their children plus a bitmap pass each", () => {
    const a: Predicate = { kind: "status", codes: [0] };
    const b: Predicate = { kind: "number", column: "id", op: "lessThan", value: 10 };
    const words = Math.ceil(2_000 / 32);
    expect(filterCost(store, { kind: "and", children: [a, b] })).toBe(filterCost(store, a) + filterCost(store, b) + 2 * words * COST.BITMAP_WORD);
  });
});

describe("query costs", () => {
  // Only the row counts are read for window plans: a 10M-row store's shape without its arrays.
  const tenMillion = { rowCount: 10_000_000, statusCounts: Uint32Array.of(7_000_000, 3_000_000) } as unknown as Store;
  const filter = { kind: "text", column: "name", op: "contains", value: "an" } as const;

  test("a cached match set's deep window is as costly as its plan; its cached order is not", () => {
    const deep = { filter, sort: byName, offset: 4_900_000, limit: 100 };
    const cost = queryCost(tenMillion, deep, byName, true, { count: 5_000_000, mask: 3 }, false);
    expect(cost).toBe(windowPlan(4_900_100, 10_000_000, 5_000_000, byName).cost);
    expect(cost).toBeGreaterThan(DEFER_ABOVE);
    expect(queryCost(tenMillion, deep, byName, true, { count: 5_000_000, mask: 3 }, true)).toBeLessThan(DEFER_ABOVE);
    expect(queryCost(tenMillion, { ...deep, offset: 0 }, byName, true, { count: 5_000_000, mask: 3 }, false)).toBeLessThan(DEFER_ABOVE);
  });
});
