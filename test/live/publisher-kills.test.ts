/**
 * Nothing lost, nothing twice (docs/live-replicas.md §8 "Failure semantics": "Whatever stops — the publisher
 * (SIGKILL included) …"): the publisher (src/publish/live-publisher.ts) over a real PostgreSQL
 * with `wal_level = logical`, killed at every step of a batch's life, then started again.
 *
 * A kill is what SIGKILL leaves: from the chosen moment on the publisher's location answers
 * nothing (no later write lands: the manifest stays as the dead process left it) and its
 * replication connection is terminated by PostgreSQL; a new publisher then starts over the same
 * location, slot and work directory. The steps of a batch's life:
 * - `received`: its transactions arrived, nothing of the batch is written;
 * - `uploaded`: its object is written, the manifest does not list it;
 * - `listed`: the manifest lists it, its LSN is not confirmed to PostgreSQL;
 * - `confirmed`: PostgreSQL has the batch's LSN as the slot's confirmed position;
 * - `keepalive`: the table idle, a keepalive moved the confirmed position past the last batch;
 * - `compacted`: a compaction's snapshot is published, the publisher has not taken it up.
 *
 * Every workload has transactions whose commit records are adjacent (a transaction that wrote
 * first commits right after another: its commit record begins exactly where the other's ends),
 * one of them right across the killed batch's end: a transaction of exactly a full batch's
 * changes ends the batch, the adjacent one begins the next. After the restart more random
 * transactions run; then the published state (the manifest's snapshot and its batches, applied
 * here to a map by key) must equal the table's rows, every committed transaction must be in
 * exactly one published batch, and the batches' LSN ranges must follow each other.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import fc from "fast-check";
import pino from "pino";
import postgres from "postgres";
import { openStorage } from "../../src/io/storage.ts";
import { createFileThreads } from "../../src/io/threads.ts";
import { type BatchEntry, checkedBatch } from "../../src/live/batches.ts";
import { type ChangeBatch, lsnValue } from "../../src/live/changes.ts";
import { liveLocation, snapshotMaker } from "../../src/publish/live-location.ts";
import { type LiveLocation, MAX_BATCH_CHANGES, type RunningPublisher, runPublisher } from "../../src/publish/live-publisher.ts";
import { dropSlot, slotState, tableColumns } from "../../src/publish/pg-changes.ts";
import { loadSnapshot } from "../../src/snapshot/load.ts";
import { rowsToJson } from "../../src/store/rows-json.ts";
import { pollUntil } from "../support/poll.ts";
import { type TestPostgres, startPostgres } from "../support/postgres.ts";

let pg: TestPostgres;
let sql: postgres.Sql;
let dir: string;
const threads = createFileThreads();
beforeAll(async () => {
  pg = startPostgres({ logical: true });
  sql = postgres(pg.url, { max: 4, onnotice: () => {} });
  // WAL no publication sends: it moves the server's position (and brings keepalives)
  await sql.unsafe("CREATE TABLE unrelated (x int)");
  dir = mkdtempSync(join(tmpdir(), "users-kills-"));
}, 60_000);
afterAll(async () => {
  threads.close();
  await sql?.end({ timeout: 1 });
  await pg?.stop();
  rmSync(dir, { recursive: true, force: true });
});

type Step = "received" | "uploaded" | "listed" | "confirmed" | "keepalive" | "compacted";
const STEPS: Step[] = ["received", "uploaded", "listed", "confirmed", "keepalive", "compacted"];

/** One statement of a transaction, abstractly: an existing row picked by index, or a new one. */
type Op = { type: "insert" } | { type: "update" | "delete" | "rekey"; pick: number };
/** A transaction alone, or two whose commit records are adjacent (the second wrote first, inserting only). */
type Unit = { kind: "single"; ops: Op[] } | { kind: "adjacent"; first: Op[]; second: number };

const opArb: fc.Arbitrary<Op> = fc.oneof(
  fc.constant<Op>({ type: "insert" }),
  fc.record({ type: fc.constantFrom<"update" | "delete" | "rekey">("update", "update", "delete", "rekey"), pick: fc.nat() }),
);
const unitArb: fc.Arbitrary<Unit> = fc.oneof(
  fc.record({ kind: fc.constant<"single">("single"), ops: fc.array(opArb, { minLength: 1, maxLength: 4 }) }),
  fc.record({ kind: fc.constant<"adjacent">("adjacent"), first: fc.array(opArb, { minLength: 1, maxLength: 3 }), second: fc.integer({ min: 1, max: 3 }) }),
);
const workloadArb = fc.array(unitArb, { minLength: 2, maxLength: 8 });

