/**
 * The committed changes of a PostgreSQL table through logical replication (src/live/pg-changes.ts)
 * on a real server with `wal_level = logical`: the slot's exported snapshot reads exactly the
 * commits before its consistent point; inserts, updates (of the key too), deletes and multi-row
 * transactions arrive in commit order as changes; nothing is confirmed but what the caller
 * confirms, so a stream started again receives the unconfirmed transactions again; a column
 * change and a TRUNCATE are reported; values are the JSON values a build from the table reads.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import postgres from "postgres";
import { readPostgres } from "../../src/ingest/postgres.ts";
import { kindOfPostgresType } from "../../src/kinds/registry.ts";
import { ChangeStream, type StreamEvent, createSlot, dropSlot, ensurePublication, slotState, valueOfText } from "../../src/publish/pg-changes.ts";
import type { ColumnSpec } from "../../src/schema/kinds.ts";
import { pollUntil } from "../support/poll.ts";
import { type TestPostgres, startPostgres } from "../support/postgres.ts";

let pg: TestPostgres;
let sql: postgres.Sql;
beforeAll(async () => {
  pg = startPostgres({ logical: true });
  sql = postgres(pg.url, { max: 2, onnotice: () => {} });
  await sql.unsafe(`
    CREATE TYPE state AS ENUM ('active', 'invited', 'deleted');
    CREATE TABLE people (id bigint PRIMARY KEY, name text, status state, score numeric, seen timestamptz, prefs jsonb, ok boolean, secret text);
    INSERT INTO people VALUES (1, 'Ana', 'active', 1.5, '2024-03-01 10:00:00+02', '{"a": 1}', true, 's1'), (2, 'Bob', 'invited', NULL, NULL, NULL, NULL, 's2');
  `);
}, 60_000);
afterAll(async () => {
  await sql?.end({ timeout: 1 });
  await pg?.stop();
});

const COLUMNS: ColumnSpec[] = [
  { id: "id", kind: "number" },
  { id: "name", kind: "text" },
  { id: "status", kind: "enum", values: ["active", "invited", "deleted"] },
  { id: "score", kind: "number" },
  { id: "seen", kind: "datetime" },
  { id: "prefs", kind: "json" },
  { id: "ok", kind: "boolean" },
];

/** A stream's events, collected; `next(n)` waits for n more. */
function collector() {
  const events: StreamEvent[] = [];
  const waiters: { count: number; resolve: () => void }[] = [];
  const errors: Error[] = [];
  return {
    events,
    errors,
    onEvent: async (event: StreamEvent) => {
      events.push(event);
      for (const w of [...waiters]) if (events.length >= w.count) {
        waiters.splice(waiters.indexOf(w), 1);
        w.resolve();
      }
    },
    onError: (error: Error) => errors.push(error),
    until: (count: number) => (events.length >= count ? Promise.resolve() : new Promise<void>((resolve) => waiters.push({ count, resolve }))),
  };
}

