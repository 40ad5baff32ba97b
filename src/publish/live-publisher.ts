/**
 * The publisher of a live table (`snapshot follow`, docs/live-replicas.md §7): PostgreSQL's
 * committed changes of one table, as a first snapshot at the slot's consistent point, then change
 * batches published in commit order, compacted into a new snapshot from time to time.
 *
 * The state that matters is in two places, so that anything may stop at any moment: the
 * location's manifest (the snapshot with its LSN, and the batches after it) and the slot's
 * confirmed LSN in PostgreSQL, which is advanced only once a batch is published. On start the
 * publisher takes the manifest's state (the snapshot and its batches, applied here as a replica
 * would), and streams from the slot: transactions at or below the last published LSN were
 * published already and are skipped, so each is published once however often it arrives.
 *
 * The publisher keeps the table's state as an engine version of its own: each batch is applied
 * to it as a replica will apply it, once, just before it is published — a value the snapshot's
 * schema cannot hold ends the stream like a schema change: the transactions before the one
 * holding it are published, then a new snapshot — and it fills in the values PostgreSQL does
 * not resend (an unchanged TOASTed column of an update), from the transactions received since
 * and then from that state. One apply per batch, not per transaction: an apply's cost is mostly
 * per call at the publisher's rates (bench/publisher.ts: 10,000 row changes a second in
 * transactions of 10 rows took 0.8 ms per transaction, most of a core, at 1M rows).
 */
import type { Logger } from "pino";
import { type Engine, applyChanges, createEngine } from "../engine/execute.ts";
import type { Schema } from "../schema/kinds.ts";
import { loadSnapshot } from "../snapshot/load.ts";
import { type BatchEntry, batchKey, sha256Hex } from "../live/batches.ts";
import { type Change, type ChangeBatch, encodeBatch, lsnValue } from "../live/changes.ts";
import { currentRecord } from "../live/delta.ts";
import { ChangeStream, type StreamEvent, type Transaction, createSlot, dropSlot, ensurePublication, slotState } from "./pg-changes.ts";

/** What a publisher's location offers it (src/publish: the manifest and the objects under it). */
export interface LiveLocation {
  /** The published state: the current snapshot's local file (downloaded when needed), its LSN, and the batches after it; null when nothing live is published. */
  current(): Promise<{ path: string; lsn: string; batches: { entry: BatchEntry; batch: ChangeBatch }[] } | null>;
  /**
   * Publishes a snapshot file as current at `lsn`: the batches listed after it whose LSN is above
   * `lsn` stay listed, the others go (the earlier versions kept for rollback).
   */
  publishSnapshot(path: string, lsn: string): Promise<void>;
  /** Uploads a batch object, then lists it in the manifest after the others. */
  publishBatch(entry: BatchEntry, bytes: Uint8Array): Promise<void>;
}

/** How a publisher builds snapshots: from PostgreSQL at an exported snapshot, and by compaction. */
export interface SnapshotMaker {
  /** Builds the table read at the exported snapshot `snapshot` into a file; returns its path and schema. */
  fromPostgres(snapshot: string): Promise<{ path: string; schema: Schema }>;
  /**
   * Builds the snapshot of `base` with `batches` applied (compaction: live/compact.ts), off the
   * publisher's event loop; returns its path.
   */
  compact(base: string, batches: readonly ChangeBatch[]): Promise<string>;
}

/** Options of {@link runPublisher}. */
export interface PublisherOptions {
  url: string;
  table: string;
  slot: string;
  publication: string;
  /** Columns left out (never published: the publication lists the others). */
  exclude: readonly string[];
  /** Most time between a batch's first commit and its publication, in ms. */
  batchMs: number;
  /** Time between compactions, in seconds (0: never). */
  compactSeconds: number;
  location: LiveLocation;
  maker: SnapshotMaker;
  logger: Logger;
  /** The kept columns of the table, from the catalog (what the publication lists). */
  columns(): Promise<string[]>;
}

/** A running publisher: stop it (SIGTERM) to publish what it holds and end. */
export interface RunningPublisher {
  /** Publishes the batch being collected, confirms it, and ends the stream. */
  stop(): Promise<void>;
  /** Settles when the publisher ends (stopped, or a fatal error at start). */
  done: Promise<void>;
  /** The last published LSN. */
  lsn(): string;
}

