/**
 * Serving a snapshot from a private copy: the server maps a copy it owns, in its cache
 * directory, never the file an operator named. A mapped file that changes under a server
 * kills it (a truncated file's pages are gone: SIGBUS on the next read) or mixes two versions
 * in one answer (a file overwritten in place); a private copy makes the served bytes
 * independent of whatever happens to the source file afterwards.
 *
 * The copy is named by its snapshot id (`<cacheDir>/<snapshotId>.snap`), so several processes
 * serving one version share one copy (and its pages in the page cache). A copy is written to a
 * temporary name, verified there (the loader's section checksums), and only then renamed into
 * place: a refused candidate removes its own temporary file and nothing else, so the copy that
 * is serving is never touched.
 *
 * Nothing cached is trusted unverified. Beside each copy, `<snapshotId>.snap.verified` records
 * the verification: the identity (device, inode, size, modification and change times) of the
 * source file it was made from and of the copy. A copy is reused without copying or reading it
 * again only while both identities are what the record says; a source changed in any way (a
 * flipped byte written in place changes its times) is copied and verified again.
 *
 * These functions block their thread while the disk works: the server runs them on an I/O
 * thread (io/threads.ts), and only maps the result on the thread that answers requests.
 */
import { type Stats, closeSync, fstatSync, linkSync, mkdirSync, readFileSync, readSync, readdirSync, renameSync, rmSync, writeFileSync } from "node:fs";
import { createHash } from "node:crypto";
import { homedir } from "node:os";
import { dirname, isAbsolute, join, resolve } from "node:path";
import { IoError, fileError } from "../files/errors.ts";
import { type FileIdentity, copyInSlices, ensureSpace, identityAt, identityOf, isMissing, openRegular, readRegular, removeQuietly, sameIdentity, tryClone } from "../files/blocking.ts";
import { FORMAT_VERSION, MAGIC, PREFIX_BYTES, type SnapshotHeader, headerPackr } from "./format.ts";
import { type LoadOptions, type LoadedSnapshot, SnapshotError, loadSnapshot } from "./load.ts";
import { isRunning } from "./write.ts";

/** Name of the cache directory created beside a snapshot when no other is given. */
export const DEFAULT_CACHE_DIR_NAME = ".snapshot-cache";

/** A snapshot id: the header's checksum, 16 lower-case hex digits (docs/snapshot-format.md). */
export const SNAPSHOT_ID = /^[0-9a-f]{16}$/;

/** Largest header this reads to learn a snapshot's id, in bytes (headers are a few KiB). */
const MAX_HEADER_BYTES = 16 * 1024 * 1024;

/** Suffix of a copy's verification record. */
const RECORD_SUFFIX = ".verified";

/** Largest verification record read, in bytes. */
const MAX_RECORD_BYTES = 64 * 1024;

/** The cache directory used for `snapshotPath` when none is configured: `.snapshot-cache` beside it. */
export function defaultCacheDir(snapshotPath: string): string {
  return join(dirname(snapshotPath), DEFAULT_CACHE_DIR_NAME);
}

/** This program's folder in the user's cache directory. */
const APP_CACHE_NAME = "users-listing";

/** Characters of a location kept in its directory's name (the rest is its digest). */
const LOCATION_NAME_CHARS = 48;

/**
 * The user's cache directory, per the XDG Base Directory Specification: `$XDG_CACHE_HOME` when
 * it is set to an absolute path, else `.cache` in the home directory.
 */
export function userCacheDir(env: Record<string, string | undefined> = process.env): string {
  const xdg = env.XDG_CACHE_HOME;
  return xdg !== undefined && isAbsolute(xdg) ? xdg : join(homedir(), ".cache");
}

