/**
 * Fair under load, over a real socket (docs/api.md "Fair under load"): an expensive query runs
 * in slices between the other requests, so cheap requests keep their latency while it runs; a
 * client that disconnects cancels its query; a query past --query-timeout-ms is a 503
 * query_timeout and one beyond --max-queued waiting a 503 overloaded, both with Retry-After.
 *
 * The expensive query: 32 scans (1- and 2-letter needles, which no posting list answers, on
 * `name` and `email`) of 200,000 rows — hundreds of milliseconds here, tens on a fast machine.
 * Nothing is timed against a fixed limit: each test compares durations measured in its own run,
 * with margins that hold on a loaded machine, and waits on answers and metrics, never on a sleep.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { pollUntil } from "../support/poll.ts";
import { openRaw } from "../support/raw-http.ts";
import { type TestServer, startTestServer } from "../support/server.ts";

/** Rows of the generated users the servers serve. */
const ROWS = 200_000;

/** One column's filter: `contains` of each needle, ORed (AG Grid's combined model, 16 conditions at most). */
const anyOf = (needles: string[]) => ({ filterType: "text", operator: "OR", conditions: needles.map((filter) => ({ filterType: "text", type: "contains", filter })) });

/** The expensive body: two columns' ORs of 16 short needles each, every one a scan. */
const EXPENSIVE = {
  startRow: 0,
  endRow: 50,
  sortModel: [{ colId: "email", sort: "asc" }],
  filterModel: {
    name: anyOf(["zq", "qx", "jj", "xw", "vv", "kq", "wq", "qz", "yy", "hx", "xj", "fq", "qv", "bz", "zx", "vq"]),
    email: anyOf(["zq", "qx", "jj", "xw", "vv", "kq", "wq", "qz", "yy", "hx", "xj", "fq", "qv", "bz", "zx", "vq"]),
  },
};
const EXPENSIVE_JSON = JSON.stringify(EXPENSIVE);

/** A cheap request: a page of the name order (no filter). */
const CHEAP = "/api/users?sortBy=name&pageSize=20&page=3";

let plain: TestServer;
let timeouts: TestServer;
let bounded: TestServer;
// three snapshots of 200,000 users: seconds each on a busy machine
beforeAll(() => {
  plain = startTestServer("default", 1000, { count: ROWS });
  timeouts = startTestServer("default", 1000, { count: ROWS, queryTimeoutMs: 5 });
  bounded = startTestServer("default", 1000, { count: ROWS, maxQueued: 1 });
}, 300_000);
afterAll(async () => {
  await Promise.all([plain.close(), timeouts.close(), bounded.close()]);
});

const post = (srv: TestServer, body: string, signal?: AbortSignal) => fetch(`${srv.url}/api/users`, { method: "POST", headers: { "content-type": "application/json" }, body, signal });

/** Milliseconds a request takes to answer (its body read). */
async function timed(run: () => Promise<Response>): Promise<{ ms: number; response: Response; body: string }> {
  const started = performance.now();
  const response = await run();
  const body = await response.text();
  return { ms: performance.now() - started, response, body };
}

/** The value of a metric line (`name` with no labels) in the server's /metrics. */
async function metric(srv: TestServer, name: string): Promise<number> {
  const text = await (await fetch(`${srv.url}/metrics`)).text();
  const line = text.split("\n").find((l) => l.startsWith(`${name} `));
  if (line === undefined) throw new Error(`no metric ${name}`);
  return Number(line.slice(name.length + 1));
}

/** The median of numbers. */
const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)];

