/**
 * Synchronous file operations that never wait on something other than the disk: a path is
 * opened without blocking (`O_NONBLOCK`: a FIFO's open would wait for a writer forever) and
 * refused unless it is a regular file; copies go in slices so that progress is visible and a
 * full disk is reported with the free space. They block the calling thread while the disk
 * works, so the server calls them only on an I/O thread (io/threads.ts), never on the thread
 * that answers requests.
 */
import { closeSync, constants, copyFileSync, fstatSync, fsyncSync, openSync, readSync, rmSync, statSync, statfsSync, type Stats, writeSync } from "node:fs";
import { IoError, fileError } from "./errors.ts";

/** Bytes per slice of a copy or a hash: large enough for the disk, small enough to report progress often. */
export const SLICE_BYTES = 8 << 20;

/** What a file is, when it is not a regular file, in the words of a log line. */
export function fileKind(stats: Stats): string {
  if (stats.isFIFO()) return "a FIFO (named pipe)";
  if (stats.isSocket()) return "a socket";
  if (stats.isCharacterDevice()) return "a character device";
  if (stats.isBlockDevice()) return "a block device";
  if (stats.isDirectory()) return "a directory";
  return stats.isFile() ? "a regular file" : "not a regular file";
}

/**
 * Opens `path` for reading without blocking, and refuses anything but a regular file.
 * @returns the descriptor (the caller closes it) and the file's stats
 * @throws IoError `not_a_file` for a FIFO, socket, device or directory; the open's error as
 *   {@link fileError} (ENOENT stays visible as `errno` through {@link isMissing})
 */
export function openRegular(path: string): { fd: number; stats: Stats } {
  let fd: number;
  try {
    fd = openSync(path, constants.O_RDONLY | constants.O_NONBLOCK);
  } catch (error) {
    if (isMissing(error)) throw error;
    throw fileError(error, `opening ${path}`);
  }
  const stats = fstatSync(fd);
  if (!stats.isFile()) {
    closeSync(fd);
    throw new IoError("not_a_file", `${path} is ${fileKind(stats)}, not a regular file`);
  }
  return { fd, stats };
}

/** True for an error that says the path does not exist (ENOENT). */
export function isMissing(error: unknown): boolean {
  return (error as { code?: string } | null)?.code === "ENOENT";
}

/**
 * Reads a whole regular file of at most `maxBytes`.
 * @returns the bytes, or null when the file does not exist
 * @throws IoError `not_a_file`, or `io` for a file over `maxBytes` and other errors
 */
export function readRegular(path: string, maxBytes: number): Uint8Array | null {
  let opened: { fd: number; stats: Stats };
  try {
    opened = openRegular(path);
  } catch (error) {
    if (isMissing(error)) return null;
    throw error;
  }
  const { fd, stats } = opened;
  try {
    if (stats.size > maxBytes) throw new IoError("io", `${path} is ${stats.size} bytes, more than the ${maxBytes} expected`);
    const bytes = new Uint8Array(stats.size);
    let at = 0;
    while (at < bytes.length) {
      const n = readSync(fd, bytes, at, bytes.length - at, at);
      if (n === 0) break;
      at += n;
    }
    return at === bytes.length ? bytes : bytes.subarray(0, at);
  } catch (error) {
    throw fileError(error, `reading ${path}`);
  } finally {
    closeSync(fd);
  }
}

/** Free bytes for an unprivileged writer in the file system holding `dir`, or null when unknown. */
export function freeBytes(dir: string): number | null {
  try {
    const s = statfsSync(dir);
    return Number(s.bavail) * Number(s.bsize);
  } catch {
    return null;
  }
}

/** Bytes as MiB for messages, one decimal. */
export function mib(bytes: number): string {
  return `${(bytes / 2 ** 20).toFixed(1)} MiB`;
}

/**
 * Refuses to start writing `bytes` into `dir` when its file system has less free space: a clear
 * message instead of a disk filled to the last byte (which would also starve the logs).
 * @param what what is about to be written, for the message (e.g. "the download of <key>")
 * @throws IoError `no_space` naming the directory, the space needed and the space free
 */
export function ensureSpace(dir: string, bytes: number, what: string): void {
  const free = freeBytes(dir);
  if (free !== null && free < bytes) throw new IoError("no_space", `${dir}: no space for ${what}: it needs ${mib(bytes)}, the file system has ${mib(free)} free`);
}

/**
 * Writes all of `bytes` at the descriptor's position.
 * @throws the file system's error (ENOSPC…)
 */
export function writeAll(fd: number, bytes: Uint8Array): void {
  let at = 0;
  while (at < bytes.length) at += writeSync(fd, bytes, at, bytes.length - at);
}