/**
 * Where a replica (`serve --source`: kind `replica`, its downloads and private copies) or a
 * publisher (`snapshot follow`: kind `follow`, its snapshot files) keeps its files when no
 * directory is given: `<user cache dir>/users-listing/<kind>/<name>`, outside any working tree
 * (docs/operations.md "Run replicas that follow it"). One directory per location: `<name>` is
 * the location's last 48 characters made file-name safe, then the first 12 hex digits of the
 * SHA-256 of the location (a directory location resolved to its absolute path first), so two
 * locations never share one and a process started again finds its files.
 * @param location `s3://bucket/prefix` or a directory (relative to the working directory)
 */
export function defaultLocationDir(kind: "replica" | "follow", location: string, env: Record<string, string | undefined> = process.env): string {
  const identity = location.startsWith("s3://") ? location : resolve(location);
  const readable = identity
    .replace(/[^A-Za-z0-9._-]+/g, "-")
    .replace(/^[-.]+|-+$/g, "")
    .slice(-LOCATION_NAME_CHARS)
    .replace(/^[-.]+/, "");
  const digest = createHash("sha256").update(identity).digest("hex").slice(0, 12);
  return join(userCacheDir(env), APP_CACHE_NAME, kind, readable === "" ? digest : `${readable}-${digest}`);
}

/**
 * The snapshot id (the header's checksum, 16 hex digits) of the snapshot file at `path`, read
 * from its header alone (the prefix and the msgpack header; no section is read). The file is
 * opened without blocking: a FIFO at `path` is refused at once.
 * @throws SnapshotError when the file is missing, too short, not a snapshot, or its header is
 *   corrupt; IoError `not_a_file` for a FIFO, socket, device or directory
 */
export function readSnapshotId(path: string): string {
  const { fd } = openSnapshot(path);
  try {
    return snapshotIdOf(fd, path);
  } finally {
    closeSync(fd);
  }
}

/** {@link readSnapshotId} of an open file. */
function snapshotIdOf(fd: number, path: string): string {
  const read = (bytes: Uint8Array, position: number): number => {
    try {
      return readSync(fd, bytes, 0, bytes.length, position);
    } catch (error) {
      throw fileError(error, `reading ${path}`);
    }
  };
  const prefix = new Uint8Array(PREFIX_BYTES);
  if (read(prefix, 0) < PREFIX_BYTES) throw new SnapshotError(path, `not a snapshot: shorter than the ${PREFIX_BYTES}-byte prefix`);
  for (let i = 0; i < MAGIC.length; i++) if (prefix[i] !== MAGIC[i]) throw new SnapshotError(path, "not a snapshot: bad magic (expected USERSNAP)");
  const view = new DataView(prefix.buffer);
  const length = view.getUint32(8, true);
  if (length > MAX_HEADER_BYTES) throw new SnapshotError(path, `corrupt: a header of ${length} bytes`);
  const header = new Uint8Array(length);
  if (read(header, PREFIX_BYTES) < length) throw new SnapshotError(path, "truncated: the header is cut short");
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
  if (typeof decoded.checksum !== "string" || !SNAPSHOT_ID.test(decoded.checksum)) throw new SnapshotError(path, "corrupt: the header has no snapshot id");
  return decoded.checksum;
}

/** Opens a snapshot file without blocking; a missing one is a SnapshotError naming it. */
function openSnapshot(path: string): { fd: number; stats: Stats } {
  try {
    return openRegular(path);
  } catch (error) {
    if (isMissing(error)) throw new SnapshotError(path, "cannot open the file (it does not exist)");
    throw error;
  }
}

/** What `<snapshotId>.snap.verified` holds. */
interface VerificationRecord {
  snapshotId: string;
  /** Whether the section checksums were verified (false: `--no-verify`, structure only). */
  verified: boolean;
  /** The source file the copy was made from, when it was made. */
  source: FileIdentity;
  /** The copy, once in place. */
  copy: FileIdentity;
  /** When, ISO 8601. */
  at: string;
}

