/**
 * Serving a snapshot from a private copy: the server maps a copy it owns, in its cache
 * directory, never the file an operator named. A mapped file that changes under a server
 * kills it (a truncated file's pages are gone: SIGBUS on the next read) or mixes two versions
 * in one answer (a file overwritten in place); a private copy makes the served bytes
 * independent of whatever happens to the source file afterwards.
 *
 * The copy is named by its snapshot id (`<cacheDir>/<snapshotId>.snap`), so a restart or a
 * reload of an unchanged file reuses it without copying, and several processes serving one
 * version share one copy (and its pages in the page cache). A copy is written to a temporary
 * name, checked, and renamed; a source that changed while it was copied is refused, and the
 * loader's checksums (on by default) refuse a copy whose bytes do not match its header.
 */
import { constants, copyFileSync, existsSync, mkdirSync, openSync, closeSync, readSync, readdirSync, renameSync, rmSync, statSync, type Stats } from "node:fs";
import { dirname, join } from "node:path";
import { FORMAT_VERSION, MAGIC, PREFIX_BYTES, type SnapshotHeader, headerPackr } from "./format.ts";
import { type LoadOptions, type LoadedSnapshot, SnapshotError, loadSnapshot } from "./load.ts";
import { isRunning } from "./write.ts";

/** Name of the cache directory created beside a snapshot when no other is given. */
export const DEFAULT_CACHE_DIR_NAME = ".snapshot-cache";

/** Largest header this reads to learn a snapshot's id, in bytes (headers are a few KiB). */
const MAX_HEADER_BYTES = 16 * 1024 * 1024;

/** The cache directory used for `snapshotPath` when none is configured: `.snapshot-cache` beside it. */
export function defaultCacheDir(snapshotPath: string): string {
  return join(dirname(snapshotPath), DEFAULT_CACHE_DIR_NAME);
}

/** What identifies a file's contents cheaply: its inode, size and modification time. */
function sameFile(a: Stats, b: Stats): boolean {
  return a.ino === b.ino && a.size === b.size && a.mtimeMs === b.mtimeMs && a.ctimeMs === b.ctimeMs;
}

/**
 * The snapshot id (the header's checksum, 16 hex digits) of the snapshot file at `path`, read
 * from its header alone (the prefix and the msgpack header; no section is read).
 * @throws SnapshotError when the file is missing, too short, not a snapshot, or its header is corrupt
 */
export function readSnapshotId(path: string): string {
  let fd: number;
  try {
    fd = openSync(path, "r");
  } catch (error) {
    throw new SnapshotError(path, `cannot open the file (${(error as Error).message})`);
  }
  try {
    const prefix = new Uint8Array(PREFIX_BYTES);
    if (readSync(fd, prefix, 0, PREFIX_BYTES, 0) < PREFIX_BYTES) throw new SnapshotError(path, `not a snapshot: shorter than the ${PREFIX_BYTES}-byte prefix`);
    for (let i = 0; i < MAGIC.length; i++) if (prefix[i] !== MAGIC[i]) throw new SnapshotError(path, "not a snapshot: bad magic (expected USERSNAP)");
    const view = new DataView(prefix.buffer);
    const length = view.getUint32(8, true);
    if (length > MAX_HEADER_BYTES) throw new SnapshotError(path, `corrupt: a header of ${length} bytes`);
    const header = new Uint8Array(length);
    if (readSync(fd, header, 0, length, PREFIX_BYTES) < length) throw new SnapshotError(path, "truncated: the header is cut short");
    if (Bun.hash.crc32(header) !== view.getUint32(12, true)) throw new SnapshotError(path, "corrupt: header checksum mismatch");
    let decoded: SnapshotHeader;
    try {
      decoded = headerPackr.unpack(header) as SnapshotHeader;
    } catch (error) {
      throw new SnapshotError(path, `corrupt: header does not decode (${(error as Error).message})`);
    }
    if (decoded?.formatVersion !== FORMAT_VERSION) {
      throw new SnapshotError(path, `format version ${decoded?.formatVersion} is not supported (this build reads version ${FORMAT_VERSION}); rebuild it with \`snapshot build\``);
    }
    if (typeof decoded.checksum !== "string" || !/^[0-9a-f]{16}$/.test(decoded.checksum)) throw new SnapshotError(path, "corrupt: the header has no snapshot id");
    return decoded.checksum;
  } finally {
    closeSync(fd);
  }
}