/** Milliseconds before a failed step is tried again (the object store or PostgreSQL away). */
const RETRY_MS = [100, 250, 500, 1000, 2000, 5000];

/**
 * Changes a batch holds at most (docs/live-replicas.md §7): once the collected transactions hold
 * this many, a batch is published at once rather than `--batch-ms` after its first commit, and a
 * batch takes whole transactions up to it (a larger transaction makes a batch of its own). A
 * replica applies a batch in one step between requests, so this bounds that step.
 */
export const MAX_BATCH_CHANGES = 10_000;

/**
 * Changes collected and not yet published beyond which the stream waits for a batch to be
 * published (the object store away for a while): PostgreSQL keeps the WAL meanwhile, and the
 * publisher's memory stays bounded.
 */
const PENDING_LIMIT = 10 * MAX_BATCH_CHANGES;

/** How often the table's columns are compared with the snapshot's, in ms. */
const COLUMNS_CHECK_MS = 2000;

/** Logged when the slot was invalidated. */
const LOST = "the slot was invalidated (its WAL went past max_slot_wal_keep_size): its changes are gone; a new first snapshot follows";

/** Why the stream was stopped. */
type Reason = "error" | "snapshot" | "stop";

/**
 * Runs the publisher until stopped (see the module comment).
 * @returns the running publisher; `done` rejects only on an error PostgreSQL reports at start
 *   (`wal_level` not logical, no such table), everything later is logged and retried
 */