/** The record beside the copy `target`, or null when there is none or it does not parse. */
function readRecord(target: string): VerificationRecord | null {
  try {
    const bytes = readRegular(`${target}${RECORD_SUFFIX}`, MAX_RECORD_BYTES);
    return bytes === null ? null : (JSON.parse(new TextDecoder().decode(bytes)) as VerificationRecord);
  } catch {
    return null;
  }
}

/** Writes the record beside `target` (a temporary file renamed into place). */
function writeRecord(target: string, record: VerificationRecord): void {
  const path = `${target}${RECORD_SUFFIX}`;
  const temporary = `${path}.${process.pid}.tmp`;
  try {
    writeFileSync(temporary, JSON.stringify(record));
    renameSync(temporary, path);
  } catch (error) {
    removeQuietly(temporary);
    throw fileError(error, `writing ${path}`);
  }
}

/** Rounds of {@link recordCopy}'s check before it gives up on a cache other processes keep replacing. */
const RECORD_ROUNDS = 8;

/**
 * Writes the record of the copy just renamed to `target`, and makes sure the record left there
 * names the copy that is there. Two processes preparing the same snapshot id at once (the
 * workers of one server) each rename a verified copy into place and then write its record; when
 * the renames and the writes interleave (A renames, B renames, B writes, A writes), the record
 * names A's copy while B's is in place, and the copy is never trusted again (no fallback to it).
 * Every copy renamed to `target` was verified first with the same settings, so whoever finds the
 * record naming another file writes it again for the file in place.
 */
function recordCopy(target: string, record: VerificationRecord): void {
  writeRecord(target, record);
  for (let round = 0; round < RECORD_ROUNDS; round++) {
    const copy = identityAt(target);
    const written = readRecord(target);
    if (copy === null || (written !== null && written.snapshotId === record.snapshotId && sameIdentity(written.copy, copy))) return;
    writeRecord(target, { ...record, copy, at: new Date().toISOString() });
  }
}

/** A private copy ready to map (see {@link preparePrivateCopy}). */
export interface PreparedCopy {
  /** The copy to map: `<cacheDir>/<snapshotId>.snap`. */
  path: string;
  snapshotId: string;
  /** The copy's size, in bytes. */
  bytes: number;
  /**
   * How it came to be: `reused` (the record matched: nothing read), `copied`, `linked` (the
   * source is this process's own download: a hard link instead of a copy), or `fallback` (the
   * source was refused; see {@link PrepareOptions.fallback}).
   */
  how: "reused" | "copied" | "linked" | "fallback";
  /** Time copying or linking, and verifying, in ms. */
  copyMs: number;
  verifyMs: number;
  /** With `how: "fallback"`: why the source itself was refused. */
  refused?: string;
}

/** Options of {@link preparePrivateCopy}. */
export interface PrepareOptions {
  /** Verify every section's checksum before the copy is used (default true); false: structure only. */
  verify?: boolean;
  /**
   * The source is this process's own file, never modified in place (a replica's verified
   * download, replaced by rename): it is hard-linked into the cache instead of copied when both
   * are on one file system.
   */
  owned?: boolean;
  /** The caller has just verified the source's sections itself (a replica's download): not again. */
  verified?: boolean;
  /**
   * When the source is refused but a verified copy of the snapshot id its header names is in the
   * cache, unchanged since its verification, use that copy (a restart while the file is being
   * replaced, or after a bad one was put in its place, serves the version the other processes
   * serve). For a start-up only: a reload keeps what it serves.
   */
  fallback?: boolean;
  /**
   * Told before each step: bytes done so far, and bytes the step reads without telling (the
   * copy, then the verification): the I/O thread's watchdog allows them time.
   */
  onProgress?: (done: number, ahead: number) => void;
  /** Passed to the loader that verifies the copy (tests map small files in windows). */
  load?: LoadOptions;
}