describe("changes of a PostgreSQL table", () => {
  test("a slot's snapshot, then every committed change in order; unconfirmed transactions come again", async () => {
    await ensurePublication(pg.url, "people_pub", "people", COLUMNS.map((c) => c.id));
    const slot = await createSlot(pg.url, "people_slot");
    // a commit after the slot's point: not in the snapshot, first in the stream
    await sql`INSERT INTO people VALUES (3, 'Cy', 'deleted', 2, NULL, '[1]', false, 's3')`;
    const read = await readPostgres({ url: pg.url, table: "people", snapshot: slot.snapshot }, undefined, { exclude: ["secret"], key: "id", kindOfType: kindOfPostgresType });
    await slot.close();
    expect(read.columns.rows).toBe(2);
    expect(read.columns.columns.map((c) => c.id)).toEqual(COLUMNS.map((c) => c.id));

    const c = collector();
    const stream = new ChangeStream({ url: pg.url, slot: "people_slot", publication: "people_pub", table: "people", columns: COLUMNS, key: "id" });
    await stream.start(c.onEvent, c.onError);
    await sql.begin(async (tx) => {
      await tx`UPDATE people SET name = 'Ana Lima', score = 9007199254740992 WHERE id = 1`;
      await tx`DELETE FROM people WHERE id = 2`;
    });
    await sql`UPDATE people SET id = 10 WHERE id = 3`;
    await c.until(3);
    expect(c.errors).toEqual([]);
    const [first, second, third] = c.events;
    expect(first).toMatchObject({ kind: "transaction", changes: [{ op: "upsert", record: { id: 3, name: "Cy", status: "deleted", score: 2, seen: null, prefs: [1], ok: false } }] });
    expect(second).toMatchObject({ kind: "transaction", changes: [{ op: "upsert", record: { id: 1, name: "Ana Lima", score: 9007199254740992, seen: "2024-03-01 08:00:00+00", prefs: { a: 1 }, ok: true } }, { op: "delete", key: 2 }] });
    expect(third).toMatchObject({ kind: "transaction", changes: [{ op: "delete", key: 3 }, { op: "upsert", record: { id: 10, name: "Cy" } }] });
    // the secret column never arrives
    for (const e of c.events) for (const ch of (e as { changes: { op: string; record?: object }[] }).changes) if (ch.op === "upsert") expect(Object.keys(ch.record as object)).not.toContain("secret");
    // LSNs ascend; commit times are real times
    const lsns = c.events.map((e) => e.lsn);
    expect([...lsns].sort((a, b) => Number(BigInt(`0x${a.replace("/", "")}`) - BigInt(`0x${b.replace("/", "")}`)))).toEqual(lsns);
    expect(Math.abs((first as { commitTime: number }).commitTime - Date.now())).toBeLessThan(3_600_000);
    // only the first is confirmed: the other two come again on a new stream
    await stream.confirm(first.lsn);
    await stream.stop();
    const again = collector();
    const restarted = new ChangeStream({ url: pg.url, slot: "people_slot", publication: "people_pub", table: "people", columns: COLUMNS, key: "id" });
    await restarted.start(again.onEvent, again.onError);
    await again.until(2);
    expect(again.events.map((e) => e.lsn)).toEqual([second.lsn, third.lsn]);
    await restarted.confirm(third.lsn);
    // a TRUNCATE and a column change are reported
    await sql`TRUNCATE people`;
    await again.until(3);
    expect(again.events[2]).toMatchObject({ kind: "truncate" });
    await restarted.stop();
    const state = await slotState(pg.url, "people_slot");
    // confirmed past the last published commit (PostgreSQL resumes after it)
    const value = (lsn: string) => BigInt(`0x${lsn.split("/")[0]}`) * 2n ** 32n + BigInt(`0x${lsn.split("/")[1]}`);
    expect(value(state?.confirmed as string) >= value(third.lsn)).toBe(true);
    await dropSlot(pg.url, "people_slot");
    expect(await slotState(pg.url, "people_slot")).toBeNull();
  }, 60_000);

  test("an ALTER TABLE that changes the published columns stops the stream with a schema event", async () => {
    await sql.unsafe("CREATE TABLE t2 (id int PRIMARY KEY, a text); INSERT INTO t2 VALUES (1, 'x')");
    await ensurePublication(pg.url, "t2_pub", "t2", null);
    const slot = await createSlot(pg.url, "t2_slot");
    await slot.close();
    const c = collector();
    const stream = new ChangeStream({ url: pg.url, slot: "t2_slot", publication: "t2_pub", table: "t2", columns: [{ id: "id", kind: "number" }, { id: "a", kind: "text" }], key: "id" });
    await stream.start(c.onEvent, c.onError);
    await sql`INSERT INTO t2 VALUES (2, 'y')`;
    await sql.unsafe("ALTER TABLE t2 ADD COLUMN b int");
    await sql`INSERT INTO t2 VALUES (3, 'z', 5)`;
    await c.until(2);
    expect(c.events[0]).toMatchObject({ kind: "transaction", changes: [{ op: "upsert", record: { id: 2, a: "y" } }] });
    expect(c.events[1]).toMatchObject({ kind: "schema" });
    expect((c.events[1] as { detail: string }).detail).toContain("+b");
    await stream.stop();
    await dropSlot(pg.url, "t2_slot");
  }, 60_000);
});