/**
 * Runs transactions on one table `(id bigint primary key, name text, tx int)`, keeping the keys
 * it holds; every row a transaction writes carries the transaction's number in `tx`.
 */
class Workload {
  private nextKey = 1;
  private nextTx = 1;
  /** The committed keys, in insertion order. */
  readonly keys: number[] = [];
  /** The numbers of the committed transactions (each wrote at least one row). */
  readonly committed: number[] = [];

  constructor(private readonly table: string) {}

  /** Statements of `ops` for transaction `tx` (the keys it changes come from `keys`, updated as it goes). */
  private async statements(q: postgres.Sql | postgres.TransactionSql | postgres.ReservedSql, ops: readonly Op[], tx: number, keys: number[]): Promise<boolean> {
    let wrote = false;
    for (const op of ops) {
      if (op.type === "insert" || keys.length === 0) {
        const key = this.nextKey++;
        await q.unsafe(`INSERT INTO ${this.table} VALUES ($1, $2, $3)`, [key, `row ${key}`, tx]);
        keys.push(key);
        wrote = true;
        continue;
      }
      const index = op.pick % keys.length;
      const key = keys[index];
      if (op.type === "update") {
        await q.unsafe(`UPDATE ${this.table} SET name = $2, tx = $3 WHERE id = $1`, [key, `row ${key} by ${tx}`, tx]);
        wrote = true;
      } else if (op.type === "delete") {
        await q.unsafe(`DELETE FROM ${this.table} WHERE id = $1`, [key]);
        keys.splice(index, 1);
      } else {
        const to = this.nextKey++;
        await q.unsafe(`UPDATE ${this.table} SET id = $2, tx = $3 WHERE id = $1`, [key, to, tx]);
        keys[index] = to;
        wrote = true;
      }
    }
    // a transaction that only deleted writes one row more, so that it is seen in the batches by its number
    if (!wrote) {
      const key = this.nextKey++;
      await q.unsafe(`INSERT INTO ${this.table} VALUES ($1, $2, $3)`, [key, `row ${key}`, tx]);
      keys.push(key);
    }
    return true;
  }

  /** One transaction of `ops`, committed (numbered `tx`, else the next number). */
  async single(ops: readonly Op[], tx = this.nextTx++): Promise<void> {
    const keys = [...this.keys];
    await sql.begin((q) => this.statements(q, ops, tx, keys));
    this.keys.splice(0, this.keys.length, ...keys);
    this.committed.push(tx);
  }

  /**
   * Two transactions with adjacent commit records: the second inserts `inserts` rows first and
   * stays open, the first runs `first` (or inserts `firstRows` rows) and commits, the second
   * commits at once.
   */
  async adjacent(first: readonly Op[] | { rows: number }, inserts: number): Promise<void> {
    const secondTx = this.nextTx++;
    const firstTx = this.nextTx++;
    const reserved = await sql.reserve();
    try {
      await reserved`BEGIN`;
      const secondKeys: number[] = [];
      for (let i = 0; i < inserts; i++) await this.statements(reserved, [{ type: "insert" }], secondTx, secondKeys);
      if ("rows" in first) {
        const from = this.nextKey;
        this.nextKey += first.rows;
        await sql.unsafe(`INSERT INTO ${this.table} SELECT g, 'bulk ' || g, $3 FROM generate_series($1::bigint, $2::bigint) AS g`, [from, from + first.rows - 1, firstTx]);
        for (let k = from; k < from + first.rows; k++) this.keys.push(k);
        this.committed.push(firstTx);
      } else {
        await this.single(first, firstTx);
      }
      await reserved`COMMIT`;
      this.keys.push(...secondKeys);
      this.committed.push(secondTx);
    } finally {
      reserved.release();
    }
  }

  /** The number of the last committed transaction. */
  last(): number {
    return this.committed[this.committed.length - 1];
  }

  async run(units: readonly Unit[]): Promise<void> {
    for (const unit of units) {
      if (unit.kind === "single") await this.single(unit.ops);
      else await this.adjacent(unit.first, unit.second);
    }
  }
}

/**
 * What one scenario's publishers do, to wait on: `notify()` is called by their location after each
 * batch it lists and by their logger after each line (the first snapshot's "published a snapshot
 * of the table at the slot's consistent point" comes once `lsn()` names it); `until(check)`
 * resolves once `check()` holds, checked now and after each.
 */
