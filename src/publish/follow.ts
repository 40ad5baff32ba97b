/**
 * A replica that follows a published location (`serve --source LOCATION --poll SECONDS`): it
 * downloads the manifest's current snapshot into `<cache-dir>/downloads`, checking its size and
 * SHA-256 while the bytes stream in and its sections once they are all there, serves it, and
 * polls the manifest; a new version is downloaded beside the served one, renamed into place
 * and swapped in by the server's reload (in-flight requests finish on the version they started
 * on). Every step runs on an I/O thread under a time limit (io/threads.ts), so a hung manifest
 * read or download ends, is logged, and is tried again at the next poll: a replica never stops
 * following without saying so. What the last poll did, and how long ago the replica last saw
 * that it serves the published version, is in its status ({@link SourceStatus}: `/readyz`,
 * metrics, docs/operations.md "When things go wrong").
 */
import type { Logger } from "pino";
import { IoError, type IoReason, reasonOf } from "../files/errors.ts";
import type { FetchResult } from "../io/jobs.ts";
import { threadedStorage } from "../io/remote.ts";
import { describeLocation } from "../io/storage.ts";
import type { FileThreads } from "../io/threads.ts";
import { type BatchEntry, batchesAfter, checkedBatch } from "../live/batches.ts";
import type { ChangeBatch } from "../live/changes.ts";
import type { PreparedCopy } from "../snapshot/private-copy.ts";
import { MANIFEST_KEY, type Manifest, type ManifestEntry, readManifest } from "./publish.ts";

/** A failed poll is logged again, unchanged, at most this often, in ms (a change is logged at once). */
const REPEAT_LOG_MS = 60_000;

/** Longest wait before a refused download of the same published version is tried again, in ms. */
const MAX_REFUSED_WAIT_MS = 10 * 60_000;

/**
 * A published version whose download was refused (its size, SHA-256 or sections): fetched again
 * only after a wait that doubles with each refusal (one poll interval, then two, four…, at most
 * {@link MAX_REFUSED_WAIT_MS}), or at once when the manifest names anything else: a damaged
 * object is not downloaded in full at every poll by every replica until someone repairs it.
 */
interface Refusal {
  snapshotId: string;
  sha256: string;
  failures: number;
  /** When it may be fetched again, ms since the epoch. */
  retryAt: number;
  error: Error;
}

/** The refusal after `error` for `entry`, counting on from `previous` when it was of the same entry. */
function refusalOf(previous: Refusal | null, entry: ManifestEntry, error: Error, pollSeconds: number): Refusal {
  const failures = previous !== null && previous.snapshotId === entry.snapshotId && previous.sha256 === entry.sha256 ? previous.failures + 1 : 1;
  const wait = Math.min(MAX_REFUSED_WAIT_MS, pollSeconds * 1000 * 2 ** (failures - 1));
  return { snapshotId: entry.snapshotId, sha256: entry.sha256, failures, retryAt: Date.now() + wait, error };
}

/** Downloads `entry`, unless a refusal of the same entry says to wait (then throws its error, with when it is tried again). */
async function fetchUnlessRefused(options: FollowOptions, entry: ManifestEntry, refusal: { current: Refusal | null }): Promise<FetchResult> {
  const r = refusal.current;
  if (r !== null && r.snapshotId === entry.snapshotId && r.sha256 === entry.sha256 && Date.now() < r.retryAt) {
    const error = r.error instanceof IoError ? new IoError(r.error.reason, r.error.message) : new Error(r.error.message);
    error.message += ` (refused ${r.failures} time${r.failures === 1 ? "" : "s"}; not downloaded again before ${new Date(r.retryAt).toISOString()} unless the manifest changes)`;
    if (!(error instanceof IoError)) error.name = r.error.name;
    throw error;
  }
  try {
    const fetched = await fetchEntry(options, entry);
    refusal.current = null;
    return fetched;
  } catch (error) {
    const reason = reasonOf(error);
    if (reason === "checksum" || reason === "refused") refusal.current = refusalOf(refusal.current, entry, error as Error, options.pollSeconds);
    throw error;
  }
}

