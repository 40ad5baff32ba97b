import { describe, expect, test } from "bun:test";
import { type Engine, createEngine, executeQuery, isExpensive as planIsExpensive, planOf } from "../../src/engine/execute.ts";
import { QueryScheduler, QueryStopped, SLICE_MS } from "../../src/engine/scheduler.ts";
import { type Work, done } from "../../src/bits/work.ts";
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

/** Work of `pieces` pieces of `ms` busy milliseconds each (Infinity: until stopped); counts its pieces and whether it was ended. */
function busyWork(pieces: number, ms: number, seen: { pieces: number; ended: boolean }, result = "done"): () => Work<string> {
  return function* () {
    try {
      for (let i = 0; i < pieces; i++) {
        busy(ms);
        seen.pieces++;
        yield;
      }
      return result;
    } finally {
      seen.ended = true;
    }
  };
}

describe("query scheduler", () => {
  test("runs works to their end and settles each promise with its result or error", async () => {
    const scheduler = new QueryScheduler();
    const results = await Promise.allSettled([
      scheduler.submit(function* () {
        yield;
        return "a";
      }),
      scheduler.submit(function* () {
        yield;
        throw new Error("boom");
      }),
      scheduler.submit(() => done(42)),
    ]);
    expect(results[0]).toEqual({ status: "fulfilled", value: "a" });
    expect(results[1].status).toBe("rejected");
    expect((results[1] as PromiseRejectedResult).reason.message).toBe("boom");
    expect(results[2]).toEqual({ status: "fulfilled", value: 42 });
    expect(scheduler.stats).toEqual({ queued: 0, running: 0, completed: 3, cancelled: 0, timedOut: 0, refused: 0 });
  });

  test("runs a long work in slices: the event loop turns between them", async () => {
    const scheduler = new QueryScheduler();
    const seen = { pieces: 0, ended: false };
    const order: string[] = [];
    const finished = scheduler.submit(busyWork(40, SLICE_MS, seen)).then(() => order.push("work"));
    // queued after the work's first slice, as a request read meanwhile would be
    const other = new Promise<void>((resolve) => setImmediate(() => (order.push(`other after ${seen.pieces} pieces`), resolve())));
    await Promise.all([finished, other]);
    expect(order[1]).toBe("work");
    const piecesBefore = Number(/after (\d+) pieces/.exec(order[0])?.[1]);
    expect(piecesBefore).toBeGreaterThan(0);
    expect(piecesBefore).toBeLessThan(40);
  });

  test("queries beyond maxQueued waiting are refused at once; the others run", async () => {
    const scheduler = new QueryScheduler({ maxQueued: 2, maxRunning: 1 });
    const seen = { pieces: 0, ended: false };
    const submitted = Array.from({ length: 6 }, () => scheduler.submit(busyWork(2, 0, seen)));
    // the first runs (once started), two wait, the other three are refused before anything ran
    const settled = await Promise.allSettled(submitted);
    expect(settled.map((r) => r.status)).toEqual(["fulfilled", "fulfilled", "fulfilled", "rejected", "rejected", "rejected"]);
    for (const r of settled.slice(3)) expect(((r as PromiseRejectedResult).reason as QueryStopped).reason).toBe("overloaded");
    expect(scheduler.stats).toMatchObject({ queued: 0, running: 0, completed: 3, refused: 3 });
  });

  test("a query past its time is stopped where it paused, and its work ended", async () => {
    const scheduler = new QueryScheduler({ timeoutMs: 5 });
    const seen = { pieces: 0, ended: false };
    const error = await scheduler.submit(busyWork(Number.POSITIVE_INFINITY, 1, seen)).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(QueryStopped);
    expect((error as QueryStopped).reason).toBe("timeout");
    expect(seen.ended).toBe(true);
    const pieces = seen.pieces;
    // nothing more runs: another query's whole run leaves the stopped one's count as it was
    await scheduler.submit(busyWork(3, 0, { pieces: 0, ended: false }));
    expect(seen.pieces).toBe(pieces);
    expect(scheduler.stats).toMatchObject({ timedOut: 1, completed: 1, running: 0, queued: 0 });
  });

  test("a query waiting past its time is stopped without starting", async () => {
    const scheduler = new QueryScheduler({ timeoutMs: 20, maxRunning: 1 });
    const first = { pieces: 0, ended: false };
    let started = false;
    const long = scheduler.submit(busyWork(Number.POSITIVE_INFINITY, 1, first)).catch((e: unknown) => e);
    const waiting = scheduler
      .submit(() => {
        started = true;
        return done("never");
      })
      .catch((e: unknown) => e);
    expect(((await waiting) as QueryStopped).reason).toBe("timeout");
    expect(started).toBe(false);
    expect(((await long) as QueryStopped).reason).toBe("timeout");
  });

  test("an aborted signal cancels the query: no piece runs after it, and its work is ended", async () => {
    const scheduler = new QueryScheduler();
    const controller = new AbortController();
    const seen = { pieces: 0, ended: false };
    let piecesAtAbort = -1;
    const running = scheduler.submit(busyWork(Number.POSITIVE_INFINITY, 0.2, seen), controller.signal).catch((e: unknown) => e);
    // abort from the event loop once some pieces ran, as a client's disconnect arrives
    const aborter = setInterval(() => {
      if (seen.pieces === 0) return;
      clearInterval(aborter);
      piecesAtAbort = seen.pieces;
      controller.abort();
    }, 0);
    const error = await running;
    expect((error as QueryStopped).reason).toBe("cancelled");
    expect(seen.ended).toBe(true);
    expect(seen.pieces).toBe(piecesAtAbort);
    await scheduler.submit(busyWork(3, 0, { pieces: 0, ended: false }));
    expect(seen.pieces).toBe(piecesAtAbort);
    expect(scheduler.stats).toMatchObject({ cancelled: 1, running: 0 });
    // a signal already aborted is refused before anything runs
    const again = await scheduler.submit(busyWork(1, 0, seen), controller.signal).catch((e: unknown) => e);
    expect((again as QueryStopped).reason).toBe("cancelled");
    expect(seen.pieces).toBe(piecesAtAbort);
  });

  test("running queries take turns: a short one submitted after a long one finishes first", async () => {
    const scheduler = new QueryScheduler();
    const order: string[] = [];
    const long = scheduler.submit(busyWork(200, SLICE_MS / 2, { pieces: 0, ended: false })).then(() => order.push("long"));
    const short = scheduler.submit(busyWork(2, SLICE_MS / 2, { pieces: 0, ended: false })).then(() => order.push("short"));
    await Promise.all([long, short]);
    expect(order).toEqual(["short", "long"]);
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
    const ors: Predicate[] = Array.from({ length: 4 }, (_, i) => idRange(i * 7, i * 7, false));
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