function progress(): { notify: () => void; until: (check: () => boolean) => Promise<void>; logger: pino.Logger } {
  const waiters = new Set<() => void>();
  const notify = () => {
    for (const waiter of [...waiters]) waiter();
  };
  const until = (check: () => boolean) =>
    new Promise<void>((resolve) => {
      const test = () => {
        if (!check()) return;
        waiters.delete(test);
        resolve();
      };
      waiters.add(test);
      test();
    });
  const logger = pino({ level: process.env.LIVE_DEBUG ? "debug" : "info" }, {
    write(line: string) {
      if (process.env.LIVE_DEBUG) process.stdout.write(line);
      notify();
    },
  });
  return { notify, until, logger };
}

/** The slot's confirmed position as a number (0 when it has none). */
async function confirmedOf(slot: string): Promise<number> {
  const state = await slotState(pg.url, slot);
  return state?.confirmed ? lsnValue(state.confirmed) : 0;
}

/** Whether a listed batch holds a row written by transaction `tx`. */
function publishedTx(published: readonly { batch: ChangeBatch }[], tx: number): boolean {
  return published.some((p) => p.batch.changes.some((c) => c.op === "upsert" && c.record.tx === tx));
}

/** Never settles: a dead process's call. */
const never = <T>() => new Promise<T>(() => {});

/**
 * A location that dies at `step` of the batch that `target` picks (or, for `compacted`, at the
 * first compaction), recording every batch it lists.
 */
function killable(inner: LiveLocation, location: string, step: Step, target: (entry: BatchEntry) => boolean, published: { entry: BatchEntry; batch: ChangeBatch }[], notify: () => void) {
  const state = { dead: false };
  let killed!: () => void;
  const died = new Promise<void>((resolve) => {
    killed = resolve;
  });
  const die = () => {
    state.dead = true;
    killed();
  };
  let armed = step !== "compacted" && step !== "keepalive";
  let afterTarget = false;
  const wrapped: LiveLocation = {
    current: () => (state.dead ? never() : inner.current()),
    async publishSnapshot(path, lsn) {
      if (state.dead) return never();
      // the first snapshot comes before any batch; a compaction's after one
      const compaction = published.length > 0;
      await inner.publishSnapshot(path, lsn);
      if (step === "compacted" && compaction) {
        die();
        return never();
      }
    },
    async publishBatch(entry, bytes) {
      if (state.dead) return never();
      if (armed && afterTarget) {
        // the call after the target batch's: its confirmation was sent before it
        armed = false;
        die();
        return never();
      }
      if (armed && target(entry)) {
        if (step === "received") {
          armed = false;
          die();
          return never();
        }
        if (step === "uploaded") {
          armed = false;
          await openStorage(location).replace(entry.key, bytes);
          die();
          return never();
        }
      }
      await inner.publishBatch(entry, bytes);
      published.push({ entry, batch: checkedBatch(entry, bytes) });
      notify();
      if (armed && target(entry)) {
        if (step === "listed") {
          armed = false;
          die();
          return never();
        }
        afterTarget = true;
      }
    },
  };
  return { location: wrapped, died, die, state };
}

/** The published state (the manifest's snapshot, its batches applied by key), as JSON records in key order. */
async function publishedRows(location: string, workDir: string): Promise<Record<string, unknown>[]> {
  const current = await liveLocation(location, workDir, threads, 30_000).current();
  if (current === null) throw new Error("nothing published");
  const store = loadSnapshot(current.path).store;
  const rows = new Map<number, Record<string, unknown>>();
  const records = JSON.parse(new TextDecoder().decode(rowsToJson(store, Uint32Array.from({ length: store.rowCount }, (_, i) => i)))) as Record<string, unknown>[];
  for (const record of records) rows.set(record.id as number, record);
  for (const { batch } of current.batches) {
    for (const change of batch.changes) {
      if (change.op === "delete") rows.delete(change.key as number);
      else rows.set(change.record.id as number, change.record);
    }
  }
  return [...rows.values()].sort((a, b) => (a.id as number) - (b.id as number));
}

/** The table's rows in PostgreSQL, as JSON records in key order. */
async function tableRows(table: string): Promise<Record<string, unknown>[]> {
  const rows = await sql.unsafe<{ r: string }[]>(`SELECT row_to_json(t)::text AS r FROM ${table} t ORDER BY id`);
  return rows.map((row) => JSON.parse(row.r) as Record<string, unknown>);
}

let scenario = 0;