/** What a replica knows about its source (sent to `--workers` processes as it is). */
export interface SourceStatus {
  /** The location, for logs (not shown on `/readyz`). */
  location: string;
  /** When following began, ISO 8601. */
  startedAt: string;
  /** The last poll: when it ended, its result, and for a failure its reason and message. */
  lastPoll: { at: string; result: "ok" | "failed"; reason?: IoReason; error?: string } | null;
  /** When a poll last succeeded, ISO 8601, or null. */
  lastSuccessAt: string | null;
  /** When the replica last saw that it serves the manifest's current version, ISO 8601, or null. */
  confirmedAt: string | null;
  /** Polls that failed since the last success. */
  consecutiveFailures: number;
  /** The snapshot id the manifest named when last read, or null. */
  latestSnapshotId: string | null;
  /** Polls so far: succeeded, and failed by reason. */
  polls: { ok: number; failed: Partial<Record<IoReason, number>> };
}

/** Seconds since the replica last saw that it serves the published version (since it started, before that). */
export function stalenessSeconds(status: SourceStatus, now = Date.now()): number {
  return Math.max(0, (now - Date.parse(status.confirmedAt ?? status.startedAt)) / 1000);
}

/**
 * What `/readyz` and `/healthz` show of a source: no location and no message (the endpoints are
 * open), the last poll's result and reason, staleness in whole seconds.
 */
export function publicSourceStatus(status: SourceStatus, now = Date.now()) {
  return {
    lastPoll: status.lastPoll === null ? null : { at: status.lastPoll.at, result: status.lastPoll.result, ...(status.lastPoll.reason === undefined ? {} : { reason: status.lastPoll.reason }) },
    lastSuccessAt: status.lastSuccessAt,
    stalenessSeconds: Math.floor(stalenessSeconds(status, now)),
    consecutiveFailures: status.consecutiveFailures,
    latestSnapshotId: status.latestSnapshotId,
  };
}

/** Keeps a source's status and logs its changes. */
export interface SourceTracker {
  status: () => SourceStatus;
  /** The manifest was read: it names `snapshotId` (whatever happens next in the poll). */
  published: (snapshotId: string) => void;
  /**
   * A poll succeeded: the manifest names `latestSnapshotId`; `serving` when that is the version
   * served now. Logs the recovery after failures.
   */
  succeeded: (latestSnapshotId: string, serving: boolean) => void;
  /**
   * A poll failed while `doing` something: logged at once the first time and when the cause
   * changes, then at most once a minute while it stays the same.
   * @param serving the snapshot id served now, or null before the first
   */
  failed: (error: unknown, doing: string, serving: string | null) => void;
}

/**
 * Creates the status of a replica following `location`.
 * @param onUpdate called after each poll with the status (a supervisor sends it to its workers)
 */
export function createSourceTracker(location: string, logger: Logger, onUpdate?: (status: SourceStatus) => void): SourceTracker {
  const source = describeLocation(location);
  const status: SourceStatus = {
    location: source,
    startedAt: new Date().toISOString(),
    lastPoll: null,
    lastSuccessAt: null,
    confirmedAt: null,
    consecutiveFailures: 0,
    latestSnapshotId: null,
    polls: { ok: 0, failed: {} },
  };
  let lastLogged: { cause: string; at: number } | null = null;
  let failingSince: number | null = null;
  return {
    status: () => status,
    published(snapshotId) {
      status.latestSnapshotId = snapshotId;
    },
    succeeded(latestSnapshotId, serving) {
      const now = new Date();
      if (status.consecutiveFailures > 0) {
        logger.info({ source, failedPolls: status.consecutiveFailures, seconds: Math.round((now.getTime() - (failingSince ?? now.getTime())) / 1000) }, "following the source again");
      }
      status.lastPoll = { at: now.toISOString(), result: "ok" };
      status.lastSuccessAt = now.toISOString();
      if (serving) status.confirmedAt = now.toISOString();
      status.latestSnapshotId = latestSnapshotId;
      status.consecutiveFailures = 0;
      status.polls.ok++;
      lastLogged = null;
      failingSince = null;
      onUpdate?.(status);
    },
    failed(error, doing, serving) {
      const now = Date.now();
      const reason = reasonOf(error);
      const message = (error as Error)?.message ?? String(error);
      status.lastPoll = { at: new Date(now).toISOString(), result: "failed", reason, error: message };
      status.consecutiveFailures++;
      status.polls.failed[reason] = (status.polls.failed[reason] ?? 0) + 1;
      failingSince ??= now;
      onUpdate?.(status);
      // The same cause again (counts and sizes aside) is logged at most once a minute.
      const cause = `${reason}|${doing.replace(/[0-9a-f]{16}/g, "#")}|${message.replace(/\d+(\.\d+)?/g, "#")}`;
      if (lastLogged !== null && lastLogged.cause === cause && now - lastLogged.at < REPEAT_LOG_MS) return;
      lastLogged = { cause, at: now };
      const fields = { source, doing, reason, error: message, consecutiveFailures: status.consecutiveFailures, stalenessSeconds: Math.round(stalenessSeconds(status, now)) };
      if (serving === null) logger.warn(fields, "no snapshot to serve yet; trying again");
      else logger.error({ ...fields, servingSnapshotId: serving }, "following the source failed; still serving the previous snapshot");
    },
  };
}