/**
 * Makes sure `cacheDir` holds a verified private copy of the snapshot at `source`, and returns
 * it: reused when its verification record matches the source and the copy as they are now;
 * otherwise copied (or linked, {@link PrepareOptions.owned}) to a temporary name, verified,
 * and renamed into place, replacing an older copy of the same id (a mapping of the older one
 * keeps its bytes). A failure removes the temporary file and nothing else.
 * @throws SnapshotError naming `source` when it is not a loadable snapshot or changed while it
 *   was copied; IoError `not_a_file` (a FIFO…), `no_space` (naming the cache directory, the
 *   space needed and free), or another file system error naming the path
 */
export function preparePrivateCopy(source: string, cacheDir: string, options: PrepareOptions = {}): PreparedCopy {
  const verify = options.verify !== false;
  const { fd, stats } = openSnapshot(source);
  let snapshotId: string | null = null;
  try {
    snapshotId = snapshotIdOf(fd, source);
    const target = join(cacheDir, `${snapshotId}.snap`);
    const record = readRecord(target);
    const before = identityOf(stats);
    if (record !== null && record.snapshotId === snapshotId && (record.verified || !verify) && sameIdentity(record.source, before) && sameIdentity(record.copy, identityAt(target))) {
      return { path: target, snapshotId, bytes: stats.size, how: "reused", copyMs: 0, verifyMs: 0 };
    }
    try {
      mkdirSync(cacheDir, { recursive: true, mode: 0o700 });
    } catch (error) {
      throw fileError(error, `creating the cache directory ${cacheDir}`);
    }
    const temporary = join(cacheDir, `.${snapshotId}.${process.pid}.${Date.now()}.tmp`);
    const started = performance.now();
    try {
      const linked = options.owned === true && tryLink(source, temporary);
      // A clone copies what is at the path now: a file put there since it was opened is caught
      // by its snapshot id below. A copy goes through this thread in slices: measured at 10M
      // rows beside a loaded server, the kernel's whole-file copy (copy_file_range) held
      // requests up more, in spikes of 100–250 ms; and each slice is progress for the watchdog.
      if (!linked && !tryClone(source, temporary)) {
        ensureSpace(cacheDir, stats.size, `a private copy of ${source}`);
        copyInSlices({ fd, path: source }, stats.size, temporary, { onProgress: (bytes) => options.onProgress?.(bytes, 0) });
        if (!sameIdentity(identityOf(fstatSync(fd)), before)) throw new SnapshotError(source, "the file changed while it was being copied; try again once it is complete");
      }
      const copied = performance.now();
      if (options.verified !== true) {
        options.onProgress?.(stats.size, stats.size);
        let loaded: LoadedSnapshot | null = loadSnapshot(temporary, { ...options.load, verify });
        if (loaded.header.checksum !== snapshotId) throw new SnapshotError(source, "the file changed while it was being copied; try again once it is complete");
        loaded = null;
      }
      const verified = performance.now();
      renameSync(temporary, target);
      recordCopy(target, {
        snapshotId,
        verified: verify || options.verified === true,
        // a link shares the source's inode, whose change time the link and rename moved on
        source: linked ? identityOf(fstatSync(fd)) : before,
        copy: identityAt(target) as FileIdentity,
        at: new Date().toISOString(),
      });
      return { path: target, snapshotId, bytes: stats.size, how: linked ? "linked" : "copied", copyMs: copied - started, verifyMs: verified - copied };
    } catch (error) {
      removeQuietly(temporary);
      // The loader names the file it read: the temporary copy. Name the source instead.
      if (error instanceof SnapshotError && error.file === temporary) throw new SnapshotError(source, error.reason);
      throw error;
    }
  } catch (error) {
    if (options.fallback === true && snapshotId !== null && (error instanceof SnapshotError || error instanceof IoError)) {
      const cached = verifiedCopy(cacheDir, snapshotId);
      if (cached !== null) return { ...cached, refused: (error as Error).message };
    }
    throw error;
  } finally {
    closeSync(fd);
  }
}

