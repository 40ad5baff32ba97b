/**
 * `snapshot follow`'s side of a location and of PostgreSQL (live-publisher.ts `LiveLocation`,
 * `SnapshotMaker`): the manifest's live state read back (the current snapshot from the publisher's
 * work directory, or downloaded into it, and the listed batches, checked), snapshots and batches
 * published through publish.ts, first snapshots built from the slot's exported snapshot, and
 * compactions run in a worker thread.
 */
import { existsSync, mkdirSync, readdirSync, renameSync, rmSync } from "node:fs";
import { join } from "node:path";
import { describeLocation } from "../io/storage.ts";
import { threadedStorage } from "../io/remote.ts";
import type { FileThreads } from "../io/threads.ts";
import { checkedBatch } from "../live/batches.ts";
import { loadSnapshot } from "../snapshot/load.ts";
import { type TableOptions, buildSnapshotFromPostgres } from "../snapshot/build-file.ts";
import { compactInWorker } from "./compact-file.ts";
import type { LiveLocation, SnapshotMaker } from "./live-publisher.ts";
import { publishBatch, publishSnapshot, readManifest } from "./publish.ts";

/** Snapshot files kept in the work directory besides the current one (the newest). */
const KEPT_FILES = 2;

/** The snapshot file of an id in the work directory. */
function snapshotFile(workDir: string, snapshotId: string): string {
  return join(workDir, `${snapshotId}.snap`);
}

/** Removes the work directory's snapshot files but the newest {@link KEPT_FILES} and `keep`. */
function pruneWork(workDir: string, keep: string): void {
  const files = readdirSync(workDir)
    .filter((name) => name.endsWith(".snap"))
    .map((name) => join(workDir, name))
    .filter((path) => path !== keep);
  files.sort((a, b) => Bun.file(b).lastModified - Bun.file(a).lastModified);
  for (const path of files.slice(KEPT_FILES - 1)) rmSync(path, { force: true });
}

/**
 * A publisher's location: the manifest's live state and its publication, on `threads`.
 * @param workDir where the publisher keeps its snapshot files (built or downloaded)
 */
export function liveLocation(location: string, workDir: string, threads: FileThreads, timeoutMs: number): LiveLocation {
  mkdirSync(workDir, { recursive: true });
  const storage = () => threadedStorage(threads, location, timeoutMs);
  return {
    async current() {
      const manifest = await readManifest(storage());
      if (manifest === null || manifest.current.lsn === undefined) return null;
      const entry = manifest.current;
      const lsn = manifest.current.lsn;
      let path = snapshotFile(workDir, entry.snapshotId);
      if (!existsSync(path)) {
        const fetched = await threads.run(
          { kind: "fetch", location, entry, downloadsDir: join(workDir, "downloads"), cacheDir: join(workDir, "copies"), verify: true },
          { timeoutMs, label: `downloading ${entry.key} from ${describeLocation(location)}` },
        );
        path = fetched.path;
      }
      const batches = [];
      for (const listed of manifest.changes ?? []) {
        const bytes = await storage().read(listed.key);
        if (bytes === null) throw new Error(`${describeLocation(location)}: ${listed.key} is listed in the manifest but missing`);
        batches.push({ entry: listed, batch: checkedBatch(listed, bytes) });
      }
      return { path, lsn, batches };
    },
    async publishSnapshot(path, lsn) {
      await publishSnapshot(path, location, new Date(), { threads, timeoutMs }, lsn);
      pruneWork(workDir, path);
    },
    async publishBatch(entry, bytes) {
      await publishBatch(location, entry, bytes, { threads, timeoutMs });
    },
  };
}

/** A publisher's snapshot builds: from PostgreSQL at an exported snapshot, and compactions. */
export function snapshotMaker(source: { url: string; table: string }, workDir: string, options: TableOptions): SnapshotMaker {
  mkdirSync(workDir, { recursive: true });
  /** A file to build into, renamed to its snapshot id's name once written. */
  const building = () => join(workDir, `building.${process.pid}.${Date.now()}.snap`);
  const named = (path: string): string => {
    const { header } = loadSnapshot(path, { verify: false });
    const target = snapshotFile(workDir, header.checksum);
    if (target !== path) renameSync(path, target);
    return target;
  };
  return {
    async fromPostgres(snapshot) {
      const out = building();
      await buildSnapshotFromPostgres({ url: source.url, table: source.table, snapshot }, out, undefined, options);
      const path = named(out);
      return { path, schema: loadSnapshot(path, { verify: false }).store.schema };
    },
    async compact(base, batches) {
      const out = building();
      await compactInWorker(base, batches, out);
      return named(out);
    },
  };
}