/** How a replica follows its source. */
export interface FollowOptions {
  /** `s3://bucket/prefix` or a directory. */
  location: string;
  /** Where downloads go (`<cache-dir>/downloads`); the served file is `current.snap` there. */
  downloadsDir: string;
  /** The server's cache directory: each download is linked there as its private copy. */
  cacheDir: string;
  /** Seconds between the starts of two polls. */
  pollSeconds: number;
  /** Longest time a storage operation may go without progress, in ms. */
  timeoutMs: number;
  /** Verify the sections of each download (default true). */
  verify?: boolean;
  threads: FileThreads;
  tracker: SourceTracker;
  logger: Logger;
}

/**
 * Downloads `entry` (the fetch job of io/jobs.ts) and logs it.
 * @throws IoError, SnapshotError: the download refused, or what the storage met
 */
async function fetchEntry(options: FollowOptions, entry: ManifestEntry): Promise<FetchResult> {
  const fetched = await options.threads.run(
    { kind: "fetch", location: options.location, entry, downloadsDir: options.downloadsDir, cacheDir: options.cacheDir, verify: options.verify !== false },
    { timeoutMs: options.timeoutMs, label: `downloading ${entry.key} from ${describeLocation(options.location)} into ${options.downloadsDir}` },
  );
  options.logger.info({ source: describeLocation(options.location), snapshotId: entry.snapshotId, bytes: fetched.bytes, ms: Math.round(fetched.ms) }, "snapshot downloaded");
  return fetched;
}

/**
 * The manifest.
 * @throws IoError `not_published` when there is none; as {@link readManifest}
 */
async function currentManifest(options: FollowOptions): Promise<Manifest> {
  const storage = threadedStorage(options.threads, options.location, options.timeoutMs);
  const manifest = await readManifest(storage);
  if (manifest === null) throw new IoError("not_published", `${storage.description}: nothing published (no ${MANIFEST_KEY})`);
  return manifest;
}

/**
 * What a replica of a live table drives (docs/live-replicas.md §5, §8): the state it serves and
 * the change batches it applies to it.
 */
export interface ChangesTarget {
  /** The LSN the served state has reached by its applied batches, or null when none is applied on its snapshot. */
  lsn: () => string | null;
  /**
   * Applies one checked batch between requests (all or nothing).
   * @throws BatchError when it does not apply; the served state is unchanged
   */
  apply: (batch: ChangeBatch) => void;
  /**
   * Told at each poll, before the batches are applied: the served snapshot's LSN, and the commit
   * time (UTC ms) of the oldest listed batch not applied yet, or null when none waits (what the
   * replica's lag is measured from).
   */
  published: (snapshotLsn: string, pendingSince: number | null) => void;
}

/**
 * A listed batch, downloaded and checked against its entry (size, SHA-256, its LSN).
 * @throws IoError of the storage (`not_published` when it is missing), `checksum`; an Error of the checks
 */
async function downloadBatch(options: Pick<FollowOptions, "threads" | "location" | "timeoutMs">, entry: BatchEntry): Promise<ChangeBatch> {
  const storage = threadedStorage(options.threads, options.location, options.timeoutMs);
  const bytes = await storage.read(entry.key);
  if (bytes === null) throw new IoError("not_published", `${storage.description}: ${entry.key} is listed in the manifest but missing`);
  return checkedBatch(entry, bytes);
}