describe("the slot's position and the server's keepalives", () => {
  /** An LSN `X/Y` as a number, for comparisons. */
  const value = (lsn: string) => BigInt(`0x${lsn.split("/")[0]}`) * 2n ** 32n + BigInt(`0x${lsn.split("/")[1]}`);

  /** The keepalives a stream handled, and a wait for one naming a WAL position past `lsn`. */
  function keepalives() {
    const seen: { walEnd: string; confirmed: string }[] = [];
    const waiters: { past: bigint; resolve: (k: { walEnd: string; confirmed: string }) => void }[] = [];
    return {
      seen,
      onKeepalive: (walEnd: string, confirmed: string) => {
        const k = { walEnd, confirmed };
        seen.push(k);
        for (const w of [...waiters]) if (value(walEnd) > w.past) {
          waiters.splice(waiters.indexOf(w), 1);
          w.resolve(k);
        }
      },
      /** The first keepalive handled from now on naming a position past `lsn`. */
      past: (lsn: string) => new Promise<{ walEnd: string; confirmed: string }>((resolve) => waiters.push({ past: value(lsn), resolve })),
    };
  }

  beforeAll(async () => {
    // WAL the publication does not send: it moves the server's position (and brings keepalives)
    await sql.unsafe("CREATE TABLE unrelated (x int)");
  });

  test("a keepalive confirms nothing past a received transaction not yet published; once all are, it releases the WAL", async () => {
    await sql.unsafe("CREATE TABLE t3 (id int PRIMARY KEY, a text)");
    await ensurePublication(pg.url, "t3_pub", "t3", null);
    const slot = await createSlot(pg.url, "t3_slot");
    await slot.close();
    const columns: ColumnSpec[] = [
      { id: "id", kind: "number" },
      { id: "a", kind: "text" },
    ];
    const c = collector();
    const k = keepalives();
    const stream = new ChangeStream({ url: pg.url, slot: "t3_slot", publication: "t3_pub", table: "t3", columns, key: "id", onKeepalive: k.onKeepalive });
    await stream.start(c.onEvent, c.onError);
    let restarted: ChangeStream | null = null;
    try {
      // two transactions received; the publisher publishes the first and confirms it while the
      // second waits for the next batch
      await sql`INSERT INTO t3 VALUES (1, 'x')`;
      await sql`INSERT INTO t3 VALUES (2, 'y')`;
      await c.until(2);
      const [first, second] = c.events;
      await stream.confirm(first.lsn);
      // the server moves on (other WAL) and says so in keepalives naming positions past the second
      const moved = k.past(second.lsn);
      await sql`INSERT INTO unrelated VALUES (1)`;
      const keepalive = await moved;
      expect(keepalive.confirmed).toBe(first.lsn);
      for (const seen of k.seen) expect(value(seen.confirmed) < value(second.lsn)).toBe(true);
      await stream.stop();
      expect(value((await slotState(pg.url, "t3_slot"))?.confirmed as string) < value(second.lsn)).toBe(true);

      // a publisher stopped now (before the second's batch) receives the second again
      const again = collector();
      const k2 = keepalives();
      restarted = new ChangeStream({ url: pg.url, slot: "t3_slot", publication: "t3_pub", table: "t3", columns, key: "id", onKeepalive: k2.onKeepalive });
      await restarted.start(again.onEvent, again.onError);
      await sql`INSERT INTO t3 VALUES (3, 'z')`;
      await again.until(2);
      expect(again.events.map((e) => e.lsn)).toEqual([second.lsn, (again.events[1] as { lsn: string }).lsn]);
      expect(again.events[1]).toMatchObject({ kind: "transaction", changes: [{ op: "upsert", record: { id: 3, a: "z" } }] });

      // both published and confirmed: nothing pending, so a keepalive moves the slot on past
      // WAL the table never touched (PostgreSQL may release it)
      await restarted.confirm(again.events[1].lsn);
      const idle = k2.past(again.events[1].lsn);
      await sql`INSERT INTO unrelated VALUES (2)`;
      const released = await idle;
      expect(released.confirmed).toBe(released.walEnd);
      await restarted.stop();
      expect(value((await slotState(pg.url, "t3_slot"))?.confirmed as string) >= value(released.walEnd)).toBe(true);
      expect([...c.errors, ...again.errors]).toEqual([]);
    } finally {
      await stream.stop();
      await restarted?.stop();
      await dropSlot(pg.url, "t3_slot");
    }
  }, 60_000);

  test("a confirmed commit's end is the slot's position byte for byte: a transaction whose commit record begins there comes again", async () => {
    await sql.unsafe("CREATE TABLE t5 (id int PRIMARY KEY, a text)");
    await ensurePublication(pg.url, "t5_pub", "t5", null);
    const slot = await createSlot(pg.url, "t5_slot");
    await slot.close();
    const columns: ColumnSpec[] = [
      { id: "id", kind: "number" },
      { id: "a", kind: "text" },
    ];
    const c = collector();
    const stream = new ChangeStream({ url: pg.url, slot: "t5_slot", publication: "t5_pub", table: "t5", columns, key: "id" });
    await stream.start(c.onEvent, c.onError);
    let restarted: ChangeStream | null = null;
    // B writes first and commits right after A: B's commit record is the WAL record after A's
    const b = await sql.reserve();
    try {
      await b`BEGIN`;
      await b`INSERT INTO t5 VALUES (2, 'b')`;
      await sql`INSERT INTO t5 VALUES (1, 'a')`;
      await b`COMMIT`;
      await c.until(2);
      const [first, second] = c.events as { lsn: string; commitLsn: string }[];
      expect(second.commitLsn).toBe(first.lsn);
      // A published and confirmed, then the publisher gone before B's batch
      await stream.confirm(first.lsn);
      await stream.stop();
      // the walsender reads the confirmation before the connection's end: once it has let the
      // slot go, the slot holds what it was told (read while it runs, it may not have yet)
      // (PostgreSQL tells nobody when a slot goes inactive: its view is asked)
      const state = await pollUntil(async () => {
        const now = await slotState(pg.url, "t5_slot");
        return now?.active ? null : { now };
      });
      expect(state.now?.confirmed).toBe(first.lsn);
      const again = collector();
      restarted = new ChangeStream({ url: pg.url, slot: "t5_slot", publication: "t5_pub", table: "t5", columns, key: "id" });
      await restarted.start(again.onEvent, again.onError);
      await again.until(1);
      expect(again.events[0]).toMatchObject({ kind: "transaction", lsn: second.lsn, changes: [{ op: "upsert", record: { id: 2, a: "b" } }] });
      expect([...c.errors, ...again.errors]).toEqual([]);
    } finally {
      b.release();
      await stream.stop();
      await restarted?.stop();
      await dropSlot(pg.url, "t5_slot");
    }
  }, 60_000);

  test("a keepalive confirms nothing past a TRUNCATE reported and not yet followed by a new snapshot", async () => {
    await sql.unsafe("CREATE TABLE t4 (id int PRIMARY KEY, a text); INSERT INTO t4 VALUES (1, 'x')");
    await ensurePublication(pg.url, "t4_pub", "t4", null);
    const slot = await createSlot(pg.url, "t4_slot");
    await slot.close();
    const columns: ColumnSpec[] = [
      { id: "id", kind: "number" },
      { id: "a", kind: "text" },
    ];
    const c = collector();
    const k = keepalives();
    const stream = new ChangeStream({ url: pg.url, slot: "t4_slot", publication: "t4_pub", table: "t4", columns, key: "id", onKeepalive: k.onKeepalive });
    await stream.start(c.onEvent, c.onError);
    let restarted: ChangeStream | null = null;
    try {
      // a transaction, then a TRUNCATE; the transaction's batch is published (and confirmed)
      // after the TRUNCATE arrived, before the publisher has made its new snapshot
      await sql`INSERT INTO t4 VALUES (2, 'y')`;
      await sql`TRUNCATE t4`;
      await c.until(2);
      expect(c.events[1]).toMatchObject({ kind: "truncate" });
      await stream.confirm(c.events[0].lsn);
      const [{ now }] = await sql<{ now: string }[]>`SELECT pg_current_wal_lsn()::text AS now`;
      const moved = k.past(now);
      await sql`INSERT INTO unrelated VALUES (3)`;
      expect((await moved).confirmed).toBe(c.events[0].lsn);
      await stream.stop();
      // started again, the stream reports the TRUNCATE again
      const again = collector();
      restarted = new ChangeStream({ url: pg.url, slot: "t4_slot", publication: "t4_pub", table: "t4", columns, key: "id" });
      await restarted.start(again.onEvent, again.onError);
      await again.until(1);
      expect(again.events[0]).toMatchObject({ kind: "truncate" });
    } finally {
      await stream.stop();
      await restarted?.stop();
      await dropSlot(pg.url, "t4_slot");
    }
  }, 60_000);
});

describe("values as a build reads them", () => {
  test("numbers exactly or refused, booleans, json parsed, the rest as text", () => {
    expect(valueOfText(20, "n", "9007199254740992")).toBe(9007199254740992);
    expect(() => valueOfText(1700, "n", "9007199254740993")).toThrow("not a number a double holds exactly");
    expect(() => valueOfText(701, "n", "Infinity")).toThrow();
    // beyond 2^53 a double may have rounded it: refused, as a build refuses it
    expect(() => valueOfText(701, "n", "1e+21")).toThrow();
    expect(valueOfText(701, "n", "1.25e+2")).toBe(125);
    expect(valueOfText(16, "b", "f")).toBe(false);
    expect(valueOfText(3802, "j", '{"a": [1, 2]}')).toEqual({ a: [1, 2] });
    expect(valueOfText(1184, "t", "2024-03-01 08:00:00+00")).toBe("2024-03-01 08:00:00+00");
    expect(valueOfText(25, "s", null)).toBeNull();
  });
});