/** One scenario: a table, the workload before the kill, the kill at `step`, a restart, the workload after. */
async function killedAt(step: Step, before: readonly Unit[], after: readonly Unit[]): Promise<void> {
  const n = ++scenario;
  const table = `kills_${n}`;
  const slot = `kills_slot_${n}`;
  const publication = `kills_pub_${n}`;
  const location = join(dir, `published-${n}`);
  const workDir = join(dir, `work-${n}`);
  await sql.unsafe(`CREATE TABLE ${table} (id bigint PRIMARY KEY, name text, tx int)`);
  const workload = new Workload(table);
  await workload.single([{ type: "insert" }, { type: "insert" }]);
  const published: { entry: BatchEntry; batch: ChangeBatch }[] = [];
  const events = progress();
  const start = (location_: LiveLocation, compactSeconds: number): RunningPublisher =>
    runPublisher({
      url: pg.url,
      table,
      slot,
      publication,
      exclude: [],
      batchMs: 20,
      compactSeconds,
      location: location_,
      maker: snapshotMaker({ url: pg.url, table }, workDir, { key: "id" }),
      logger: events.logger,
      columns: () => tableColumns(pg.url, table),
    });
  // the batch of the full transaction: it ends there, and the adjacent one begins the next
  const full = (entry: BatchEntry) => entry.changes >= MAX_BATCH_CHANGES;
  const first = killable(liveLocation(location, workDir, threads, 30_000), location, step, full, published, events.notify);
  // compaction after every batch when that is the step (the option is in seconds: 1 ms)
  const dying = start(first.location, step === "compacted" ? 0.001 : 0);
  try {
    // the first snapshot holds the rows so far; the workload's transactions all come after it
    await events.until(() => dying.lsn() !== "0/0");
    await workload.run(before);
    if (step === "keepalive") {
      await workload.adjacent({ rows: MAX_BATCH_CHANGES }, 2);
      // everything published; then WAL of another table moves the slot past the last batch
      await events.until(() => publishedTx(published, workload.last()));
      const last = lsnValue(published[published.length - 1].entry.lsn);
      await sql`INSERT INTO unrelated VALUES (1)`;
      // PostgreSQL tells nobody when a slot's confirmed position moves: its view is asked
      await pollUntil(async () => (await confirmedOf(slot)) > last);
      first.die();
    } else if (step === "compacted") {
      await workload.adjacent({ rows: 3 }, 2);
      await workload.run(before);
    } else {
      await workload.adjacent({ rows: MAX_BATCH_CHANGES }, 2);
    }
    await first.died;
    if (step === "confirmed") {
      const target = published.find((p) => full(p.entry)) as { entry: BatchEntry };
      await pollUntil(async () => (await confirmedOf(slot)) >= lsnValue(target.entry.lsn));
    }
    // SIGKILL: the connection goes with the process
    await sql`SELECT pg_terminate_backend(active_pid) FROM pg_replication_slots WHERE slot_name = ${slot} AND active_pid IS NOT NULL`;
    void dying.stop();
  } catch (error) {
    first.die();
    void dying.stop();
    throw error;
  }
  await pollUntil(async () => (await slotState(pg.url, slot))?.active === false);

  const second = killable(liveLocation(location, workDir, threads, 30_000), location, "received", () => false, published, events.notify);
  const restarted = start(second.location, 0);
  try {
    await workload.run(after);
    // a last transaction: once it is published, so is everything before it
    await workload.single([{ type: "insert" }]);
    await events.until(() => publishedTx(published, workload.last()));
    expect(await publishedRows(location, workDir)).toEqual(await tableRows(table));
    // every transaction after the first snapshot in exactly one batch, in order
    const batchOfTx = new Map<number, number[]>();
    published.forEach(({ batch }, index) => {
      for (const change of batch.changes) {
        if (change.op !== "upsert") continue;
        const tx = change.record.tx as number;
        const seen = batchOfTx.get(tx) ?? [];
        if (!seen.includes(index)) seen.push(index);
        batchOfTx.set(tx, seen);
      }
    });
    const afterFirstSnapshot = workload.committed.filter((tx) => tx > 1);
    const missing = afterFirstSnapshot.filter((tx) => !batchOfTx.has(tx));
    const twice = [...batchOfTx].filter(([, batches]) => batches.length > 1).map(([tx]) => tx);
    expect({ missing, twice }).toEqual({ missing: [], twice: [] });
    for (let i = 1; i < published.length; i++) expect(lsnValue(published[i].entry.firstLsn)).toBeGreaterThan(lsnValue(published[i - 1].entry.lsn));
  } finally {
    await restarted.stop();
    await dropSlot(pg.url, slot);
  }
}


describe("the publisher killed at every step of a batch's life", () => {
  for (const step of STEPS) {
    test(`killed when the batch is ${step}: nothing lost, nothing twice`, async () => {
      await fc.assert(
        fc.asyncProperty(workloadArb, workloadArb, async (before, after) => {
          await killedAt(step, before, after);
        }),
        { numRuns: Number(process.env.KILL_RUNS ?? 2) },
      );
    }, 300_000);
  }
});