/**
 * The batches a live snapshot's manifest lists after it, downloaded and checked, in order (none
 * for a snapshot that is not live): what goes in with the snapshot, so that a replica never
 * serves it without them (docs/live-replicas.md §8).
 * @throws as {@link downloadBatch}
 */
export async function listedBatches(options: Pick<FollowOptions, "threads" | "location" | "timeoutMs">, manifest: Manifest): Promise<ChangeBatch[]> {
  const lsn = manifest.current.lsn;
  if (lsn === undefined) return [];
  const batches: ChangeBatch[] = [];
  for (const entry of batchesAfter(manifest.changes ?? [], lsn)) batches.push(await downloadBatch(options, entry));
  return batches;
}

/**
 * Applies the manifest's batches after the served state's LSN, in order (docs/live-replicas.md
 * §8): each downloaded, checked against its entry (size, SHA-256, its LSN), then applied; the
 * first that fails stops the step (the next poll tries it again, the state stays the last good
 * one).
 * @throws the first failure: IoError of the storage, an Error of the checks, a BatchError
 */
async function applyListed(options: FollowOptions, manifest: Manifest, target: ChangesTarget): Promise<number> {
  const snapshotLsn = manifest.current.lsn;
  if (snapshotLsn === undefined) return 0;
  const listed = manifest.changes ?? [];
  const pending = batchesAfter(listed, target.lsn() ?? snapshotLsn);
  target.published(snapshotLsn, pending.length === 0 ? null : Date.parse(pending[0].commitTime));
  for (const entry of pending) target.apply(await downloadBatch(options, entry));
  return pending.length;
}

/**
 * A version the supervisor of a `--workers` replica has downloaded and prepared (its private
 * copy in the shared cache), announced to its workers over the IPC channel: the copy, and its
 * manifest entry's LSN (null for a snapshot that is not live).
 */
export interface Announced {
  prepared: PreparedCopy;
  lsn: string | null;
}

/** What a worker of a `--workers` replica drives: its served snapshot, its batches, and the swap to an announced version. */
export interface SupervisedTarget {
  snapshotId: () => string;
  changes: ChangesTarget;
  /**
   * Serves the prepared copy, with `batches` (listed after it) applied before it serves;
   * rejects when it is refused (the old state keeps serving). `snapshotLsn` is the copy's LSN
   * (null for a snapshot that is not live).
   */
  reload: (fetched: FetchResult, batches: readonly ChangeBatch[], snapshotLsn: string | null) => Promise<void>;
}

/** A running worker's follower: told of each version its supervisor downloads; stopped on shutdown. */
export interface SupervisedFollower {
  /** The supervisor has this version ready: swap it in (with its batches) as soon as the manifest names it. */
  announce: (version: Announced) => void;
  stop: () => void;
}

/** A prepared copy as the server's reload takes it (a download's result, nothing downloaded here). */
function preparedResult(prepared: PreparedCopy): FetchResult {
  return { path: prepared.path, bytes: prepared.bytes, ms: 0, prepared };
}

/**
 * Follows `location` for a worker of a `--workers` replica (docs/live-replicas.md §8): the
 * supervisor alone downloads snapshots and announces each ({@link SupervisedFollower.announce});
 * the worker swaps an announced live snapshot in only together with the batches the manifest
 * lists after it, applied before it serves — never the snapshot alone — and applies the batches
 * of the snapshot it serves at every poll (`pollSeconds`, and at once after an announcement). A
 * snapshot that is not live swaps in as announced. One poll at a time; failures are logged (at
 * most once a minute when unchanged) and tried again at the next poll.
 */
