/**
 * Writes a store as a snapshot file: to a temporary file beside the target, fsynced, then
 * renamed over it, so a failed write never leaves a half-written or replaced snapshot. A process
 * killed before the rename (SIGKILL, a crash) leaves its temporary file; the next write to the
 * same target removes it once its process is gone. An interrupted build (SIGINT, SIGTERM)
 * removes its own, through {@link removePendingTemporaryFiles}.
 */
import { closeSync, fsync, fsyncSync, openSync, readdirSync, renameSync, rmSync, write, writeSync } from "node:fs";
import { basename, dirname, join } from "node:path";
import { promisify } from "node:util";
import type { Store } from "../store/types.ts";
import { ELEMENT_BYTES, type ElementType, FORMAT_VERSION, MAGIC, PREFIX_BYTES, type SectionEntry, type SnapshotHeader, alignUp, hashBytes, headerPackr, columnSectionName, recordChunkName, PARTITION_CODES_SECTION, PARTITION_COUNTS_SECTION, INDEX_FIELDS, INDEX_FIELD_TYPES, searchSectionName, columnSearchSectionName } from "./format.ts";
import { ALL_PARTS, PART_TYPES, partOf } from "../kinds/kind.ts";
import { KINDS } from "../kinds/registry.ts";

/** A typed array that can be a section. */
type SectionArray = Uint8Array | Uint32Array | Float64Array;

/**
 * The sections of a store, in file order, with their element types: the records (chunk 0 then
 * the scratch area, so the loader maps them together), the partition, every column's parts
 * (in kind.ts `ALL_PARTS` order) as `col.<id>.<part>`, then the search index's lists of 1-, 2-
 * and 3-grams as `search.<n>.<field>`.
 */
export function storeSections(store: Store): { name: string; type: ElementType; data: SectionArray }[] {
  const sections: { name: string; type: ElementType; data: SectionArray }[] = [];
  const { chunks } = store.records;
  sections.push(
    { name: "recordOffsets", type: "u32", data: store.records.offsets },
    { name: recordChunkName(0), type: "u8", data: chunks[0] },
    // zeros whatever a server has assembled there: a snapshot's bytes depend on its data only.
    // Right after chunk 0, so that the loader maps the two together (store/rows-json.ts).
    { name: "bodyScratch", type: "u8", data: new Uint8Array(store.records.scratch.length) },
  );
  for (let c = 1; c < chunks.length; c++) sections.push({ name: recordChunkName(c), type: "u8", data: chunks[c] });
  if (store.partition !== null) {
    sections.push({ name: PARTITION_CODES_SECTION, type: "u8", data: store.partition.codes });
    sections.push({ name: PARTITION_COUNTS_SECTION, type: "u32", data: store.partition.counts });
  }
  for (const spec of store.schema.columns) {
    const column = store.columns.get(spec.id);
    if (column === undefined) throw new Error(`internal: the store lacks column "${spec.id}"`);
    const required = new Set(KINDS[spec.kind].parts({ key: column.key }));
    for (const part of ALL_PARTS) {
      const data = partOf(column, part);
      if (data === null) {
        if (required.has(part)) throw new Error(`internal: column "${spec.id}" lacks its ${part}`);
        continue;
      }
      sections.push({ name: columnSectionName(spec.id, part), type: PART_TYPES[part], data });
    }
  }
  for (let n = 1; n <= 3; n++) {
    const index = store.search.grams[n - 1];
    for (const field of INDEX_FIELDS) sections.push({ name: searchSectionName(n, field), type: INDEX_FIELD_TYPES[field], data: index[field] });
  }
  for (const [id, own] of store.search.columns) {
    for (const n of [1, 2] as const) {
      const index = own[n - 1];
      for (const field of INDEX_FIELDS) sections.push({ name: columnSearchSectionName(id, n, field), type: INDEX_FIELD_TYPES[field], data: index[field] });
    }
  }
  return sections;
}

/** Bytes of a typed array, as a view (no copy). */
function bytesOf(data: SectionArray): Uint8Array {
  return new Uint8Array(data.buffer, data.byteOffset, data.byteLength);
}

/** A snapshot laid out for writing: its bytes as pieces in file order (views, no copies). */
interface SnapshotLayout {
  /** Prefix, header, then each section after its zero padding, then the final padding. */
  pieces: Uint8Array[];
  /** The header checksum: the snapshot id (16 hex digits). */
  checksum: string;
  /** The file size, in bytes. */
  bytes: number;
}