describe("an expensive query never holds cheap ones back", () => {
  test("it runs in the scheduler, and cheap requests answered meanwhile keep their latency", async () => {
    // warm: the expensive query once (its time alone), and the cheap request's latency alone
    const alone = await timed(() => post(plain, EXPENSIVE_JSON));
    expect(alone.response.status).toBe(200);
    const expected = JSON.parse(alone.body) as { total: number };
    // a fresh filter each time (the first one's result is cached now): the same scans, another needle order
    const fresh = (i: number) => JSON.stringify({ ...EXPENSIVE, filterModel: { ...EXPENSIVE.filterModel, name: anyOf([...EXPENSIVE.filterModel.name.conditions.map((c) => c.filter).slice(i % 16), ...EXPENSIVE.filterModel.name.conditions.map((c) => c.filter).slice(0, i % 16)]) } });
    const cheapAlone: number[] = [];
    for (let i = 0; i < 30; i++) cheapAlone.push((await timed(() => fetch(plain.url + CHEAP))).ms);
    const deferredBefore = await metric(plain, "users_listing_queries_completed_total");

    // two expensive queries at once, and cheap requests one after another until both are answered
    let running = true;
    const expensive = Promise.all([timed(() => post(plain, fresh(1))), timed(() => post(plain, fresh(2)))]).finally(() => {
      running = false;
    });
    const cheapDuring: number[] = [];
    while (running) {
      const r = await timed(() => fetch(plain.url + CHEAP));
      expect(r.response.status).toBe(200);
      cheapDuring.push(r.ms);
    }
    const [a, b] = await expensive;
    for (const r of [a, b]) {
      expect(r.response.status).toBe(200);
      expect((JSON.parse(r.body) as { total: number }).total).toBe(expected.total);
    }
    // both ran in the scheduler
    expect(await metric(plain, "users_listing_queries_completed_total")).toBe(deferredBefore + 2);
    // many cheap answers came while they ran, and none waited for them: served one after another
    // behind them, the cheap requests would take about half an expensive query's time each. Each
    // took a small part of it (a slice of the expensive work at most, besides its own), and their
    // median stayed within a small multiple of the median alone (the expensive query alone takes
    // hundreds of times that)
    expect(cheapDuring.length).toBeGreaterThanOrEqual(10);
    const shortest = Math.min(a.ms, b.ms, alone.ms);
    expect(Math.max(...cheapDuring)).toBeLessThan(shortest / 4);
    expect(median(cheapDuring)).toBeLessThan(shortest / 20);
    expect(median(cheapDuring)).toBeLessThan(50 * median(cheapAlone));
    expect(alone.ms).toBeGreaterThan(100 * median(cheapAlone));
  }, 120_000);
});

describe("an export read as fast as it is written never holds cheap requests back", () => {
  test("cheap requests are answered between its slices, each in a small part of the export's time", async () => {
    // warm: one export alone (its time and its rows), and the cheap request's latency alone
    const exportAll = () => fetch(`${plain.url}/api/users/export?format=csv`, { headers: { "accept-encoding": "identity" } });
    const alone = await timed(exportAll);
    expect(alone.response.status).toBe(200);
    const lines = alone.body.split("\n").length;
    const cheapAlone: number[] = [];
    for (let i = 0; i < 30; i++) cheapAlone.push((await timed(() => fetch(plain.url + CHEAP))).ms);

    // three exports one after another (the client reads each at once), cheap requests meanwhile
    let running = true;
    const exports = (async () => {
      const out: { ms: number; body: string }[] = [];
      for (let i = 0; i < 3; i++) {
        const r = await timed(exportAll);
        expect(r.response.status).toBe(200);
        out.push(r);
      }
      return out;
    })().finally(() => {
      running = false;
    });
    const cheapDuring: number[] = [];
    while (running) {
      const r = await timed(() => fetch(plain.url + CHEAP));
      expect(r.response.status).toBe(200);
      cheapDuring.push(r.ms);
    }
    const done = await exports;
    for (const r of done) expect(r.body.split("\n").length).toBe(lines);
    // An export run to its end in one turn of the event loop would hold each cheap request for
    // the rest of it: a handful of answers in all, each about half an export. Between slices,
    // many come, each a small part of an export's time.
    // (the exports' time as they ran beside the cheap requests: what a request held behind one would wait)
    const shortest = Math.min(...done.map((r) => r.ms));
    expect(cheapDuring.length).toBeGreaterThanOrEqual(15);
    expect(median(cheapDuring)).toBeLessThan(shortest / 8);
    expect(median(cheapDuring)).toBeLessThan(50 * median(cheapAlone));
  }, 120_000);
});