/** A hard link of `source` at `link`; false when the two are on different file systems. */
function tryLink(source: string, link: string): boolean {
  try {
    linkSync(source, link);
    return true;
  } catch (error) {
    if ((error as { code?: string }).code === "EXDEV") return false;
    throw fileError(error, `linking ${source} into ${dirname(link)}`);
  }
}

/** The cache's verified copy of `snapshotId`, unchanged since its verification, or null. */
function verifiedCopy(cacheDir: string, snapshotId: string): PreparedCopy | null {
  const target = join(cacheDir, `${snapshotId}.snap`);
  const record = readRecord(target);
  const copy = identityAt(target);
  if (record === null || record.snapshotId !== snapshotId || !record.verified || !sameIdentity(record.copy, copy) || copy === null) return null;
  return { path: target, snapshotId, bytes: copy.size, how: "fallback", copyMs: 0, verifyMs: 0 };
}

/** A file's `major:minor:inode` as `/proc/<pid>/maps` names it (hex device numbers), from its stat `dev` and `ino`. */
function mapsKey(dev: number, ino: number): string {
  // glibc's makedev: the minor's low 8 bits, the major's 12, then the minor's rest above bit 20
  const major = (Math.floor(dev / 256) & 0xfff) | (Math.floor(dev / 2 ** 32) & ~0xfff);
  const minor = (dev & 0xff) | (Math.floor(dev / 4096) & ~0xff);
  return `${major.toString(16).padStart(2, "0")}:${minor.toString(16).padStart(2, "0")}:${ino}`;
}

/**
 * The files mapped by any process this one may read (`/proc/<pid>/maps`), as
 * `major:minor:inode` (see {@link mapsKey}): a copy still mapped is not removed ({@link pruneCache}).
 */
function mappedFiles(): Set<string> {
  const files = new Set<string>();
  let pids: string[];
  try {
    pids = readdirSync("/proc").filter((name) => /^\d+$/.test(name));
  } catch {
    return files;
  }
  for (const pid of pids) {
    let maps: string;
    try {
      maps = readFileSync(`/proc/${pid}/maps`, "latin1");
    } catch {
      continue; // gone, or another user's
    }
    // address perms offset dev inode path: a mapped file has an inode other than 0
    for (const line of maps.split("\n")) {
      const [, , , device, inode] = line.split(/\s+/, 5);
      if (inode !== undefined && inode !== "0") files.add(`${device}:${inode}`);
    }
  }
  return files;
}

/** What {@link pruneCache} did. */
export interface Pruned {
  /** Names removed. */
  removed: string[];
  /** Copies left because a process still maps them (removed by a later prune). */
  inUse: string[];
}

/**
 * Removes every snapshot copy (and its record) and leftover temporary file in `cacheDir` except
 * the copies in `keep` (paths as {@link preparePrivateCopy} returns them), and except what is
 * still in use: a temporary file of a live process, this one included (a copy in progress), and
 * a copy some process still maps (an older version whose engine the garbage collector has not
 * released yet). Removing a mapped file would move the cost of freeing it — hundreds of ms for
 * GBs, the kernel dropping its pages and blocks — to the moment the mapping goes, on the thread
 * that answers requests; removed here, on an I/O thread, it costs no request anything.
 * @returns the names removed, and the copies left in use
 */
