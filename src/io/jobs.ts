/**
 * The jobs an I/O thread runs (io/threads.ts): storage operations, a replica's download, the
 * preparation of a private copy, the checks of `snapshot publish`, and cache pruning. Each runs
 * with blocking file calls on its own thread and reports progress (bytes) as it goes; a step
 * that reads a whole file without reporting (the loader's verification) first says how long it
 * may stay silent.
 */
import { createHash } from "node:crypto";
import { closeSync, mkdirSync, readdirSync, renameSync } from "node:fs";
import { join } from "node:path";
import { IoError, fileError } from "../files/errors.ts";
import { isMissing, openRegular, readInSlices, removeQuietly } from "../files/blocking.ts";
import { SnapshotError, loadSnapshot } from "../snapshot/load.ts";
import { type PreparedCopy, type Pruned, preparePrivateCopy, pruneCache } from "../snapshot/private-copy.ts";
import { isRunning } from "../snapshot/write.ts";
import { type ObjectDigest, openStorage } from "./storage.ts";

/** The file a replica serves inside its downloads directory (replaced by rename on each new version). */
export const SERVED_FILE = "current.snap";

/**
 * Slowest rate a whole-file step without progress reports (a copy in the kernel, a
 * verification) is allowed, in bytes per ms (50 MB/s, a slow disk): such a step may stay
 * silent for its size over this rate, on top of the time limit.
 */
const SILENT_BYTES_PER_MS = 50_000;

/** Calls back with bytes done; `quietMs`: how long the next step may take without a call. */
export type Progress = (bytes: number, quietMs?: number) => void;

/** A published snapshot as a download needs it (publish.ts `ManifestEntry`, validated). */
export interface FetchEntry {
  snapshotId: string;
  key: string;
  bytes: number;
  sha256: string;
}

/** The jobs, by kind. */
export type Job =
  | { kind: "read"; location: string; key: string }
  | { kind: "size"; location: string; key: string }
  | { kind: "list"; location: string; prefix: string }
  | { kind: "remove"; location: string; key: string }
  | { kind: "replace"; location: string; key: string; bytes: Uint8Array }
  | { kind: "upload"; location: string; key: string; file: string }
  | { kind: "digest"; location: string; key: string }
  | { kind: "fetch"; location: string; entry: FetchEntry; downloadsDir: string; cacheDir: string; verify: boolean }
  | { kind: "prepare"; source: string; cacheDir: string; verify: boolean; owned: boolean; fallback: boolean }
  | { kind: "inspect"; path: string }
  | { kind: "sha256"; path: string }
  | { kind: "prune"; cacheDir: string; keep: string[] };

/** A replica's verified download, ready to serve. */
export interface FetchResult {
  /** The served file, `<downloadsDir>/current.snap`. */
  path: string;
  /** Bytes downloaded, and the time the download and its checks took, in ms. */
  bytes: number;
  ms: number;
  /** Its private copy in the cache (a link of the download), verified. */
  prepared: PreparedCopy;
}

/** What `snapshot publish` learns of a file it checked (every section verified). */
export interface InspectResult {
  snapshotId: string;
  rows: number;
  createdAt: string;
  bytes: number;
}

/** The result of each kind of job. */
export type JobResult<J extends Job> = J["kind"] extends "read"
  ? Uint8Array | null
  : J["kind"] extends "size"
    ? number | null
    : J["kind"] extends "list"
      ? string[]
      : J["kind"] extends "remove" | "replace" | "upload"
        ? null
        : J["kind"] extends "digest"
          ? ObjectDigest | null
          : J["kind"] extends "fetch"
            ? FetchResult
            : J["kind"] extends "prepare"
              ? PreparedCopy
              : J["kind"] extends "inspect"
                ? InspectResult
                : J["kind"] extends "sha256"
                  ? ObjectDigest
                  : J["kind"] extends "prune"
                    ? Pruned
                    : never;

/** How long verifying a file of `bytes` may stay silent, in ms. */
function silentMs(bytes: number): number {
  return Math.ceil(bytes / SILENT_BYTES_PER_MS);
}

/**
 * Runs one job on the calling thread (an I/O thread).
 * @throws IoError, SnapshotError: whatever the operation meets, naming its location
 */
