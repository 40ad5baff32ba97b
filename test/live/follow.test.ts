/**
 * A live table end to end (docs/live-replicas.md): PostgreSQL with `wal_level = logical`, the
 * publisher (`snapshot follow`) and a replica (`serve --source --poll 0.1`) as real processes,
 * a directory as the location. After each step the replica's full export must equal the table's
 * rows in PostgreSQL exactly, and /readyz must name the LSN it reached:
 * - the first snapshot at the slot's consistent point (a secret column left out);
 * - inserts, updates (of sort keys and of the key), deletes, a multi-row transaction;
 * - the publisher killed with SIGKILL and started again (nothing lost, nothing twice);
 * - the replica killed and started again (the snapshot and the batches after it, applied before
 *   it serves its first request);
 * - a compaction (a new snapshot, the batches folded in);
 * - a TRUNCATE and an ALTER TABLE (a new snapshot each);
 * - batches of whole transactions up to their size limit, published when full;
 * - a slot invalidated by max_slot_wal_keep_size while the publisher was away (a new first
 *   snapshot holding what the slot lost).
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { mkdtempSync, readdirSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Subprocess } from "bun";
import postgres from "postgres";
import { readManifest } from "../../src/publish/publish.ts";
import { defaultLocationDir } from "../../src/snapshot/private-copy.ts";
import { slotState } from "../../src/publish/pg-changes.ts";
import { openStorage } from "../../src/io/storage.ts";
import { lsnValue } from "../../src/live/changes.ts";
import { type TestPostgres, startPostgres } from "../support/postgres.ts";
import { ROOT, type ServeProcess, spawnServe } from "../support/serve-process.ts";
import { untilInDir } from "../support/watch-dir.ts";

let pg: TestPostgres;
let sql: postgres.Sql;
let dir: string;
let location: string;
beforeAll(async () => {
  pg = startPostgres({ logical: true });
  sql = postgres(pg.url, { max: 2, onnotice: () => {} });
  await sql.unsafe(`
    CREATE TABLE people (id bigint PRIMARY KEY, name text NOT NULL, email text, status text, score numeric, secret_hash text);
    INSERT INTO people SELECT g, 'user ' || g, 'u' || g || '@x.io', CASE WHEN g % 3 = 0 THEN 'inactive' ELSE 'active' END, g % 17, 'h' || g FROM generate_series(1, 500) AS g;
  `);
  dir = mkdtempSync(join(tmpdir(), "users-live-"));
  location = join(dir, "published");
}, 60_000);
/** Every publisher started (each test kills its own; these are killed at the end whatever happened). */
const publishers: Subprocess[] = [];
afterAll(async () => {
  for (const child of publishers) child.kill("SIGKILL");
  await Promise.all(publishers.map((child) => child.exited));
  await sql?.end({ timeout: 1 });
  await pg?.stop();
  rmSync(dir, { recursive: true, force: true });
});

/** `snapshot follow` as a child process, its stderr collected (`args`: instead of the people table's publication to `location`). */
function startPublisher(extra: string[] = [], args = ["--table", "people", "--to", location, "--exclude", "secret_hash", "--work-dir", join(dir, "work")], env: Record<string, string> = {}) {
  const child = Bun.spawn(
    [process.execPath, join(ROOT, "src", "cli.ts"), "snapshot", "follow", "--from", pg.url, ...args, "--batch-ms", "50", ...extra],
    { cwd: ROOT, env: { ...process.env, LOG_LEVEL: "info", ...env }, stdin: "ignore", stdout: "ignore", stderr: "pipe" },
  );
  publishers.push(child);
  let text = "";
  void (async () => {
    const decoder = new TextDecoder();
    const reader = child.stderr.getReader();
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      text += decoder.decode(value, { stream: true });
      if (process.env.LIVE_DEBUG) process.stdout.write(decoder.decode(value));
    }
  })();
  return { child, log: () => text };
}

/** The table's rows as the replica's export holds them (JSON records, key order). */
async function tableRows(): Promise<Record<string, unknown>[]> {
  const rows = await sql<{ r: string }[]>`SELECT row_to_json(t)::text AS r FROM (SELECT * FROM people ORDER BY id) t`;
  return rows.map((row) => {
    // every column but the one left out, in the table's order
    const { secret_hash: _left, ...record } = JSON.parse(row.r) as Record<string, unknown>;
    return record;
  });
}

