import { describe, expect, test } from "bun:test";
import { type Engine, createEngine, executeQuery, isExpensive as planIsExpensive, planOf } from "../../src/engine/execute.ts";
import { DeferredQueue, SLICE_MS } from "../../src/engine/scheduler.ts";
import type { Predicate, Query } from "../../src/query/types.ts";

/** Whether the query's plan is priced above the deferral threshold. */
const isExpensive = (engine: Engine, query: Query) => planIsExpensive(planOf(engine, query));
const text = (column: string, type: "contains" | "blank", value: string): Predicate => ({ kind: "column", column, test: { op: "text", type, value } });
const statusIn = (...values: string[]): Predicate => ({ kind: "column", column: "status", test: { op: "set", values, nulls: false } });
const idRange = (lo: number, hi: number, open: boolean): Predicate => ({ kind: "column", column: "id", test: { op: "range", lo, loOpen: open, hi, hiOpen: open, negate: false } });
import { buildStoreFromRecords } from "../support/table-store.ts";

/** Keeps the thread busy for `ms` milliseconds. */
function busy(ms: number): void {
  const until = performance.now() + ms;
  while (performance.now() < until) {}
}

describe("deferred queue", () => {
  test("runs jobs in order and settles each promise with its result or error", async () => {
    const queue = new DeferredQueue();
    const ran: number[] = [];
    const results = await Promise.allSettled([
      queue.run(() => (ran.push(1), "a")),
      queue.run(() => {
        ran.push(2);
        throw new Error("boom");
      }),
      queue.run(() => (ran.push(3), 42)),
    ]);
    expect(ran).toEqual([1, 2, 3]);
    expect(results[0]).toEqual({ status: "fulfilled", value: "a" });
    expect(results[1].status).toBe("rejected");
    expect((results[1] as PromiseRejectedResult).reason.message).toBe("boom");
    expect(results[2]).toEqual({ status: "fulfilled", value: 42 });
    expect(queue.length).toBe(0);
  });

  test("yields to the event loop between slices: other work waits for one long job, not all", async () => {
    const queue = new DeferredQueue();
    const order: string[] = [];
    const done = Array.from({ length: 8 }, (_, i) =>
      queue.run(() => {
        busy(SLICE_MS * 2);
        order.push(`job${i}`);
      }),
    );
    // Queued after every job, as a request read while the queue is busy would be.
    const other = new Promise<void>((resolve) => setImmediate(() => (order.push("other"), resolve())));
    await Promise.all([...done, other]);
    expect(order.indexOf("other")).toBe(1);
    expect(order.filter((o) => o !== "other")).toEqual(Array.from({ length: 8 }, (_, i) => `job${i}`));
  });

  test("short jobs share a slice", async () => {
    // A slice of 1 s: 5 trivial jobs fit in it even on a loaded machine (the default 1 ms slice
    // can be overrun by a GC pause).
    const queue = new DeferredQueue(1000);
    const order: string[] = [];
    const done = Array.from({ length: 5 }, (_, i) => queue.run(() => order.push(`job${i}`)));
    const other = new Promise<void>((resolve) => setImmediate(() => (order.push("other"), resolve())));
    await Promise.all([...done, other]);
    // 5 trivial jobs take far less than the slice: all run before the other callback.
    expect(order.indexOf("other")).toBe(5);
  });
});

describe("isExpensive: the plan's cost, whatever the filter kind", () => {
  // 50,000 rows: a scan of a text column or of the keys as text costs more than DEFER_ABOVE; a
  // key range or a filter on the partition column does not.
  const store = buildStoreFromRecords(
    Array.from({ length: 50_000 }, (_, i) => ({ id: i + 1, name: `name ${i}`, email: `user${i}@example.com`, status: i % 3 ? "active" : "inactive" })),
  );
  const window = { sort: [], offset: 0, limit: 10 };

  test("a scan (a needle under 3 characters) is expensive until its result is cached", () => {
    const engine = createEngine(store);
    const query: Query = { ...window, filter: text("email", "contains", "r1") };
    expect(isExpensive(engine, query)).toBe(true);
    executeQuery(engine, query);
    expect(isExpensive(engine, query)).toBe(false);
    const nested: Query = { ...window, filter: { kind: "and", children: [statusIn("active"), { kind: "column", column: "name", test: { op: "text", type: "contains", value: "e" } }] } };
    expect(isExpensive(engine, nested)).toBe(true);
  });

  test("number-kind and text-on-key filters are judged by cost, not by kind", () => {
    const engine = createEngine(store);
    // every key formatted as a string: a scan, expensive although it is on the number column
    expect(isExpensive(engine, { ...window, filter: text("id", "contains", "7") })).toBe(true);
    // a few binary searches and one bitmap: cheap
    const ors: Predicate[] = Array.from({ length: 16 }, (_, i) => idRange(i * 7, i * 7, false));
    expect(isExpensive(engine, { ...window, filter: { kind: "or", children: ors } })).toBe(false);
  });

  test("no filter, status, id ranges and a 3-letter needle (one posting list) are cheap", () => {
    const engine = createEngine(store);
    expect(isExpensive(engine, { ...window, filter: null })).toBe(false);
    expect(isExpensive(engine, { ...window, filter: statusIn("inactive") })).toBe(false);
    expect(isExpensive(engine, { ...window, filter: idRange(3, 9, true) })).toBe(false);
    expect(isExpensive(engine, { ...window, filter: text("status", "contains", "act") })).toBe(false);
    expect(isExpensive(engine, { ...window, filter: text("email", "contains", "ser") })).toBe(false);
  });
});