export function followSupervised(target: SupervisedTarget, options: Omit<FollowOptions, "tracker" | "downloadsDir" | "cacheDir">): SupervisedFollower {
  let stopped = false;
  let timer: ReturnType<typeof setTimeout> | undefined;
  let polling = false;
  let again = false;
  let announced: Announced | null = null;
  let lastError = "";
  let lastLogged = 0;
  const poll = async () => {
    polling = true;
    again = false;
    const started = Date.now();
    try {
      const version = announced;
      if (version !== null && version.lsn === null && version.prepared.snapshotId !== target.snapshotId()) {
        await target.reload(preparedResult(version.prepared), [], null);
      } else {
        const manifest = await currentManifest(options as FollowOptions);
        const current = manifest.current.snapshotId;
        // the announced version with the batches listed after it, or nothing (the supervisor
        // announces the manifest's next version once it has it)
        if (version !== null && current === version.prepared.snapshotId && current !== target.snapshotId()) {
          await target.reload(preparedResult(version.prepared), await listedBatches(options, manifest), version.lsn);
        }
        if (current === target.snapshotId()) await applyListed(options as FollowOptions, manifest, target.changes);
      }
      lastError = "";
    } catch (error) {
      const message = (error as Error).message;
      if (!stopped && (message !== lastError || Date.now() - lastLogged > REPEAT_LOG_MS)) {
        options.logger.warn({ err: error, source: describeLocation(options.location) }, "applying the source's changes failed; still serving the last good state");
        lastError = message;
        lastLogged = Date.now();
      }
    }
    polling = false;
    if (!stopped) timer = setTimeout(() => void poll(), again ? 0 : Math.max(0, started + options.pollSeconds * 1000 - Date.now()));
  };
  timer = setTimeout(() => void poll(), options.pollSeconds * 1000);
  return {
    announce(version) {
      announced = version;
      if (stopped) return;
      if (polling) {
        again = true;
        return;
      }
      clearTimeout(timer);
      timer = setTimeout(() => void poll(), 0);
    },
    stop() {
      stopped = true;
      clearTimeout(timer);
    },
  };
}

/**
 * A worker's first state (docs/live-replicas.md §8): the snapshot its supervisor downloaded
 * (`prepare` makes its private copy) with the batches the manifest lists after it, applied
 * before the worker serves. While the manifest names another live snapshot (the supervisor
 * has not downloaded it yet) or cannot be read, the worker waits and tries again every
 * `pollSeconds`, saying so once in its log: it never serves a live snapshot without its
 * batches. A snapshot that is not live is served as it is.
 * @returns the copy, and a live snapshot's LSN and batches (none for one that is not live); null once `stopped()`
 */
export async function supervisedFirst(
  options: Omit<FollowOptions, "tracker" | "downloadsDir" | "cacheDir">,
  prepare: () => Promise<PreparedCopy>,
  stopped: () => boolean = () => false,
): Promise<{ prepared: PreparedCopy; live?: { snapshotLsn: string; batches: ChangeBatch[] } } | null> {
  let said = false;
  while (!stopped()) {
    const started = Date.now();
    const prepared = await prepare();
    try {
      const manifest = await currentManifest(options as FollowOptions);
      const lsn = manifest.current.lsn;
      if (lsn === undefined) return { prepared };
      if (manifest.current.snapshotId === prepared.snapshotId) return { prepared, live: { snapshotLsn: lsn, batches: await listedBatches(options, manifest) } };
      if (!said) options.logger.info({ snapshotId: prepared.snapshotId, published: manifest.current.snapshotId }, "the source names a newer snapshot than the supervisor's: waiting for it before serving");
    } catch (error) {
      if (!said) options.logger.warn({ err: error, source: describeLocation(options.location) }, "the batches after the snapshot cannot be read: waiting for them before serving");
    }
    said = true;
    await Bun.sleep(Math.max(0, started + options.pollSeconds * 1000 - Date.now()));
  }
  return null;
}

/** What a poll of the source is doing: named in the log line of its failure ({@link SourceTracker.failed}). */
interface PollStep {
  doing: string;
}

/** A poll's first step: the manifest read, and the snapshot it names reported to the tracker as published. */
async function readPublished(options: FollowOptions, step: PollStep): Promise<Manifest> {
  step.doing = `reading ${MANIFEST_KEY}`;
  const manifest = await currentManifest(options);
  options.tracker.published(manifest.current.snapshotId);
  return manifest;
}

/**
 * What a replica swaps in: the manifest's current snapshot downloaded (unless a refusal says to
 * wait, {@link fetchUnlessRefused}) and, with `withBatches`, a live table's batches listed after
 * it — they go in with it, so that the served state never goes back to the snapshot's LSN from
 * the one reached (docs/live-replicas.md §8).
 * @throws as {@link fetchUnlessRefused} and {@link listedBatches}, `step` naming the one that failed
 */