/** The replica's whole export, as records. */
async function exported(replica: ServeProcess): Promise<Record<string, unknown>[]> {
  const text = await (await fetch(`${replica.url}/api/users/export?format=ndjson`)).text();
  return text
    .split("\n")
    .filter((l) => l !== "")
    .map((l) => JSON.parse(l) as Record<string, unknown>);
}

/** PostgreSQL's current WAL position (after the last commit). */
async function currentLsn(): Promise<number> {
  const [{ lsn }] = await sql<{ lsn: string }[]>`SELECT pg_current_wal_lsn()::text AS lsn`;
  return lsnValue(lsn);
}

/** A replica of `source` (`serve --source … --poll <poll>`), logging at debug: each batch it applies is a line ({@link untilServed}). */
function startReplica(source: string, cacheDir: string, poll = "0.1", env: Record<string, string> = {}): Promise<ServeProcess> {
  return spawnServe(null, ["--source", source, "--poll", poll, "--cache-dir", cacheDir], { LOG_LEVEL: "debug", ...env });
}

/** The replica's log lines that tell its served state changed: a batch applied (debug), a snapshot swapped in. */
const STATE_CHANGED = new Set(["applied a change batch", "snapshot reloaded"]);

/**
 * Resolves once `condition` holds of what the replica serves: checked once it serves ("HTTP
 * envelope"), then again after each line that tells its state changed ({@link STATE_CHANGED}).
 */
async function untilServed(replica: ServeProcess, condition: () => Promise<boolean>): Promise<void> {
  await replica.waitForLog("HTTP envelope");
  for (;;) {
    const seen = replica.logs().length;
    if (await condition()) return;
    await replica.waitForLine((l) => STATE_CHANGED.has(l.msg), { after: seen, what: "a change of the served state" });
  }
}

/** Waits until the replica reached `lsn` (its /readyz) and holds the table's rows. */
async function converged(replica: ServeProcess, lsn: number): Promise<void> {
  if (process.env.LIVE_DEBUG) console.log("waiting for", lsn.toString(16));
  await untilServed(replica, async () => {
    const ready = (await (await fetch(`${replica.url}/readyz`)).json()) as { lsn?: string; lagSeconds?: number };
    if (ready.lsn === undefined || lsnValue(ready.lsn) < lsn) return false;
    const [got, want] = await Promise.all([exported(replica), tableRows()]);
    return JSON.stringify(got) === JSON.stringify(want);
  });
}

/** The manifest at a directory location, or null while there is none; `check` is called with it as the manifest is replaced (fs.watch), until it returns a value. */
function whenManifest<T>(at: string, check: (manifest: Awaited<ReturnType<typeof readManifest>> | null) => T | null | undefined | false): Promise<T> {
  return untilInDir(at, async () => check(await readManifest(openStorage(at)).catch(() => null))) as Promise<T>;
}

/** Waits until the location's manifest lists a batch past `lsn`; returns the last listed batch's LSN. */
function listedPast(lsn: number): Promise<string> {
  return whenManifest(location, (manifest) => {
    const last = manifest?.changes?.at(-1);
    return last !== undefined && lsnValue(last.lsn) > lsn && last.lsn;
  });
}

/** Waits until the replica serves (its first /readyz 200, once it logs "HTTP envelope"); returns that first answer. */
async function readyOnce(replica: ServeProcess): Promise<{ lsn?: string }> {
  await replica.waitForLog("HTTP envelope");
  const response = await fetch(`${replica.url}/readyz`);
  expect(response.status).toBe(200);
  return (await response.json()) as { lsn?: string };
}

/** Waits until the manifest at `at` (default: the people table's location) names a live snapshot. */
async function published(at = location): Promise<void> {
  await whenManifest(at, (manifest) => manifest?.current.lsn !== undefined);
}