/** Lays out `store` as a snapshot file: header, section offsets and checksums. */
function layoutSnapshot(store: Store, createdAt: string): SnapshotLayout {
  const sections = storeSections(store);
  const entries: SectionEntry[] = sections.map((s) => ({
    name: s.name,
    type: s.type,
    offset: 0,
    length: s.data.length,
    hash: hashBytes(bytesOf(s.data)),
  }));
  const checksum = hashBytes(new TextEncoder().encode(entries.map((e) => e.hash).join("")));
  const header: SnapshotHeader = {
    format: "users-listing-snapshot",
    formatVersion: FORMAT_VERSION,
    createdAt,
    rowCount: store.rowCount,
    recordChunkShift: store.records.chunkShift,
    schema: store.schema,
    collation: { locale: "en", sensitivity: "base", numeric: true, icu: process.versions.icu ?? "unknown" },
    sections: entries,
    checksum,
  };
  // Offsets depend on the header's length, which depends on the offsets' encoding: iterate
  // until the layout is stable (at most a few rounds, as numbers only grow by a byte or two).
  let encoded = headerPackr.pack(header);
  for (let round = 0; round < 8; round++) {
    let offset = alignUp(PREFIX_BYTES + encoded.length);
    for (let i = 0; i < entries.length; i++) {
      entries[i].offset = offset;
      offset = alignUp(offset + entries[i].length * ELEMENT_BYTES[entries[i].type]);
    }
    const next = headerPackr.pack(header);
    if (next.length === encoded.length) {
      encoded = next;
      break;
    }
    encoded = next;
  }

  const prefix = new Uint8Array(PREFIX_BYTES);
  prefix.set(MAGIC, 0);
  const view = new DataView(prefix.buffer);
  view.setUint32(8, encoded.length, true);
  view.setUint32(12, Bun.hash.crc32(encoded), true);

  const zeros = new Uint8Array(8);
  const pieces: Uint8Array[] = [prefix, encoded];
  let position = prefix.length + encoded.length;
  for (let i = 0; i < sections.length; i++) {
    pieces.push(zeros.subarray(0, entries[i].offset - position));
    const data = bytesOf(sections[i].data);
    pieces.push(data);
    position = entries[i].offset + data.length;
  }
  pieces.push(zeros.subarray(0, alignUp(position) - position));
  return { pieces, checksum, bytes: alignUp(position) };
}

/** Temporary files being written by this process, removed by {@link removePendingTemporaryFiles}. */
const pendingTemporaryFiles = new Set<string>();

/**
 * The temporary file for a write to `path`: `.<name>.<pid>.<ms>.tmp` beside it, so that the
 * rename is atomic (same file system) and {@link removeStaleTemporaryFiles} can tell whose it is.
 */
function temporaryPath(path: string): string {
  return join(dirname(path), `.${basename(path)}.${process.pid}.${Date.now()}.tmp`);
}

/** True when process `pid` is running: `kill(pid, 0)` fails with ESRCH only for a process that does not exist. */
export function isRunning(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    // EPERM: it exists, owned by another user.
    return (error as { code?: string }).code !== "ESRCH";
  }
}

/**
 * Removes the temporary files that writes to `path` left behind when their process died before
 * the rename (killed, say): files named `.<name>.<pid>.<ms>.tmp` beside `path` whose pid is no
 * longer running. A file of a running process (another build of the same target, or this
 * process) is kept, and so is anything else in the directory. Pids are this machine's: a file
 * written from another PID namespace onto a shared directory would look stale.
 * @returns the paths removed.
 * @throws nothing for a missing directory or a file that vanished meanwhile; other file system
 *   errors as thrown by node:fs.
 */
export function removeStaleTemporaryFiles(path: string): string[] {
  const dir = dirname(path);
  const prefix = `.${basename(path)}.`;
  let names: string[];
  try {
    names = readdirSync(dir);
  } catch (error) {
    if ((error as { code?: string }).code === "ENOENT") return [];
    throw error;
  }
  const removed: string[] = [];
  for (const name of names) {
    if (!name.startsWith(prefix) || !name.endsWith(".tmp")) continue;
    const match = /^([0-9]+)\.([0-9]+)\.tmp$/.exec(name.slice(prefix.length));
    if (match === null) continue;
    const pid = Number(match[1]);
    if (!Number.isSafeInteger(pid) || pid <= 0 || pid === process.pid || isRunning(pid)) continue;
    const stale = join(dir, name);
    rmSync(stale, { force: true });
    removed.push(stale);
  }
  return removed;
}

/**
 * Removes the temporary files of this process's writes in progress, at once (synchronously): for
 * a signal handler that then exits, so that an interrupted build leaves nothing behind. The
 * interrupted write's target is untouched (the rename has not happened).
 * @returns the paths removed.
 */
export function removePendingTemporaryFiles(): string[] {
  const removed = [...pendingTemporaryFiles];
  for (const tmp of removed) rmSync(tmp, { force: true });
  pendingTemporaryFiles.clear();
  return removed;
}

