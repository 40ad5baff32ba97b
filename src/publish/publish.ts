/**
 * Publishing snapshots for replicas (`snapshot publish F --to LOCATION`, `snapshot rollback`):
 * each snapshot is uploaded under a content-addressed key, `snapshots/<snapshotId>.snap`, then
 * the manifest, `manifest.json`, is replaced in one step to name it, with the versions before
 * it kept (and their objects) for a rollback. A reader of the manifest sees the old version or
 * the new one, and the object it names is complete before the manifest names it.
 *
 * Every storage operation runs on an I/O thread under a time limit (io/remote.ts); an object
 * already at its key is kept only when its size and SHA-256, read back, are the file's, and is
 * uploaded again otherwise. A manifest is validated before anything trusts it: its ids name
 * files in a replica's cache, its sizes and checksums are what downloads are checked against.
 */
import { createHash } from "node:crypto";
import { createReadStream } from "node:fs";
import { IoError } from "../files/errors.ts";
import { type StorageOps, threadedStorage } from "../io/remote.ts";
import { DEFAULT_IO_TIMEOUT_MS, type FileThreads, createFileThreads } from "../io/threads.ts";
import type { ObjectDigest } from "../io/storage.ts";
import { SNAPSHOT_ID } from "../snapshot/private-copy.ts";
import { type BatchEntry, CHANGES_PREFIX, batchKey, batchesAfter, parseBatchEntries } from "../live/batches.ts";
import { lsnValue } from "../live/changes.ts";

/** The manifest's key under a location. */
export const MANIFEST_KEY = "manifest.json";

/** Versions kept before the current one (their snapshots stay for a rollback). */
export const KEPT_VERSIONS = 5;

/** Largest manifest read, in bytes (one holds a handful of entries: a few KiB). */
const MAX_MANIFEST_BYTES = 1 << 20;

/** One published snapshot, as the manifest names it. */
export interface ManifestEntry {
  /** The snapshot id (its header checksum): 16 hex digits. */
  snapshotId: string;
  /** The object's key under the location: `snapshots/<snapshotId>.snap`. */
  key: string;
  /** SHA-256 of the whole file, 64 hex digits: what a replica checks while it downloads. */
  sha256: string;
  /** File size, in bytes (a positive integer). */
  bytes: number;
  /** Rows in the snapshot. */
  rows: number;
  /** When the snapshot was built (its header's `createdAt`), ISO 8601. */
  createdAt: string;
  /** When it was published, ISO 8601. */
  publishedAt: string;
  /**
   * A live table's snapshot (`snapshot follow`, docs/live-replicas.md): the LSN of the last
   * commit it holds; the manifest's `changes` apply after it.
   */
  lsn?: string;
}

/**
 * The manifest: the current version, the ones before it (newest first), and, for a live table,
 * the change batches published after the current snapshot, in LSN order (live/batches.ts).
 */
export interface Manifest {
  current: ManifestEntry;
  previous: ManifestEntry[];
  changes?: BatchEntry[];
}

/** SHA-256 of a file, hex, read as a stream. */
export async function fileSha256(path: string): Promise<string> {
  const hash = createHash("sha256");
  for await (const chunk of createReadStream(path, { highWaterMark: 4 << 20 })) hash.update(chunk as Buffer);
  return hash.digest("hex");
}

/**
 * What is wrong with one entry of a manifest, or null: an id of 16 hex digits, the key named
 * after it, a SHA-256 of 64 hex digits, a positive integer size, a row count, ISO dates.
 */
function entryProblem(entry: unknown): string | null {
  if (typeof entry !== "object" || entry === null) return "is not an object";
  const e = entry as Record<string, unknown>;
  if (typeof e.snapshotId !== "string" || !SNAPSHOT_ID.test(e.snapshotId)) return `has a snapshotId that is not 16 hex digits (${JSON.stringify(e.snapshotId)?.slice(0, 80)})`;
  if (e.key !== `snapshots/${e.snapshotId}.snap`) return `has key ${JSON.stringify(e.key)?.slice(0, 80)}, not snapshots/${e.snapshotId}.snap`;
  if (typeof e.sha256 !== "string" || !/^[0-9a-f]{64}$/.test(e.sha256)) return "has no SHA-256 (64 hex digits)";
  if (typeof e.bytes !== "number" || !Number.isSafeInteger(e.bytes) || e.bytes <= 0) return "has no size in bytes (a positive integer)";
  if (typeof e.rows !== "number" || !Number.isSafeInteger(e.rows) || e.rows < 0) return "has no row count";
  for (const field of ["createdAt", "publishedAt"]) {
    if (typeof e[field] !== "string" || Number.isNaN(Date.parse(e[field] as string))) return `has no ${field} date`;
  }
  if (e.lsn !== undefined && (typeof e.lsn !== "string" || !LSN_TEXT.test(e.lsn))) return "has an lsn that is not X/Y (hex)";
  return null;
}