export function runPublisher(options: PublisherOptions): RunningPublisher {
  const { logger } = options;
  let stopping = false;
  /**
   * The table's state: the current snapshot with the batches published after it applied, and
   * the one being published (applied as it is taken from the collected transactions).
   */
  let engine: Engine | null = null;
  /** The batch applied to `engine` and being published (not yet in `sinceSnapshot`), or null. */
  let inFlight: ChangeBatch | null = null;
  /** The last change of each key among the collected transactions, not applied to `engine` yet (what fills a TOASTed value first). */
  const latest = new Map<number | string, Change>();
  let snapshotPath = "";
  /** The batches published after the current snapshot, in order (what compaction folds in). */
  let sinceSnapshot: ChangeBatch[] = [];
  let published = "0/0";
  let stream: ChangeStream | null = null;
  let pending: { transactions: Transaction[]; changes: number; timer: ReturnType<typeof setTimeout> | null } = { transactions: [], changes: 0, timer: null };
  /** A flush is queued for a full batch (not yet started). */
  let fullQueued = false;
  let flushing: Promise<void> = Promise.resolve();
  let compacting: Promise<void> | null = null;
  let lastCompaction = Date.now();
  /** Fires when the next compaction is due (armed while batches wait to be folded in). */
  let compactionTimer: ReturnType<typeof setTimeout> | null = null;
  let reason: Reason | null = null;
  /** Wakes the loop waiting on the running stream. */
  const waiting: { wake: (() => void) | null } = { wake: null };
  const stopStream = (why: Reason) => {
    if (reason === null || why === "stop") reason = why;
    waiting.wake?.();
  };

  /** Retries `step` with backoff until it succeeds (or, once stopping, gives up after one retry). */
  const retried = async <T>(what: string, step: () => Promise<T>): Promise<T | null> => {
    for (let attempt = 0; ; attempt++) {
      try {
        return await step();
      } catch (error) {
        if (stopping && attempt > 0) return null;
        logger.warn({ err: error, attempt: attempt + 1 }, `${what} failed; trying again`);
        await Bun.sleep(RETRY_MS[Math.min(attempt, RETRY_MS.length - 1)]);
      }
    }
  };

  const schemaOf = () => (engine as Engine).store.schema;

  /**
   * A first snapshot: the slot made again with an exported snapshot (the old one dropped first:
   * the new snapshot holds every commit before the new slot's point), the table read at it,
   * published at its LSN.
   */
  const firstSnapshot = async () => {
    await ensurePublication(options.url, options.publication, options.table, options.exclude.length === 0 ? null : await options.columns());
    if ((await slotState(options.url, options.slot)) !== null) await dropSlot(options.url, options.slot);
    const slot = await createSlot(options.url, options.slot);
    let built: { path: string; schema: Schema };
    try {
      built = await options.maker.fromPostgres(slot.snapshot);
    } finally {
      await slot.close().catch(() => {});
    }
    await retried("publishing the first snapshot", () => options.location.publishSnapshot(built.path, slot.lsn));
    engine = createEngine(loadSnapshot(built.path).store);
    snapshotPath = built.path;
    sinceSnapshot = [];
    latest.clear();
    published = slot.lsn;
    lastCompaction = Date.now();
    logger.info({ lsn: slot.lsn }, "published a snapshot of the table at the slot's consistent point");
  };

  /** The published state taken up again (the snapshot and its batches applied here); false when there is none to take up. */
  const resume = async (): Promise<boolean> => {
    const slot = await slotState(options.url, options.slot);
    if (slot === null) return false;
    if (slot.walStatus === "lost") {
      logger.warn({ slot: options.slot }, LOST);
      return false;
    }
    const current = await options.location.current();
    if (current === null) return false;
    let state = createEngine(loadSnapshot(current.path).store);
    for (const { batch } of current.batches) state = applyChanges(state, batch);
    engine = state;
    snapshotPath = current.path;
    sinceSnapshot = current.batches.map((b) => b.batch);
    published = current.batches.length > 0 ? current.batches[current.batches.length - 1].batch.lsn : current.lsn;
    logger.info({ lsn: published, batches: current.batches.length }, "resumed from the published state");
    return true;
  };

  /** Notes the changes of a collected transaction as the last of their keys. */
  const collected = (changes: readonly Change[]) => {
    const keyColumn = schemaOf().key;
    for (const change of changes) latest.set(change.op === "delete" ? change.key : (change.record[keyColumn] as number | string), change);
  };

  /**
   * The collected transactions left after some were taken for a batch (applied to the engine
   * now): `latest` is made again from them alone — nothing to do in the usual case of none left.
   */
  const left = (transactions: readonly Transaction[]) => {
    latest.clear();
    for (const t of transactions) collected(t.changes);
  };

  /**
   * The row holding `key` now: its last change among the collected transactions (not applied to
   * the engine yet), else the engine's state; null when no row holds it.
   */
  const rowNow = (key: number | string): Record<string, unknown> | null => {
    const change = latest.get(key);
    if (change !== undefined) return change.op === "delete" ? null : change.record;
    const state = engine as Engine;
    return currentRecord(state.store, state.live, key);
  };

  /** Fills the values PostgreSQL did not send (unchanged TOASTed columns) from the row's state. */
  const filled = (changes: Change[]): Change[] =>
    changes.map((change) => {
      if (change.op !== "upsert" || !Object.values(change.record).includes(undefined)) return change;
      const before = rowNow(change.record[schemaOf().key] as number | string);
      const record = { ...change.record };
      for (const [id, value] of Object.entries(record)) if (value === undefined) record[id] = before?.[id] ?? null;
      return { op: "upsert", record };
    });

  /**
   * `transactions` (at least one) applied to the engine as one batch. When one of them does not
   * fit the snapshot's schema, the ones before it are applied (and the rest dropped: a new
   * snapshot holds them) and the stream is ended for a new snapshot.
   * @returns the batch of the transactions applied (all of them unless one does not fit), or null when none is
   */
  const applied = (transactions: Transaction[]): ChangeBatch | null => {
    const last = transactions[transactions.length - 1];
    const batch: ChangeBatch = { lsn: last.lsn, commitTime: last.commitTime, changes: transactions.flatMap((t) => t.changes) };
    try {
      engine = applyChanges(engine as Engine, batch);
      return batch;
    } catch {
      // one at a time, to find it (the engine is unchanged by a batch that does not apply)
      for (let i = 0; i < transactions.length; i++) {
        const t = transactions[i];
        try {
          engine = applyChanges(engine as Engine, { lsn: t.lsn, commitTime: t.commitTime, changes: t.changes });
        } catch (error) {
          logger.warn({ err: error, lsn: t.lsn }, "a change does not fit the snapshot's schema: a new snapshot follows");
          stopStream("snapshot");
          if (pending.timer !== null) clearTimeout(pending.timer);
          pending = { transactions: [], changes: 0, timer: null };
          latest.clear();
          if (i === 0) return null;
          const before = transactions[i - 1];
          return { lsn: before.lsn, commitTime: before.commitTime, changes: transactions.slice(0, i).flatMap((t) => t.changes) };
        }
      }
      return batch;
    }
  };

  /**
   * Publishes the first collected transactions as one batch (whole transactions, up to
   * {@link MAX_BATCH_CHANGES} changes, at least one), then confirms its LSN to PostgreSQL; the
   * rest, if any, is published next.
   */
  const flush = async () => {
    fullQueued = false;
    if (pending.timer !== null) clearTimeout(pending.timer);
    let take = 0;
    let count = 0;
    while (take < pending.transactions.length && (take === 0 || count + pending.transactions[take].changes.length <= MAX_BATCH_CHANGES)) {
      count += pending.transactions[take].changes.length;
      take++;
    }
    const batchOf = pending.transactions.slice(0, take);
    const rest = pending.transactions.slice(take);
    pending = { transactions: rest, changes: pending.changes - count, timer: null };
    if (batchOf.length === 0) return;
    // applied here, before anything else runs: the engine holds every transaction taken
    left(rest);
    const batch = applied(batchOf);
    if (pending.transactions.length > 0) {
      fullQueued = true;
      flushing = flushing.then(flush);
    }
    if (batch === null) return;
    const bytes = encodeBatch(batch);
    const entry: BatchEntry = {
      key: batchKey(batchOf[0].lsn, batch.lsn),
      firstLsn: batchOf[0].lsn,
      lsn: batch.lsn,
      commitTime: new Date(batch.commitTime).toISOString(),
      changes: batch.changes.length,
      bytes: bytes.length,
      sha256: sha256Hex(bytes),
    };
    inFlight = batch;
    await retried(`publishing the batch ${entry.key}`, () => options.location.publishBatch(entry, bytes));
    published = batch.lsn;
    sinceSnapshot.push(batch);
    inFlight = null;
    await stream?.confirm(batch.lsn).catch((error) => logger.warn({ err: error }, "confirming the LSN to PostgreSQL failed; it is confirmed with the next batch"));
    logger.debug({ lsn: batch.lsn, changes: entry.changes }, "published a batch");
    armCompaction();
  };

  /**
   * Compaction on time (docs/live-replicas.md §6 "Compaction"): every `--compact-seconds` while
   * batches have been published since the last snapshot, also when the table has gone quiet
   * since — a timer to the due time, armed whenever a batch waits to be folded in (at once
   * when the time is past). Not while the stream is being replaced by a new first snapshot.
   */
  const armCompaction = () => {
    if (options.compactSeconds <= 0 || compactionTimer !== null || stopping || sinceSnapshot.length === 0) return;
    compactionTimer = setTimeout(
      () => {
        compactionTimer = null;
        if (stopping || compacting !== null || reason !== null) return;
        compacting = compact();
      },
      Math.max(0, lastCompaction + options.compactSeconds * 1000 - Date.now()),
    );
  };

  /** Handles one stream event (the stream waits for it: PostgreSQL keeps the WAL meanwhile). */
  const onEvent = async (event: StreamEvent): Promise<void> => {
    if (reason !== null) return;
    if (event.kind !== "transaction") {
      logger.info({ detail: event.detail }, "the table's columns changed or it was truncated: a new snapshot follows");
      stopStream("snapshot");
      return;
    }
    // published before a restart: the slot sends what was not confirmed. It is in a published
    // batch, so it is confirmed now (else the stream, holding an unconfirmed transaction, would
    // keep the slot's WAL until the table's next batch).
    if (lsnValue(event.lsn) <= lsnValue(published) && pending.transactions.length === 0) {
      await stream?.confirm(event.lsn).catch((error) => logger.warn({ err: error }, "confirming the LSN to PostgreSQL failed; it is confirmed with the next batch"));
      return;
    }
    // applied to the engine with its batch, when that is published (flush)
    const changes = filled(event.changes);
    pending.transactions.push({ ...event, changes });
    collected(changes);
    pending.changes += changes.length;
    if (pending.changes >= MAX_BATCH_CHANGES) {
      if (!fullQueued) {
        fullQueued = true;
        flushing = flushing.then(flush);
      }
      if (pending.changes >= PENDING_LIMIT) await flushing;
      return;
    }
    if (pending.timer === null) {
      pending.timer = setTimeout(() => {
        flushing = flushing.then(flush);
      }, options.batchMs);
    }
  };

  /**
   * Folds the batches published so far into a new snapshot, off the event loop, while batches
   * go on being published; then takes it as the base, the batches after its LSN applied on it.
   */
  const compact = async () => {
    const base = snapshotPath;
    const folded = sinceSnapshot.slice();
    if (folded.length === 0) {
      compacting = null;
      return;
    }
    const at = folded[folded.length - 1].lsn;
    try {
      const path = await options.maker.compact(base, folded);
      await retried("publishing the compacted snapshot", () => options.location.publishSnapshot(path, at));
      const after = sinceSnapshot.filter((b) => lsnValue(b.lsn) > lsnValue(at));
      let next = createEngine(loadSnapshot(path).store);
      for (const batch of after) next = applyChanges(next, batch);
      // and the batch being published meanwhile, applied to the engine this one replaces
      if (inFlight !== null) next = applyChanges(next, inFlight);
      engine = next;
      snapshotPath = path;
      sinceSnapshot = after;
      logger.info({ lsn: at, batches: folded.length }, "compacted the changes into a new snapshot");
    } catch (error) {
      logger.error({ err: error }, "compaction failed; the batches stay listed and are folded in next time");
    } finally {
      lastCompaction = Date.now();
      compacting = null;
      // the batches published meanwhile are folded in at the next due time
      armCompaction();
    }
  };

  const done = (async () => {
    // a configuration error (wal_level, the table) surfaces here, once
    await ensurePublication(options.url, options.publication, options.table, options.exclude.length === 0 ? null : await options.columns());
    let fresh = true;
    while (!stopping) {
      if (reason === "snapshot") {
        await compacting;
        await retried("making a new snapshot", firstSnapshot);
      } else if (fresh) {
        if (!(await retried("reading the published state", resume))) await retried("making the first snapshot", firstSnapshot);
      }
      fresh = false;
      reason = null;
      const ended = new Promise<void>((resolve) => {
        waiting.wake = resolve;
      });
      const current = new ChangeStream({ url: options.url, slot: options.slot, publication: options.publication, table: options.table, columns: schemaOf().columns, key: schemaOf().key });
      stream = current;
      try {
        await current.start(onEvent, (error) => {
          logger.warn({ err: error }, "the replication stream ended; starting it again");
          stopStream("error");
        });
      } catch (error) {
        // a slot PostgreSQL invalidated (max_slot_wal_keep_size) never streams again
        if ((await slotState(options.url, options.slot).catch(() => null))?.walStatus === "lost") {
          logger.warn({ slot: options.slot }, LOST);
          reason = "snapshot";
          continue;
        }
        logger.warn({ err: error }, "starting the replication stream failed; trying again");
        await Bun.sleep(RETRY_MS[3]);
        continue;
      }
      if (stopping) waiting.wake?.();
      // batches listed before a restart, or left by a compaction the stream's end skipped
      armCompaction();
      // A column added to the table is not in a publication that lists its columns (left-out
      // ones): the catalog is compared with the snapshot's columns now and then.
      const columnsCheck = setInterval(() => {
        void options
          .columns()
          .then((columns) => {
            const served = schemaOf().columns.map((c) => c.id);
            if (columns.length !== served.length || columns.some((c, i) => c !== served[i])) {
              logger.info({ columns }, "the table's columns changed: a new snapshot follows");
              stopStream("snapshot");
            }
          })
          .catch(() => {});
      }, COLUMNS_CHECK_MS);
      await ended;
      clearInterval(columnsCheck);
      // what was received whole is published (in batches of at most MAX_BATCH_CHANGES); then the stream stops
      do {
        flushing = flushing.then(flush);
        await flushing;
      } while (pending.transactions.length > 0);
      await current.stop();
      stream = null;
    }
    await compacting;
  })();

  return {
    lsn: () => published,
    done,
    async stop() {
      stopping = true;
      if (compactionTimer !== null) clearTimeout(compactionTimer);
      compactionTimer = null;
      stopStream("stop");
      await done.catch(() => {});
    },
  };
}