/** Options of {@link writeSnapshot} and {@link writeSnapshotAsync}. */
export interface WriteOptions {
  /** The header's build time (ISO 8601), default now (fixed in the golden test). */
  createdAt?: string;
}

/**
 * Writes `store` to `path` atomically (temporary file + fsync + rename), on this thread. Stale
 * temporary files of earlier writes to `path` are removed first ({@link removeStaleTemporaryFiles}).
 * @returns the snapshot id (the header checksum, 16 hex digits) and the file size in bytes.
 * @throws the file system's error (the target is then untouched and the temporary file removed).
 */
export function writeSnapshot(path: string, store: Store, options: WriteOptions = {}): { snapshotId: string; bytes: number } {
  const layout = layoutSnapshot(store, options.createdAt ?? new Date().toISOString());
  const { tmp, fd } = openTemporary(path);
  try {
    for (const [piece, position] of placed(layout.pieces)) {
      for (let done = 0; done < piece.length; ) done += writeSync(fd, piece, done, piece.length - done, position + done);
    }
    fsyncSync(fd);
    commitTemporary(fd, tmp, path);
  } catch (error) {
    abandonTemporary(fd, tmp);
    throw error;
  }
  return { snapshotId: layout.checksum, bytes: layout.bytes };
}

/** Each piece of a layout with its file position: the pieces back to back from byte 0, in order. */
function* placed(pieces: readonly Uint8Array[]): Generator<[Uint8Array, number]> {
  let position = 0;
  for (const piece of pieces) {
    yield [piece, position];
    position += piece.length;
  }
}

/**
 * Opens the temporary file of a write to `path` (see {@link temporaryPath}), after removing the
 * stale ones of earlier writes ({@link removeStaleTemporaryFiles}). The file is registered as
 * pending before it exists, and created on this thread, so that a signal handler sees it exactly
 * when it is there ({@link removePendingTemporaryFiles}).
 * @throws the file system's error (nothing is left registered)
 */
function openTemporary(path: string): { tmp: string; fd: number } {
  removeStaleTemporaryFiles(path);
  const tmp = temporaryPath(path);
  pendingTemporaryFiles.add(tmp);
  try {
    return { tmp, fd: openSync(tmp, "w") };
  } catch (error) {
    pendingTemporaryFiles.delete(tmp);
    throw error;
  }
}

/** Closes a fully written and fsynced temporary file and renames it over `path` (atomic on one file system). */
function commitTemporary(fd: number, tmp: string, path: string): void {
  closeSync(fd);
  renameSync(tmp, path);
  pendingTemporaryFiles.delete(tmp);
}

/** Closes (if still open) and removes a temporary file whose write failed; the target is untouched. */
function abandonTemporary(fd: number, tmp: string): void {
  try {
    closeSync(fd);
  } catch {}
  rmSync(tmp, { force: true });
  pendingTemporaryFiles.delete(tmp);
}

/** `fs.write` of a byte range at a file position, resolving to the bytes written (off this thread). */
const writeAsync = (fd: number, bytes: Uint8Array, offset: number, length: number, position: number): Promise<number> =>
  new Promise((resolve, reject) => write(fd, bytes, offset, length, position, (error, written) => (error ? reject(error) : resolve(written))));

/** `fs.fsync`, off this thread. */
const fsyncAsync = promisify(fsync);

/** Most bytes per write call of {@link writeSnapshotAsync}: between two calls, a signal handler can run. */
const WRITE_SLICE_BYTES = 32 << 20;

/**
 * Writes `store` to `path` atomically, like {@link writeSnapshot}, but with asynchronous writes
 * of at most 32 MiB: the event loop turns between them, so a SIGINT or SIGTERM handler can run
 * during the write, remove the temporary file ({@link removePendingTemporaryFiles}) and exit
 * before the rename, leaving the previous snapshot at `path` as it was.
 * @returns the snapshot id (the header checksum, 16 hex digits) and the file size in bytes.
 * @throws the file system's error (the target is then untouched and the temporary file removed).
 */
export async function writeSnapshotAsync(path: string, store: Store, options: WriteOptions = {}): Promise<{ snapshotId: string; bytes: number }> {
  const layout = layoutSnapshot(store, options.createdAt ?? new Date().toISOString());
  // Created and renamed on this thread (writes in flight on an unlinked file are harmless).
  const { tmp, fd } = openTemporary(path);
  try {
    for (const [piece, position] of placed(layout.pieces)) {
      for (let done = 0; done < piece.length; ) done += await writeAsync(fd, piece, done, Math.min(piece.length - done, WRITE_SLICE_BYTES), position + done);
    }
    await fsyncAsync(fd);
    commitTemporary(fd, tmp, path);
  } catch (error) {
    abandonTemporary(fd, tmp);
    throw error;
  }
  return { snapshotId: layout.checksum, bytes: layout.bytes };
}