/** An LSN as the manifest writes it. */
const LSN_TEXT = /^[0-9A-F]{1,8}\/[0-9A-F]{1,8}$/;

/**
 * Parses and validates a manifest (see {@link ManifestEntry} for each field's rule).
 * @param where the location, for messages
 * @throws IoError `bad_manifest` naming the location and the first problem
 */
export function parseManifest(bytes: Uint8Array, where: string): Manifest {
  const fail = (problem: string): never => {
    throw new IoError("bad_manifest", `${where}: ${MANIFEST_KEY} is not a valid manifest: ${problem}; nothing in it is used`);
  };
  let manifest: unknown;
  try {
    manifest = JSON.parse(new TextDecoder().decode(bytes));
  } catch (error) {
    return fail(`it is not JSON (${(error as Error).message})`);
  }
  const m = manifest as Partial<Manifest> | null;
  if (typeof m !== "object" || m === null) return fail("it is not an object");
  const current = entryProblem(m.current);
  if (current !== null) fail(`current ${current}`);
  if (!Array.isArray(m.previous)) fail("previous is not a list");
  (m.previous as unknown[]).forEach((entry, i) => {
    const problem = entryProblem(entry);
    if (problem !== null) fail(`previous[${i}] ${problem}`);
  });
  if (m.changes !== undefined) {
    if (m.current?.lsn === undefined) fail("it lists changes after a snapshot without an lsn");
    let changes: BatchEntry[] = [];
    try {
      changes = parseBatchEntries(m.changes, where);
    } catch (error) {
      fail((error as Error).message);
    }
    for (const entry of changes) if (entry.key !== batchKey(entry.firstLsn, entry.lsn)) fail(`changes entry ${JSON.stringify(entry.key).slice(0, 80)} is not named after its LSNs`);
    if (changes.length > 0 && lsnValue(changes[0].firstLsn) <= lsnValue(m.current?.lsn as string)) fail("its first batch is not after the current snapshot's lsn");
  }
  return m as Manifest;
}

/**
 * The manifest at a location, validated, or null when none was published.
 * @throws IoError `bad_manifest` for one that is not valid; `missing_location` when the
 *   directory itself is gone; the storage's errors
 */
export async function readManifest(storage: Pick<StorageOps, "read" | "description">): Promise<Manifest | null> {
  const bytes = await storage.read(MANIFEST_KEY);
  if (bytes === null) return null;
  if (bytes.length > MAX_MANIFEST_BYTES) throw new IoError("bad_manifest", `${storage.description}: ${MANIFEST_KEY} is ${bytes.length} bytes, not a manifest`);
  return parseManifest(bytes, storage.description);
}

/** {@link readManifest} for a publisher: a directory that does not exist yet holds nothing (the first upload creates it). */
function manifestToReplace(storage: StorageOps): Promise<Manifest | null> {
  return readManifest(storage).catch((error: unknown) => {
    if (error instanceof IoError && error.reason === "missing_location") return null;
    throw error;
  });
}

/**
 * Writes the manifest, then removes the batch objects it no longer names and, unless
 * `snapshots` is false, the snapshot objects too (a batch's commit names the same snapshots as
 * the manifest before it, and must not remove one being uploaded meanwhile: see
 * {@link withManifest}).
 */
async function commit(storage: StorageOps, manifest: Manifest, snapshots = true): Promise<void> {
  await storage.replace(MANIFEST_KEY, new TextEncoder().encode(`${JSON.stringify(manifest, null, 2)}\n`));
  const named = new Set([manifest.current.key, ...manifest.previous.map((e) => e.key), ...(manifest.changes ?? []).map((e) => e.key)]);
  if (snapshots) for (const key of await storage.list("snapshots")) if (!named.has(key)) await storage.remove(key);
  for (const key of await storage.list(CHANGES_PREFIX)) if (!named.has(key)) await storage.remove(key);
}