describe("a live table: PostgreSQL → publisher → replica", () => {
  test("every committed change reaches the replica exactly, whatever stops", async () => {
    let publisher = startPublisher();
    await published();
    let replica = await startReplica(location, join(dir, "replica"));
    try {
      await converged(replica, 0);
      expect(Object.keys((await exported(replica))[0])).toEqual(["id", "name", "email", "status", "score"]);

      // inserts, updates of sort keys and of the key, deletes, a multi-row transaction
      await sql`INSERT INTO people VALUES (501, 'Zoë New', 'zoe@x.io', 'active', 3, 'h')`;
      await sql`UPDATE people SET name = 'Aaron First', status = 'inactive' WHERE id = 250`;
      await sql`UPDATE people SET id = 9000 WHERE id = 17`;
      await sql`DELETE FROM people WHERE id BETWEEN 100 AND 120`;
      await sql.begin(async (tx) => {
        await tx`INSERT INTO people VALUES (502, 'Tx One', NULL, NULL, NULL, 'h'), (503, 'Tx Two', 't2@x.io', 'active', 1.5, 'h')`;
        await tx`UPDATE people SET email = 'changed@x.io' WHERE id = 1`;
      });
      await converged(replica, await currentLsn());
      const ready = (await (await fetch(`${replica.url}/readyz`)).json()) as { lsn: string; lagSeconds: number };
      expect(ready.lagSeconds).toBe(0);
      expect((await fetch(`${replica.url}/api/users?pageSize=1`)).headers.get("x-snapshot-id")).toMatch(/^[0-9a-f]{16}@[0-9A-F]+\/[0-9A-F]+$/);

      // the publisher killed mid-stream and started again: nothing lost, nothing twice
      publisher.child.kill("SIGKILL");
      await publisher.child.exited;
      await sql`INSERT INTO people VALUES (504, 'While Down', 'down@x.io', 'active', 0, 'h')`;
      await sql`UPDATE people SET score = 99 WHERE id BETWEEN 1 AND 50`;
      publisher = startPublisher();
      await converged(replica, await currentLsn());

      // the replica killed and started again: the snapshot and the batches after it, applied
      // before it serves. Its follower's first poll is an hour away: only its start applies them.
      replica.child.kill("SIGKILL");
      await replica.child.exited;
      const beforeDelete = await currentLsn();
      await sql`DELETE FROM people WHERE id = 2`;
      const last = await listedPast(beforeDelete);
      replica = await startReplica(location, join(dir, "replica"), "3600");
      const first = await readyOnce(replica);
      expect(first.lsn).toBe(last);
      expect(await exported(replica)).toEqual(await tableRows());
      await replica.dispose();
      replica = await startReplica(location, join(dir, "replica"));
      await converged(replica, await currentLsn());

      // a TRUNCATE: a new snapshot, then changes on it
      await sql`TRUNCATE people`;
      await sql`INSERT INTO people VALUES (1, 'After Truncate', 'a@x.io', 'active', 1, 'h')`;
      await converged(replica, await currentLsn());
      // an ALTER TABLE adding a column that is published: a new snapshot with it
      await sql.unsafe("ALTER TABLE people ADD COLUMN level int");
      await sql`INSERT INTO people VALUES (2, 'With Level', 'b@x.io', 'active', 2, 'h', 5)`;
      await untilServed(replica, async () => {
        const records = await exported(replica);
        return records.length === 2 && "level" in records[0];
      });
      const records = await exported(replica);
      expect(records).toEqual([
        { id: 1, name: "After Truncate", email: "a@x.io", status: "active", score: 1, level: null },
        { id: 2, name: "With Level", email: "b@x.io", status: "active", score: 2, level: 5 },
      ]);
      // SIGTERM: what was received is published, exit 0
      publisher.child.kill("SIGTERM");
      expect(await publisher.child.exited).toBe(0);
    } finally {
      publisher.child.kill("SIGKILL");
      await replica.dispose();
    }
  }, 240_000);

  test("compaction folds the batches into a new snapshot while changes go on; replicas take it", async () => {
    const publisher = startPublisher(["--compact-seconds", "1"]);
    const replica = await startReplica(location, join(dir, "replica2"));
    try {
      await converged(replica, await currentLsn());
      const first = (await readManifest(openStorage(location)))?.current.snapshotId;
      // changes until a compaction has published another snapshot holding some of them
      let round = 0;
      for (;;) {
        round++;
        await sql`INSERT INTO people (id, name, email, status, score, secret_hash) VALUES (${1000 + round}, ${`Round ${round}`}, NULL, 'active', ${round}, 'h')`;
        await sql`UPDATE people SET score = ${round} WHERE id = 1`;
        const manifest = await readManifest(openStorage(location));
        if (manifest !== null && manifest.current.snapshotId !== first && round > 3) break;
        await converged(replica, await currentLsn());
      }
      await sql`DELETE FROM people WHERE id = 1001`;
      await converged(replica, await currentLsn());
      const manifest = await readManifest(openStorage(location));
      // the batches before the compacted snapshot's LSN are gone from the manifest
      for (const entry of manifest?.changes ?? []) expect(lsnValue(entry.firstLsn)).toBeGreaterThan(lsnValue(manifest?.current.lsn as string));
    } finally {
      publisher.child.kill("SIGKILL");
      await replica.dispose();
    }
  }, 240_000);
  test("compaction on time: batches published and then silence are folded into a new snapshot, after a restart too (its files, without --work-dir, in the user's cache directory)", async () => {
    await sql.unsafe("CREATE TABLE quiet (id bigint PRIMARY KEY, name text); INSERT INTO quiet SELECT g, 'q ' || g FROM generate_series(1, 100) AS g");
    const quietLocation = join(dir, "quiet");
    const args = ["--table", "quiet", "--to", quietLocation, "--slot", "quiet_slot", "--publication", "quiet_pub", "--work-dir", join(dir, "quiet-work")];
    const manifestNow = () => readManifest(openStorage(quietLocation)).catch(() => null);
    /** Waits until the manifest's current snapshot is at `lsn` with no batch listed after it; returns its id. */
    const compactedAt = (lsn: string): Promise<string> =>
      whenManifest(quietLocation, (manifest) => manifest?.current.lsn === lsn && (manifest.changes ?? []).length === 0 && manifest.current.snapshotId);
    /** Waits until the batches the manifest lists after its snapshot hold `count` changes; returns the last one's LSN. */
    const listedChanges = (count: number): Promise<string> =>
      whenManifest(quietLocation, (manifest) => {
        const changes = manifest?.changes ?? [];
        return changes.reduce((n, c) => n + c.changes, 0) >= count && (changes.at(-1) as { lsn: string }).lsn;
      });
    const quietRows = async () => (await sql<{ r: string }[]>`SELECT row_to_json(t)::text AS r FROM (SELECT * FROM quiet ORDER BY id) t`).map((row) => JSON.parse(row.r));
    // a publisher that never compacts publishes a few batches, then is killed
    let publisher = startPublisher(["--compact-seconds", "0"], args);
    let replica: ServeProcess | null = null;
    try {
      await published(quietLocation);
      const first = (await manifestNow())?.current.snapshotId;
      await sql`UPDATE quiet SET name = 'changed' WHERE id = 5`;
      await sql`DELETE FROM quiet WHERE id = 6`;
      await sql`INSERT INTO quiet VALUES (101, 'new')`;
      const lastBatch = await listedChanges(3);
      publisher.child.kill("SIGKILL");
      await publisher.child.exited;
      // started again with a compaction interval, and no commit after: the batches listed are
      // folded into a new snapshot at the last one's LSN anyway. Without --work-dir: its files go
      // to the user's cache directory, none into the working directory (the repository's root)
      const xdg = join(dir, "xdg-cache");
      const rootBefore = readdirSync(ROOT).sort();
      publisher = startPublisher(["--compact-seconds", "1"], args.slice(0, -2), { XDG_CACHE_HOME: xdg });
      const compacted = await compactedAt(lastBatch);
      expect(compacted).not.toBe(first);
      expect(readdirSync(defaultLocationDir("follow", quietLocation, { XDG_CACHE_HOME: xdg }))).toContain(`${compacted}.snap`);
      expect(readdirSync(ROOT).sort()).toEqual(rootBefore);
      replica = await startReplica(quietLocation, join(dir, "quiet-replica"));
      // the compacted snapshot alone, no batch applied on it, holding every committed change
      expect((await readyOnce(replica)).lsn).toBe(lastBatch);
      expect((await fetch(`${replica.url}/api/users?pageSize=1`)).headers.get("x-snapshot-id")).toBe(compacted);
      expect(await exported(replica)).toEqual(await quietRows());
      // while it runs: one more commit, then silence; its batch is folded in too
      await sql`UPDATE quiet SET name = 'again' WHERE id = 7`;
      const again = await listedChanges(1);
      expect(lsnValue(again)).toBeGreaterThan(lsnValue(lastBatch));
      const recompacted = await compactedAt(again);
      expect(recompacted).not.toBe(compacted);
      expect(publisher.log()).toContain("compacted the changes into a new snapshot");
    } finally {
      publisher.child.kill("SIGKILL");
      await publisher.child.exited;
      await replica?.dispose();
    }
  }, 240_000);
  test("unchanged TOASTed values are filled in, and a value the snapshot cannot hold (a new enum label) brings a new snapshot: the replica holds exactly the table", async () => {
    await sql.unsafe(`
      CREATE TYPE mood AS ENUM ('calm', 'busy');
      CREATE TABLE moods (id bigint PRIMARY KEY, mood mood NOT NULL, note text, big text);
      ALTER TABLE moods ALTER COLUMN big SET STORAGE EXTERNAL;
      INSERT INTO moods SELECT g, 'calm', 'n' || g, repeat(md5(g::text), 100) FROM generate_series(1, 20) AS g;`);
    const moodsLocation = join(dir, "moods");
    const args = ["--table", "moods", "--to", moodsLocation, "--slot", "moods_slot", "--publication", "moods_pub", "--work-dir", join(dir, "moods-work")];
    const publisher = startPublisher([], args);
    let replica: ServeProcess | null = null;
    const moodRows = async () => (await sql<{ r: string }[]>`SELECT row_to_json(t)::text AS r FROM (SELECT * FROM moods ORDER BY id) t`).map((row) => JSON.parse(row.r));
    const moodsConverged = async (target: ServeProcess) => {
      const want = JSON.stringify(await moodRows());
      await untilServed(target, async () => JSON.stringify(await exported(target)) === want);
    };
    try {
      await published(moodsLocation);
      const first = (await readManifest(openStorage(moodsLocation)))?.current.snapshotId;
      replica = await startReplica(moodsLocation, join(dir, "moods-replica"));
      await moodsConverged(replica);
      // updates that leave the TOASTed column alone (PostgreSQL does not resend it): a row of
      // the snapshot, a row updated twice in one transaction, a row inserted and updated in a
      // row (its value from the collected transactions or from the state)
      await sql`UPDATE moods SET note = 'changed' WHERE id = 1`;
      await sql.begin(async (tx) => {
        await tx`UPDATE moods SET note = 'once' WHERE id = 2`;
        await tx`UPDATE moods SET note = 'twice', mood = 'busy' WHERE id = 2`;
      });
      await sql`INSERT INTO moods VALUES (100, 'calm', 'new', repeat(md5('x'), 100))`;
      await sql`UPDATE moods SET note = 'new, changed' WHERE id = 100`;
      await moodsConverged(replica);
      expect(((await exported(replica)).find((r) => r.id === 100) as { big: string }).big).toHaveLength(3200);
      // a label the snapshot's enum does not have, between two changes that fit
      await sql.unsafe("ALTER TYPE mood ADD VALUE 'sleepy'");
      await sql`INSERT INTO moods VALUES (200, 'calm', 'before', NULL)`;
      await sql`INSERT INTO moods VALUES (201, 'sleepy', 'new label', NULL)`;
      await sql`UPDATE moods SET mood = 'busy' WHERE id = 3`;
      await moodsConverged(replica);
      expect((await readManifest(openStorage(moodsLocation)))?.current.snapshotId).not.toBe(first);
      expect(publisher.log()).toContain("a change does not fit the snapshot's schema: a new snapshot follows");
      // and changes go on on the new snapshot
      await sql`UPDATE moods SET mood = 'sleepy', note = 'after' WHERE id = 4`;
      await moodsConverged(replica);
    } finally {
      publisher.child.kill("SIGKILL");
      await replica?.dispose();
    }
  }, 240_000);
  test("a batch holds whole transactions up to its size limit and is published without waiting for --batch-ms", async () => {
    // --batch-ms of a minute (its largest): only the size limit publishes these batches at once
    const publisher = startPublisher(["--batch-ms", "60000"]);
    const replica = await startReplica(location, join(dir, "replica3"));
    try {
      await published();
      const before = (await readManifest(openStorage(location)))?.changes?.length ?? 0;
      // two transactions of 6,000 rows: together past the limit, each too large to share a batch
      for (const start of [20_000, 30_000]) {
        await sql.unsafe(`INSERT INTO people (id, name, email, status, score, secret_hash) SELECT g, 'bulk ' || g, NULL, 'active', g % 7, 'h' FROM generate_series(${start + 1}, ${start + 6000}) AS g`);
      }
      await converged(replica, await currentLsn());
      const manifest = await readManifest(openStorage(location));
      expect(manifest?.changes?.slice(before).map((c) => c.changes)).toEqual([6000, 6000]);
    } finally {
      publisher.child.kill("SIGKILL");
      await replica.dispose();
    }
  }, 240_000);
  test("a slot PostgreSQL invalidated (max_slot_wal_keep_size) while the publisher was away: a new first snapshot, and the replica follows it", async () => {
    await sql.unsafe("CREATE TABLE kept (id bigint PRIMARY KEY, name text); INSERT INTO kept SELECT g, 'k ' || g FROM generate_series(1, 100) AS g; CREATE TABLE filler (x bigint, pad text)");
    const keptLocation = join(dir, "kept");
    const args = ["--table", "kept", "--to", keptLocation, "--slot", "kept_slot", "--publication", "kept_pub", "--work-dir", join(dir, "kept-work")];
    let publisher = startPublisher([], args);
    const keptRows = async () => (await sql<{ r: string }[]>`SELECT row_to_json(t)::text AS r FROM (SELECT * FROM kept ORDER BY id) t`).map((row) => JSON.parse(row.r));
    /** The replica's export of the kept table. */
    const keptExport = async (replica: ServeProcess) =>
      (await (await fetch(`${replica.url}/api/users/export?format=ndjson`)).text())
        .split("\n")
        .filter((l) => l !== "")
        .map((l) => JSON.parse(l));
    let replica: ServeProcess | null = null;
    try {
      await published(keptLocation);
      replica = await startReplica(keptLocation, join(dir, "kept-replica"));
      // the publisher gone; changes meanwhile; the slot's WAL goes past the limit and PostgreSQL
      // invalidates it at a checkpoint
      publisher.child.kill("SIGKILL");
      await publisher.child.exited;
      await sql`UPDATE kept SET name = 'while away' WHERE id = 7`;
      await sql`DELETE FROM kept WHERE id = 8`;
      await sql.unsafe("ALTER SYSTEM SET max_slot_wal_keep_size = '1MB'");
      await sql.unsafe("SELECT pg_reload_conf()");
      for (;;) {
        const state = await slotState(pg.url, "kept_slot");
        if (state?.walStatus === "lost") break;
        await sql.unsafe("INSERT INTO filler SELECT g, repeat('x', 100) FROM generate_series(1, 20000) AS g; SELECT pg_switch_wal(); CHECKPOINT;").simple();
      }
      await sql.unsafe("ALTER SYSTEM RESET max_slot_wal_keep_size");
      await sql.unsafe("SELECT pg_reload_conf()");
      publisher = startPublisher([], args);
      // the changes the lost slot held are in the new first snapshot; changes after it stream again
      const served = replica;
      await untilServed(served, async () => JSON.stringify(await keptExport(served)) === JSON.stringify(await keptRows()));
      await sql`INSERT INTO kept VALUES (1000, 'after')`;
      await untilServed(served, async () => {
        const got = await keptExport(served);
        return got.length === 100 && JSON.stringify(got) === JSON.stringify(await keptRows());
      });
      expect(publisher.log()).toContain("the slot was invalidated");
      expect((await slotState(pg.url, "kept_slot"))?.walStatus).not.toBe("lost");
    } finally {
      publisher.child.kill("SIGKILL");
      await replica?.dispose();
    }
  }, 240_000);
});
