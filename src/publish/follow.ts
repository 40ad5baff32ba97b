/**
 * A replica that follows a published location (`serve --source LOCATION --poll SECONDS`): it
 * downloads the manifest's current snapshot into a local directory, checking its SHA-256 and
 * size while the bytes stream in, serves it, and polls the manifest; a new version is
 * downloaded beside the served one, renamed into place and swapped in by the server's reload
 * (in-flight requests finish on the version they started on). A bad download or a snapshot the
 * loader refuses is logged and the old version keeps serving.
 */
import { createHash } from "node:crypto";
import { mkdirSync, readdirSync, renameSync, rmSync } from "node:fs";
import { join } from "node:path";
import type { Logger } from "pino";
import { type ManifestEntry, readManifest } from "./publish.ts";
import { openStorage } from "./storage.ts";

/** The file a replica serves inside its directory (replaced by rename on each new version). */
export const SERVED_FILE = "current.snap";

/**
 * Downloads `entry`'s snapshot from `location` into `dir` as {@link SERVED_FILE}: streamed into
 * a temporary file while hashed; renamed into place only when its size and SHA-256 are the
 * manifest's.
 * @returns the served file's path, and the download's size in bytes and time in ms
 * @throws Error on a checksum or size mismatch (the temporary file is removed), storage errors
 */
export async function downloadSnapshot(location: string, entry: ManifestEntry, dir: string): Promise<{ path: string; bytes: number; ms: number }> {
  mkdirSync(dir, { recursive: true });
  const storage = openStorage(location);
  const temporary = join(dir, `${entry.snapshotId}.${process.pid}.download`);
  const hash = createHash("sha256");
  let bytes = 0;
  const started = performance.now();
  try {
    await storage.download(entry.key, temporary, (chunk) => {
      hash.update(chunk);
      bytes += chunk.length;
    });
    const sha256 = hash.digest("hex");
    if (bytes !== entry.bytes || sha256 !== entry.sha256) {
      throw new Error(`download of ${entry.key} from ${location} refused: ${bytes} bytes, SHA-256 ${sha256}; the manifest says ${entry.bytes} bytes, ${entry.sha256}`);
    }
    const path = join(dir, SERVED_FILE);
    renameSync(temporary, path);
    // earlier downloads left behind by a crash
    for (const name of readdirSync(dir)) if (name.endsWith(".download")) rmSync(join(dir, name), { force: true });
    return { path, bytes, ms: performance.now() - started };
  } catch (error) {
    rmSync(temporary, { force: true });
    throw error;
  }
}

/**
 * The manifest's current version at `location`, downloaded into `dir` (a replica's start).
 * @throws Error when nothing is published there, or as {@link downloadSnapshot}
 */
export async function fetchCurrent(location: string, dir: string, logger: Logger): Promise<{ path: string; entry: ManifestEntry }> {
  const manifest = await readManifest(openStorage(location));
  if (manifest === null) throw new Error(`${location}: nothing published (no manifest.json)`);
  const { path, bytes, ms } = await downloadSnapshot(location, manifest.current, dir);
  logger.info({ source: location, snapshotId: manifest.current.snapshotId, bytes, ms: Math.round(ms) }, "snapshot downloaded");
  return { path, entry: manifest.current };
}

/** What a follower drives: the served snapshot's id, and a reload of the served file. */
export interface FollowTarget {
  snapshotId: () => string;
  /** Loads the served file again and swaps it in; throws when the loader refuses it. */
  reload: () => void;
}

/**
 * Polls `location`'s manifest every `pollSeconds`; when it names another snapshot than the one
 * served, downloads it into `dir` and reloads. One poll at a time; failures are logged and
 * retried at the next poll.
 * @returns a function that stops the polling
 */
export function followSource(target: FollowTarget, location: string, dir: string, pollSeconds: number, logger: Logger): () => void {
  let busy = false;
  const poll = async () => {
    if (busy) return;
    busy = true;
    try {
      const manifest = await readManifest(openStorage(location));
      if (manifest === null || manifest.current.snapshotId === target.snapshotId()) return;
      const entry = manifest.current;
      const { bytes, ms } = await downloadSnapshot(location, entry, dir);
      logger.info({ source: location, snapshotId: entry.snapshotId, bytes, ms: Math.round(ms) }, "snapshot downloaded");
      target.reload();
    } catch (error) {
      logger.error({ err: error, source: location }, "following the source failed; still serving the previous snapshot");
    } finally {
      busy = false;
    }
  };
  const timer = setInterval(() => void poll(), pollSeconds * 1000);
  return () => clearInterval(timer);
}

/**
 * A replica's first snapshot: {@link fetchCurrent}, tried again every `pollSeconds` while
 * nothing is published at `location` yet or the download fails (each failure logged).
 */
export async function waitForFirst(location: string, dir: string, pollSeconds: number, logger: Logger): Promise<{ path: string; entry: ManifestEntry }> {
  for (;;) {
    try {
      return await fetchCurrent(location, dir, logger);
    } catch (error) {
      logger.warn({ err: error, source: location }, "no snapshot to serve yet; trying again");
      await Bun.sleep(pollSeconds * 1000);
    }
  }
}