/** The manifest changes under way in this process, per location (see {@link withManifest}). */
const manifestQueues = new Map<string, Promise<unknown>>();

/**
 * Runs `change` — a read of the manifest, the objects it names, and its commit — after every
 * other change of the same location's manifest in this process has ended, so that two never
 * interleave: `snapshot follow` publishes batches while a compaction publishes a snapshot, and
 * a manifest written from a read made before the other's commit would drop what the other
 * listed (a batch lost, its object removed). Uploads of snapshots run outside it.
 */
async function withManifest<T>(location: string, change: () => Promise<T>): Promise<T> {
  const before = manifestQueues.get(location) ?? Promise.resolve();
  const run = before.then(change, change);
  const settled = run.catch(() => {});
  manifestQueues.set(location, settled);
  try {
    return await run;
  } finally {
    if (manifestQueues.get(location) === settled) manifestQueues.delete(location);
  }
}

/** An object found at its key that is not the file being published: what was there. */
export interface Repair {
  key: string;
  /** Its size and SHA-256, or null when it was missing. */
  found: ObjectDigest | null;
}

/** Options of {@link publishSnapshot} and {@link rollbackSnapshot}. */
export interface PublishOptions {
  /** The I/O threads to run on (default: threads of its own, closed at the end). */
  threads?: FileThreads;
  /** Longest time an operation may make no progress, in ms (default {@link DEFAULT_IO_TIMEOUT_MS}). */
  timeoutMs?: number;
  /** Told when an object at its key did not match and is uploaded again. */
  onRepair?: (repair: Repair) => void;
}

/** Runs `work` on the given threads, or on threads of its own closed afterwards. */
async function withThreads<T>(options: PublishOptions, work: (threads: FileThreads, timeoutMs: number) => Promise<T>): Promise<T> {
  const threads = options.threads ?? createFileThreads();
  try {
    return await work(threads, options.timeoutMs ?? DEFAULT_IO_TIMEOUT_MS);
  } finally {
    if (options.threads === undefined) threads.close();
  }
}

/**
 * Makes the object at `entry.key` hold `file`: kept when its size and SHA-256 (read back from
 * the storage) are the entry's; uploaded otherwise (a repair is reported and read back once more).
 * @throws IoError `checksum` when a repaired object still does not match; the storage's errors
 */
async function ensureObject(storage: StorageOps, entry: ManifestEntry, file: string, onRepair?: (repair: Repair) => void): Promise<void> {
  const size = await storage.size(entry.key);
  let repair = false;
  if (size !== null) {
    const found = await storage.digest(entry.key);
    if (found !== null && found.bytes === entry.bytes && found.sha256 === entry.sha256) return;
    onRepair?.({ key: entry.key, found });
    repair = true;
  }
  await storage.upload(entry.key, file);
  if (!repair) return;
  const after = await storage.digest(entry.key);
  if (after === null || after.bytes !== entry.bytes || after.sha256 !== entry.sha256) {
    throw new IoError("checksum", `${storage.description}: ${entry.key} still does not match the file after it was uploaded again (${after === null ? "missing" : `${after.bytes} bytes, SHA-256 ${after.sha256}`})`);
  }
}

/**
 * Publishes the snapshot file `path` to `location` (a directory or `s3://bucket/prefix`): checks
 * it loads (every section's checksum), makes sure the object at its key holds exactly this file
 * (uploading it, or again when what is there differs), then names it in the manifest.
 * Publishing the current snapshot again changes nothing but a damaged object.
 * @returns the manifest now at the location
 * @throws SnapshotError for a file that is not a loadable snapshot; IoError for the storage
 *   (`no_space`, `timeout`, `unreachable`, `bad_manifest`…), the location named in its message
 */