async function downloadCurrent(
  options: FollowOptions,
  manifest: Manifest,
  refusal: { current: Refusal | null },
  withBatches: boolean,
  step: PollStep,
): Promise<{ fetched: FetchResult; batches: ChangeBatch[] }> {
  const entry = manifest.current;
  step.doing = `downloading snapshot ${entry.snapshotId}`;
  const fetched = await fetchUnlessRefused(options, entry, refusal);
  step.doing = `downloading the changes after ${entry.lsn}`;
  const batches = withBatches ? await listedBatches(options, manifest) : [];
  return { fetched, batches };
}

/** A replica's first snapshot, downloaded and verified, its manifest entry, and the batches listed after it (a live table's). */
export interface FirstSnapshot extends FetchResult {
  entry: ManifestEntry;
  /** Downloaded and checked, in order: applied before the replica serves (none when the snapshot is not live). */
  batches: ChangeBatch[];
}

/**
 * A replica's first snapshot: the manifest's current version downloaded (with a live table's
 * batches listed after it, {@link listedBatches}), tried again every
 * `pollSeconds` while nothing is published yet or anything fails (each failure logged, see
 * {@link SourceTracker.failed}), until `stopped()` says to give up (then resolves null).
 */
export async function waitForFirst(options: FollowOptions, stopped: () => boolean = () => false): Promise<FirstSnapshot | null> {
  const refusal = { current: null as Refusal | null };
  while (!stopped()) {
    const started = Date.now();
    const step: PollStep = { doing: "" };
    try {
      const manifest = await readPublished(options, step);
      const { fetched, batches } = await downloadCurrent(options, manifest, refusal, true, step);
      options.tracker.succeeded(manifest.current.snapshotId, true);
      return { ...fetched, entry: manifest.current, batches };
    } catch (error) {
      options.tracker.failed(error, step.doing, null);
    }
    await Bun.sleep(Math.max(0, started + options.pollSeconds * 1000 - Date.now()));
  }
  return null;
}

/** What a follower drives: the served snapshot's id, and the swap to a downloaded version. */
export interface FollowTarget {
  snapshotId: () => string;
  /** A live table's change batches, applied to the served snapshot (absent: snapshots only). */
  changes?: ChangesTarget;
  /**
   * Serves the downloaded version (the server's reload, or the workers'), with `batches` (a live
   * table's, listed after it) applied before it serves, resolving once it is in; rejects when it
   * is refused (the old version keeps serving). `entry` is its manifest entry (a supervisor
   * announces its LSN to its workers).
   */
  reload: (fetched: FetchResult, batches: readonly ChangeBatch[], entry: ManifestEntry) => Promise<void>;
}

/**
 * Polls `location`'s manifest every `pollSeconds` (from one poll's start to the next; a poll
 * that takes longer is followed at once); when it names another snapshot than the one served,
 * downloads it and has `target` swap it in. One poll at a time, each step under the time limit,
 * every failure logged and retried at the next poll (a refused download after a wait, see
 * {@link Refusal}).
 * @returns a function that stops the polling
 */
export function followSource(target: FollowTarget, options: FollowOptions): () => void {
  let stopped = false;
  const refusal = { current: null as Refusal | null };
  let timer: ReturnType<typeof setTimeout> | undefined;
  const poll = async () => {
    const started = Date.now();
    const step: PollStep = { doing: "" };
    try {
      const manifest = await readPublished(options, step);
      const entry = manifest.current;
      if (entry.snapshotId !== target.snapshotId()) {
        const { fetched, batches } = await downloadCurrent(options, manifest, refusal, target.changes !== undefined, step);
        step.doing = `loading snapshot ${entry.snapshotId}`;
        if (!stopped) await target.reload(fetched, batches, entry);
      }
      if (target.changes !== undefined && !stopped && entry.snapshotId === target.snapshotId()) {
        step.doing = `applying the changes after ${target.changes.lsn() ?? entry.lsn}`;
        await applyListed(options, manifest, target.changes);
      }
      options.tracker.succeeded(entry.snapshotId, entry.snapshotId === target.snapshotId());
    } catch (error) {
      // A poll cut short by the shutdown is no failure.
      if (!stopped) options.tracker.failed(error, step.doing, target.snapshotId());
    }
    if (!stopped) timer = setTimeout(() => void poll(), Math.max(0, started + options.pollSeconds * 1000 - Date.now()));
  };
  timer = setTimeout(() => void poll(), options.pollSeconds * 1000);
  return () => {
    stopped = true;
    clearTimeout(timer);
  };
}