/**
 * Makes sure `cacheDir` holds a private copy of the snapshot at `source` and returns its path,
 * `<cacheDir>/<snapshotId>.snap`. An existing copy of the same id and size is reused; otherwise
 * the file is copied (a reflink where the file system has them, else an in-kernel copy) to a
 * temporary name and renamed into place.
 * @returns the copy's path and the snapshot id its header claims (the loader verifies it)
 * @throws SnapshotError when the source is not a snapshot, or changed while it was copied;
 *   the file system's errors (no space, no permission) as they come
 */
export function privateCopy(source: string, cacheDir: string): { path: string; snapshotId: string } {
  const before = statOrThrow(source);
  const snapshotId = readSnapshotId(source);
  const target = join(cacheDir, `${snapshotId}.snap`);
  if (existsSync(target) && statSync(target).size === before.size) return { path: target, snapshotId };
  mkdirSync(cacheDir, { recursive: true, mode: 0o700 });
  const tmp = join(cacheDir, `.${snapshotId}.${process.pid}.${Date.now()}.tmp`);
  try {
    copyFileSync(source, tmp, constants.COPYFILE_FICLONE);
    const after = statOrThrow(source);
    if (!sameFile(before, after)) throw new SnapshotError(source, "the file changed while it was being copied; try again once it is complete");
    if (statSync(tmp).size !== before.size) throw new SnapshotError(source, "the copy is not the size of the file; try again");
    renameSync(tmp, target);
  } catch (error) {
    rmSync(tmp, { force: true });
    throw error;
  }
  return { path: target, snapshotId };
}

/** `statSync`, as a SnapshotError naming the file when it fails. */
function statOrThrow(path: string): Stats {
  try {
    return statSync(path);
  } catch (error) {
    throw new SnapshotError(path, `cannot read the file (${(error as Error).message})`);
  }
}

/**
 * Removes every snapshot copy and leftover temporary file in `cacheDir` except the copies in
 * `keep` (paths as {@link privateCopy} returns them). A mapped copy stays readable after its
 * removal (the mapping holds the file), so an old version may be removed as soon as no new
 * request starts on it.
 * @returns the removed file names
 */
export function pruneCache(cacheDir: string, keep: readonly string[]): string[] {
  if (!existsSync(cacheDir)) return [];
  const kept = new Set(keep.map((path) => path.slice(path.lastIndexOf("/") + 1)));
  const removed: string[] = [];
  for (const name of readdirSync(cacheDir)) {
    if (kept.has(name)) continue;
    // A temporary file of a live copy in another process is left alone.
    const tmp = /^\.[0-9a-f]{16}\.(\d+)\.\d+\.tmp$/.exec(name);
    if (tmp !== null && Number(tmp[1]) !== process.pid && isRunning(Number(tmp[1]))) continue;
    if (tmp === null && !/^[0-9a-f]{16}\.snap$/.test(name)) continue;
    rmSync(join(cacheDir, name), { force: true });
    removed.push(name);
  }
  return removed;
}

/** Options of {@link loadPrivately}. */
export interface PrivateLoadOptions extends LoadOptions {
  /** Where private copies live; default {@link defaultCacheDir} of the snapshot. */
  cacheDir?: string;
}

/** A snapshot loaded from its private copy. */
export interface PrivatelyLoaded extends LoadedSnapshot {
  /** The private copy that is mapped. */
  privatePath: string;
}

/**
 * Copies the snapshot at `source` into the cache (or reuses its copy) and loads the copy: what
 * `serve` maps, so that nothing done to `source` afterwards reaches the running server.
 * @throws SnapshotError when the source or its copy is refused (see {@link privateCopy} and
 *   load.ts `loadSnapshot`); the file system's errors
 */
export function loadPrivately(source: string, options: PrivateLoadOptions = {}): PrivatelyLoaded {
  const started = performance.now();
  const cacheDir = options.cacheDir ?? defaultCacheDir(source);
  const { path } = privateCopy(source, cacheDir);
  let loaded: LoadedSnapshot;
  try {
    loaded = loadSnapshot(path, options);
  } catch (error) {
    // A copy that does not load is of no use to anyone: remove it, and name the source.
    rmSync(path, { force: true });
    if (error instanceof SnapshotError) throw new SnapshotError(source, error.reason);
    throw error;
  }
  return { ...loaded, privatePath: path, loadMs: performance.now() - started };
}