export async function runJob(job: Job, progress: Progress): Promise<unknown> {
  switch (job.kind) {
    case "read":
      return openStorage(job.location).read(job.key);
    case "size":
      return openStorage(job.location).size(job.key);
    case "list":
      return openStorage(job.location).list(job.prefix);
    case "remove":
      await openStorage(job.location).remove(job.key);
      return null;
    case "replace":
      await openStorage(job.location).replace(job.key, job.bytes);
      return null;
    case "upload":
      await openStorage(job.location).upload(job.key, job.file, (bytes) => progress(bytes));
      return null;
    case "digest":
      return openStorage(job.location).digest(job.key, (bytes) => progress(bytes));
    case "fetch":
      return fetchSnapshot(job, progress);
    case "prepare":
      return preparePrivateCopy(job.source, job.cacheDir, {
        verify: job.verify,
        owned: job.owned,
        fallback: job.fallback,
        // the copy and the verification each read the whole file without reporting
        onProgress: (done, ahead) => progress(done, silentMs(ahead)),
      });
    case "inspect": {
      const { size } = statRegular(job.path);
      progress(0, silentMs(size));
      const { header, bytes } = loadSnapshot(job.path);
      return { snapshotId: header.checksum, rows: header.rowCount, createdAt: header.createdAt, bytes } satisfies InspectResult;
    }
    case "sha256":
      return sha256File(job.path, progress);
    case "prune":
      return pruneCache(job.cacheDir, job.keep);
  }
}

/** A regular file's size (refusing a FIFO before anything opens it for real). */
function statRegular(path: string): { size: number } {
  let opened: ReturnType<typeof openRegular>;
  try {
    opened = openRegular(path);
  } catch (error) {
    if (isMissing(error)) throw new SnapshotError(path, "cannot open the file (it does not exist)");
    throw error;
  }
  closeSync(opened.fd);
  return { size: opened.stats.size };
}

/** SHA-256 of a local regular file, read in slices. */
function sha256File(path: string, progress: Progress): ObjectDigest {
  const { fd, stats } = openRegular(path);
  const hash = createHash("sha256");
  let at: number;
  try {
    at = readInSlices(fd, stats.size, (slice) => hash.update(slice), progress);
  } catch (error) {
    throw fileError(error, `reading ${path}`);
  } finally {
    closeSync(fd);
  }
  return { bytes: at, sha256: hash.digest("hex") };
}

/** Downloads left behind by a process that is gone: `<snapshotId>.<pid>.download`. */
function removeStaleDownloads(dir: string): void {
  let names: string[];
  try {
    names = readdirSync(dir);
  } catch {
    return;
  }
  for (const name of names) {
    const match = /^[0-9a-f]{16}\.(\d+)\.download$/.exec(name);
    if (match !== null && (Number(match[1]) === process.pid || !isRunning(Number(match[1])))) removeQuietly(join(dir, name));
  }
}

/**
 * A replica's download of a published snapshot: streamed into `<downloadsDir>/<id>.<pid>.download`
 * while hashed (refused unless its size and SHA-256 are the manifest's), its sections verified,
 * then renamed to {@link SERVED_FILE} and linked into the cache as the private copy, with its
 * verification recorded (so the server maps it without reading it again). Any failure removes
 * the partial file and leaves the served file as it was.
 */
async function fetchSnapshot(job: Extract<Job, { kind: "fetch" }>, progress: Progress): Promise<FetchResult> {
  const { entry, downloadsDir } = job;
  const storage = openStorage(job.location);
  try {
    mkdirSync(downloadsDir, { recursive: true, mode: 0o700 });
  } catch (error) {
    throw fileError(error, `creating the downloads directory ${downloadsDir}`);
  }
  removeStaleDownloads(downloadsDir);
  const temporary = join(downloadsDir, `${entry.snapshotId}.${process.pid}.download`);
  const served = join(downloadsDir, SERVED_FILE);
  const started = performance.now();
  let digest: ObjectDigest;
  try {
    digest = await storage.download(entry.key, temporary, { expectedBytes: entry.bytes, onProgress: (bytes) => progress(bytes, bytes >= entry.bytes ? silentMs(entry.bytes) : 0) });
    if (digest.bytes !== entry.bytes || digest.sha256 !== entry.sha256) {
      throw new IoError(
        "checksum",
        `download of ${entry.key} from ${storage.description} refused: ${digest.bytes} bytes, SHA-256 ${digest.sha256}; the manifest says ${entry.bytes} bytes, ${entry.sha256}`,
      );
    }
    // The sections too, before the download may replace the file a restarting process loads.
    let loaded: ReturnType<typeof loadSnapshot> | null = loadSnapshot(temporary, { verify: job.verify });
    if (loaded.header.checksum !== entry.snapshotId) throw new SnapshotError(temporary, `its snapshot id is ${loaded.header.checksum}, the manifest says ${entry.snapshotId}`);
    loaded = null;
    renameSync(temporary, served);
  } catch (error) {
    removeQuietly(temporary);
    if (error instanceof SnapshotError && error.file === temporary) throw new SnapshotError(`${entry.key} from ${storage.description}`, error.reason);
    throw error;
  }
  const prepared = preparePrivateCopy(served, job.cacheDir, { verify: job.verify, owned: true, verified: true });
  return { path: served, bytes: digest.bytes, ms: performance.now() - started, prepared };
}
