/**
 * Publishing snapshots for replicas (`snapshot publish F --to LOCATION`, `snapshot rollback`):
 * each snapshot is uploaded under a content-addressed key, `snapshots/<snapshotId>.snap`, then
 * the manifest, `manifest.json`, is replaced in one step to name it, with the versions before
 * it kept (and their objects) for a rollback. A reader of the manifest sees the old version or
 * the new one, and the object it names is complete before the manifest names it.
 */
import { createHash } from "node:crypto";
import { createReadStream, statSync } from "node:fs";
import { loadSnapshot } from "../snapshot/load.ts";
import { type ObjectStorage, openStorage } from "./storage.ts";

/** The manifest's key under a location. */
export const MANIFEST_KEY = "manifest.json";

/** Versions kept before the current one (their snapshots stay for a rollback). */
export const KEPT_VERSIONS = 5;

/** One published snapshot, as the manifest names it. */
export interface ManifestEntry {
  /** The snapshot id (its header checksum). */
  snapshotId: string;
  /** The object's key under the location. */
  key: string;
  /** SHA-256 of the whole file, hex: what a replica checks while it downloads. */
  sha256: string;
  /** File size, in bytes. */
  bytes: number;
  /** Rows in the snapshot. */
  rows: number;
  /** When the snapshot was built (its header's `createdAt`), ISO 8601. */
  createdAt: string;
  /** When it was published, ISO 8601. */
  publishedAt: string;
}

/** The manifest: the current version, and the ones before it, newest first. */
export interface Manifest {
  current: ManifestEntry;
  previous: ManifestEntry[];
}

/** SHA-256 of a file, hex, read as a stream. */
export async function fileSha256(path: string): Promise<string> {
  const hash = createHash("sha256");
  for await (const chunk of createReadStream(path, { highWaterMark: 4 << 20 })) hash.update(chunk as Buffer);
  return hash.digest("hex");
}

/** The manifest at a location, or null when none was published. */
export async function readManifest(storage: ObjectStorage): Promise<Manifest | null> {
  const bytes = await storage.read(MANIFEST_KEY);
  if (bytes === null) return null;
  const manifest = JSON.parse(new TextDecoder().decode(bytes)) as Manifest;
  if (typeof manifest?.current?.snapshotId !== "string" || !Array.isArray(manifest.previous)) throw new Error(`${storage.location}: ${MANIFEST_KEY} is not a manifest`);
  return manifest;
}

/** Writes the manifest, then removes the snapshot objects it no longer names. */
async function commit(storage: ObjectStorage, manifest: Manifest): Promise<void> {
  await storage.replace(MANIFEST_KEY, new TextEncoder().encode(`${JSON.stringify(manifest, null, 2)}\n`));
  const named = new Set([manifest.current.key, ...manifest.previous.map((e) => e.key)]);
  for (const key of await storage.list("snapshots")) if (!named.has(key)) await storage.remove(key);
}

/**
 * Publishes the snapshot file `path` to `location` (a directory or `s3://bucket/prefix`): checks
 * it loads (every section's checksum), uploads it unless the same snapshot is there already,
 * then names it in the manifest. Publishing the current snapshot again changes nothing.
 * @returns the manifest now at the location
 * @throws SnapshotError for a file that is not a loadable snapshot; storage errors
 */
export async function publishSnapshot(path: string, location: string, now = new Date()): Promise<Manifest> {
  const { header } = loadSnapshot(path);
  const storage = openStorage(location);
  const bytes = statSync(path).size;
  const entry: ManifestEntry = {
    snapshotId: header.checksum,
    key: `snapshots/${header.checksum}.snap`,
    sha256: await fileSha256(path),
    bytes,
    rows: header.rowCount,
    createdAt: header.createdAt,
    publishedAt: now.toISOString(),
  };
  const before = await readManifest(storage);
  if (before !== null && before.current.snapshotId === entry.snapshotId) return before;
  if ((await storage.size(entry.key)) !== bytes) await storage.upload(entry.key, path);
  const previous = before === null ? [] : [before.current, ...before.previous].filter((e) => e.snapshotId !== entry.snapshotId).slice(0, KEPT_VERSIONS);
  const manifest: Manifest = { current: entry, previous };
  await commit(storage, manifest);
  return manifest;
}

/**
 * Makes an earlier version current again: the one before the current (default), or the one
 * with `snapshotId`. The version it replaces goes to the front of the earlier ones.
 * @returns the manifest now at the location
 * @throws Error when nothing was published, or no earlier version matches
 */
export async function rollbackSnapshot(location: string, snapshotId?: string): Promise<Manifest> {
  const storage = openStorage(location);
  const before = await readManifest(storage);
  if (before === null) throw new Error(`${storage.location}: nothing published (no ${MANIFEST_KEY})`);
  const index = snapshotId === undefined ? 0 : before.previous.findIndex((e) => e.snapshotId === snapshotId);
  const target = before.previous[index];
  if (target === undefined || index < 0) {
    throw new Error(
      snapshotId === undefined
        ? `${storage.location}: no earlier version to roll back to`
        : `${storage.location}: no earlier version ${snapshotId} (kept: ${before.previous.map((e) => e.snapshotId).join(", ") || "none"})`,
    );
  }
  const previous = [before.current, ...before.previous.filter((_, i) => i !== index)];
  const manifest: Manifest = { current: target, previous };
  await commit(storage, manifest);
  return manifest;
}