/**
 * Copies the open regular file `from` (its first `size` bytes) into the new file `to` (created,
 * mode 0600; it must not exist), in slices of {@link SLICE_BYTES}, calling `onSlice` with each
 * slice read (to hash it) and `onProgress` with the bytes copied so far. On any error the
 * partial `to` is removed.
 * @param sync flush `to` to the disk before returning (a published object; a cache copy needs not)
 * @throws IoError as {@link fileError}: `no_space` with the free space left, `io`…
 */
export function copyInSlices(from: { fd: number; path: string }, size: number, to: string, options: { onSlice?: (bytes: Uint8Array) => void; onProgress?: (bytes: number) => void; sync?: boolean } = {}): void {
  let out: number;
  try {
    out = openSync(to, constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL, 0o600);
  } catch (error) {
    throw fileError(error, `creating ${to}`);
  }
  const buffer = new Uint8Array(Math.min(SLICE_BYTES, Math.max(size, 1)));
  let copied = 0;
  let failed = true;
  try {
    while (copied < size) {
      let n: number;
      try {
        n = readSync(from.fd, buffer, 0, Math.min(buffer.length, size - copied), copied);
      } catch (error) {
        throw fileError(error, `reading ${from.path}`);
      }
      if (n === 0) throw new IoError("io", `reading ${from.path}: the file ended at byte ${copied} of ${size} (it was truncated while being read)`);
      const slice = buffer.subarray(0, n);
      options.onSlice?.(slice);
      let written = 0;
      try {
        while (written < n) written += writeSync(out, slice, written, n - written);
      } catch (error) {
        const failure = fileError(error, `writing ${to}`);
        if (failure.reason === "no_space") {
          const free = freeBytes(to.slice(0, to.lastIndexOf("/")) || "/");
          throw new IoError("no_space", `${failure.message} after ${mib(copied + written)} of ${mib(size)}${free === null ? "" : ` (${mib(free)} free)`}`);
        }
        throw failure;
      }
      copied += n;
      options.onProgress?.(copied);
    }
    if (options.sync) fsyncSync(out);
    failed = false;
  } finally {
    closeSync(out);
    if (failed) removeQuietly(to);
  }
}

/**
 * Reads the open regular file `fd` (of `size` bytes, as its stat said) from its start to its end
 * in slices of at most {@link SLICE_BYTES}, handing each to `onSlice` (a view valid during the
 * call: to hash it) and the bytes read so far to `onProgress`. The caller opens and closes `fd`.
 * @returns the bytes read
 * @throws the read's error (the caller words it: {@link fileError})
 */
export function readInSlices(fd: number, size: number, onSlice: (slice: Uint8Array) => void, onProgress?: (bytes: number) => void): number {
  const buffer = new Uint8Array(Math.min(SLICE_BYTES, Math.max(1, size)));
  let at = 0;
  for (;;) {
    const n = readSync(fd, buffer, 0, buffer.length, at);
    if (n === 0) return at;
    onSlice(buffer.subarray(0, n));
    at += n;
    onProgress?.(at);
  }
}

/**
 * A reflink of `from` at the new file `to` (the two share their blocks until either changes: no
 * time, no space), where the file system has them (btrfs, XFS); false elsewhere (ext4, tmpfs),
 * with nothing left at `to`.
 */
export function tryClone(from: string, to: string): boolean {
  try {
    copyFileSync(from, to, constants.COPYFILE_FICLONE_FORCE | constants.COPYFILE_EXCL);
    return true;
  } catch {
    removeQuietly(to);
    return false;
  }
}

/** Removes a file, ignoring a missing one and any other error (cleanup after a failure). */
export function removeQuietly(path: string): void {
  try {
    rmSync(path, { force: true });
  } catch {
    // best effort: the failure being reported matters more
  }
}

/** A file's identity: what changes when its contents are replaced or written in place. */
export interface FileIdentity {
  dev: number;
  ino: number;
  /** Size, in bytes. */
  size: number;
  /** Modification and status-change times, in ms since the epoch. */
  mtimeMs: number;
  ctimeMs: number;
}

/** The identity of `stats` (see {@link FileIdentity}). */
export function identityOf(stats: Stats): FileIdentity {
  return { dev: stats.dev, ino: stats.ino, size: stats.size, mtimeMs: stats.mtimeMs, ctimeMs: stats.ctimeMs };
}

/** The identity of the file at `path`, or null when it does not exist. */
export function identityAt(path: string): FileIdentity | null {
  try {
    return identityOf(statSync(path));
  } catch (error) {
    if (isMissing(error)) return null;
    throw fileError(error, `reading the attributes of ${path}`);
  }
}

/** True when two identities are of the same, unchanged file. */
export function sameIdentity(a: FileIdentity | null | undefined, b: FileIdentity | null | undefined): boolean {
  return a != null && b != null && a.dev === b.dev && a.ino === b.ino && a.size === b.size && a.mtimeMs === b.mtimeMs && a.ctimeMs === b.ctimeMs;
}