export function pruneCache(cacheDir: string, keep: readonly string[]): Pruned {
  let names: string[];
  try {
    names = readdirSync(cacheDir);
  } catch (error) {
    if (isMissing(error)) return { removed: [], inUse: [] };
    throw fileError(error, `listing the cache directory ${cacheDir}`);
  }
  const kept = new Set(keep.map((path) => path.slice(path.lastIndexOf("/") + 1)));
  const pruned: Pruned = { removed: [], inUse: [] };
  let mapped: Set<string> | null = null;
  const remove = (name: string) => {
    rmSync(join(cacheDir, name), { force: true });
    pruned.removed.push(name);
  };
  for (const name of names) {
    const snap = /^([0-9a-f]{16}\.snap)(\.verified)?$/.exec(name);
    if (snap !== null) {
      if (kept.has(snap[1]) || snap[2] !== undefined) continue;
      mapped ??= mappedFiles();
      const copy = identityAt(join(cacheDir, name));
      if (copy !== null && mapped.has(mapsKey(copy.dev, copy.ino))) {
        pruned.inUse.push(name);
        continue;
      }
      remove(name);
      if (names.includes(`${name}${RECORD_SUFFIX}`)) remove(`${name}${RECORD_SUFFIX}`);
      continue;
    }
    const tmp = /^\.[0-9a-f]{16}\.(\d+)\.\d+\.tmp$/.exec(name) ?? /^[0-9a-f]{16}\.snap\.verified\.(\d+)\.tmp$/.exec(name);
    if (tmp !== null && !isRunning(Number(tmp[1]))) remove(name);
  }
  // a record whose copy is gone
  for (const name of names) {
    const record = /^([0-9a-f]{16}\.snap)\.verified$/.exec(name);
    if (record !== null && !kept.has(record[1]) && !names.includes(record[1]) && !pruned.removed.includes(name)) remove(name);
  }
  return pruned;
}

/** Options of {@link loadPrivately}. */
export interface PrivateLoadOptions extends LoadOptions {
  /** Where private copies live; default {@link defaultCacheDir} of the snapshot. */
  cacheDir?: string;
  /** See {@link PrepareOptions.owned}. */
  owned?: boolean;
  /** See {@link PrepareOptions.fallback}. */
  fallback?: boolean;
}

/** A snapshot loaded from its private copy. */
export interface PrivatelyLoaded extends LoadedSnapshot {
  /** The private copy that is mapped. */
  privatePath: string;
  /** How the copy was prepared. */
  prepared: PreparedCopy;
}

/**
 * Maps a prepared copy (structure checked; its sections were verified when it was prepared).
 * Fast and independent of the row count: what the request thread does at a swap.
 * @throws SnapshotError when the copy cannot be mapped or is not the prepared snapshot
 */
export function mapPrepared(prepared: PreparedCopy, options: LoadOptions = {}): PrivatelyLoaded {
  const started = performance.now();
  const loaded = loadSnapshot(prepared.path, { ...options, verify: false });
  if (loaded.header.checksum !== prepared.snapshotId) throw new SnapshotError(prepared.path, `the cached copy is snapshot ${loaded.header.checksum}, not ${prepared.snapshotId}`);
  return { ...loaded, privatePath: prepared.path, prepared, loadMs: prepared.copyMs + prepared.verifyMs + performance.now() - started };
}

/**
 * Copies the snapshot at `source` into the cache (or reuses its verified copy) and maps the
 * copy, on the calling thread: what tests and the first load of `startServer` do; a running
 * server prepares on an I/O thread and maps with {@link mapPrepared}.
 * @throws as {@link preparePrivateCopy} and {@link mapPrepared}
 */
export function loadPrivately(source: string, options: PrivateLoadOptions = {}): PrivatelyLoaded {
  const cacheDir = options.cacheDir ?? defaultCacheDir(source);
  const { maxWindowBytes } = options;
  const prepared = preparePrivateCopy(source, cacheDir, { verify: options.verify, owned: options.owned, fallback: options.fallback, load: { maxWindowBytes } });
  try {
    return mapPrepared(prepared, { maxWindowBytes });
  } catch (error) {
    // Removed in between (another process pruned it): prepare once more.
    if (!(error instanceof SnapshotError) || !isMissingCopy(prepared.path)) throw error;
    return mapPrepared(preparePrivateCopy(source, cacheDir, { verify: options.verify, owned: options.owned, load: { maxWindowBytes } }), { maxWindowBytes });
  }
}

/** True when the copy at `path` is gone. */
export function isMissingCopy(path: string): boolean {
  return identityAt(path) === null;
}