export async function publishSnapshot(path: string, location: string, now = new Date(), options: PublishOptions = {}, lsn?: string): Promise<Manifest> {
  return withThreads(options, async (threads, timeoutMs) => {
    const checked = await threads.run({ kind: "inspect", path }, { timeoutMs, label: `checking ${path}` });
    const { sha256 } = await threads.run({ kind: "sha256", path }, { timeoutMs, label: `hashing ${path}` });
    const storage = threadedStorage(threads, location, timeoutMs);
    const entry: ManifestEntry = {
      snapshotId: checked.snapshotId,
      key: `snapshots/${checked.snapshotId}.snap`,
      sha256,
      bytes: checked.bytes,
      rows: checked.rows,
      createdAt: checked.createdAt,
      publishedAt: now.toISOString(),
      ...(lsn === undefined ? {} : { lsn }),
    };
    await ensureObject(storage, entry, path, options.onRepair);
    // the manifest as it is once the object is there (batches may have been published meanwhile)
    return withManifest(location, async () => {
      const before = await manifestToReplace(storage);
      if (before !== null && before.current.snapshotId === entry.snapshotId && before.current.lsn === entry.lsn) return before;
      const previous = before === null ? [] : [before.current, ...before.previous].filter((e) => e.snapshotId !== entry.snapshotId).slice(0, KEPT_VERSIONS);
      // a live snapshot keeps the batches published after its LSN (compaction went on while they were)
      const changes = lsn === undefined ? [] : batchesAfter(before?.changes ?? [], lsn);
      const manifest: Manifest = lsn === undefined ? { current: entry, previous } : { current: entry, previous, changes };
      await commit(storage, manifest);
      return manifest;
    });
  });
}

/**
 * Publishes a change batch of a live table (docs/live-replicas.md §7): its object under
 * `changes/`, then the manifest listing it after the others. A batch already listed (the same
 * key: a publisher that restarted before confirming it sends it again) changes nothing.
 * @returns the manifest now at the location
 * @throws Error when the location holds no live snapshot, or the batch is not after the last
 *   one listed; IoError as {@link publishSnapshot}
 */
export async function publishBatch(location: string, entry: BatchEntry, bytes: Uint8Array, options: PublishOptions = {}): Promise<Manifest> {
  return withThreads(options, async (threads, timeoutMs) => {
    const storage = threadedStorage(threads, location, timeoutMs);
    return withManifest(location, async () => {
      const before = await readManifest(storage);
      if (before === null || before.current.lsn === undefined) throw new Error(`${storage.description}: no live snapshot is published there (snapshot follow publishes one first)`);
      const changes = before.changes ?? [];
      if (changes.some((c) => c.key === entry.key)) return before;
      const last = changes.length > 0 ? changes[changes.length - 1].lsn : before.current.lsn;
      if (lsnValue(entry.firstLsn) <= lsnValue(last)) throw new Error(`${storage.description}: batch ${entry.key} is not after ${last}`);
      await storage.replace(entry.key, bytes);
      const manifest: Manifest = { ...before, changes: [...changes, entry] };
      // the same snapshots as before: one uploaded meanwhile (not named yet) stays
      await commit(storage, manifest, false);
      return manifest;
    });
  });
}

/**
 * Makes an earlier version current again: the one before the current (default), or the one
 * with `snapshotId`. The version it replaces goes to the front of the earlier ones.
 * @returns the manifest now at the location
 * @throws Error when nothing was published, or no earlier version matches; IoError as
 *   {@link publishSnapshot}
 */
export async function rollbackSnapshot(location: string, snapshotId?: string, options: PublishOptions = {}): Promise<Manifest> {
  return withThreads(options, async (threads, timeoutMs) => {
    const storage = threadedStorage(threads, location, timeoutMs);
    const before = await manifestToReplace(storage);
    if (before === null) throw new Error(`${storage.description}: nothing published (no ${MANIFEST_KEY})`);
    const index = snapshotId === undefined ? 0 : before.previous.findIndex((e) => e.snapshotId === snapshotId);
    const target = before.previous[index];
    if (target === undefined || index < 0) {
      throw new Error(
        snapshotId === undefined
          ? `${storage.description}: no earlier version to roll back to`
          : `${storage.description}: no earlier version ${snapshotId} (kept: ${before.previous.map((e) => e.snapshotId).join(", ") || "none"})`,
      );
    }
    const previous = [before.current, ...before.previous.filter((_, i) => i !== index)];
    const manifest: Manifest = { current: target, previous };
    await commit(storage, manifest);
    return manifest;
  });
}