describe("a client that disconnects cancels its query", () => {
  test("no more work is done for it: the scheduler stops it where it paused", async () => {
    // its time when it runs to the end (a fresh filter: endRow is not part of it, so cache it off by another order)
    const whole = await timed(() => post(plain, JSON.stringify({ ...EXPENSIVE, sortModel: [{ colId: "name", sort: "desc" }], filterModel: { ...EXPENSIVE.filterModel, email: anyOf(["qq", ...EXPENSIVE.filterModel.email.conditions.map((c) => c.filter).slice(1)]) } })));
    expect(whole.response.status).toBe(200);
    const cancelledBefore = await metric(plain, "users_listing_queries_cancelled_total");
    const completedBefore = await metric(plain, "users_listing_queries_completed_total");
    // the same work, by a raw connection that goes away once the query is running
    const body = JSON.stringify({ ...EXPENSIVE, sortModel: [{ colId: "name", sort: "desc" }], filterModel: { ...EXPENSIVE.filterModel, email: anyOf(["ww", ...EXPENSIVE.filterModel.email.conditions.map((c) => c.filter).slice(1)]) } });
    const conn = await openRaw(plain.server.port);
    conn.socket.write(`POST /api/users HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\n\r\n${body}`);
    // the scheduler's counts are seen in /metrics alone
    await pollUntil(async () => (await metric(plain, "users_listing_queries_running")) > 0);
    const started = performance.now();
    conn.socket.destroy();
    await pollUntil(async () => (await metric(plain, "users_listing_queries_cancelled_total")) > cancelledBefore);
    const stoppedAfter = performance.now() - started;
    expect(await metric(plain, "users_listing_queries_running")).toBe(0);
    // it was stopped, not finished: nothing completed, and it stopped well before its whole run would have
    expect(await metric(plain, "users_listing_queries_completed_total")).toBe(completedBefore);
    expect(stoppedAfter).toBeLessThan(whole.ms / 2);
  }, 120_000);
});

describe("--query-timeout-ms", () => {
  test("a query still running past it is a 503 problem, code query_timeout, Retry-After: 1", async () => {
    const cheap = await fetch(timeouts.url + CHEAP);
    expect(cheap.status).toBe(200);
    const r = await post(timeouts, EXPENSIVE_JSON);
    expect(r.status).toBe(503);
    expect(r.headers.get("retry-after")).toBe("1");
    expect(r.headers.get("content-type")).toBe("application/problem+json");
    const problem = (await r.json()) as Record<string, unknown>;
    expect(problem).toMatchObject({ type: "/problems/query-timeout", status: 503, code: "query_timeout" });
    expect(problem.detail).toContain("5 ms");
    expect(await metric(timeouts, "users_listing_queries_timed_out_total")).toBe(1);
    expect(await metric(timeouts, "users_listing_queries_running")).toBe(0);
    // cheap requests are not timed: they never wait
    expect((await fetch(timeouts.url + CHEAP)).status).toBe(200);
  }, 120_000);
});

describe("--max-queued", () => {
  test("queries beyond it are refused at once with 503 overloaded; the others are answered", async () => {
    // 12 different expensive queries at once: 4 run, 1 waits, the rest are refused
    const bodies = Array.from({ length: 12 }, (_, i) => JSON.stringify({ ...EXPENSIVE, sortModel: [{ colId: i % 2 ? "name" : "email", sort: i % 3 ? "asc" : "desc" }], filterModel: { ...EXPENSIVE.filterModel, email: anyOf(EXPENSIVE.filterModel.email.conditions.map((c) => c.filter).slice(0, 4 + i)) } }));
    const order: number[] = [];
    const answers = await Promise.all(
      bodies.map(async (body) => {
        const r = await post(bounded, body);
        order.push(r.status);
        return { status: r.status, retry: r.headers.get("retry-after"), body: (await r.json()) as Record<string, unknown> };
      }),
    );
    const refused = answers.filter((a) => a.status === 503);
    const served = answers.filter((a) => a.status === 200);
    expect(refused.length + served.length).toBe(12);
    expect(served.length).toBeGreaterThanOrEqual(5);
    expect(refused.length).toBeGreaterThanOrEqual(1);
    for (const a of refused) {
      expect(a.retry).toBe("1");
      expect(a.body).toMatchObject({ type: "/problems/overloaded", status: 503, code: "overloaded" });
    }
    // refused at once: every refusal came before the first query was answered
    expect(order.slice(0, refused.length).every((s) => s === 503)).toBe(true);
    expect(await metric(bounded, "users_listing_queries_refused_total")).toBe(refused.length);
    expect(await metric(bounded, "users_listing_queries_queued")).toBe(0);
  }, 120_000);
});
