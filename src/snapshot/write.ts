/**
 * Writes a store as a snapshot file: to a temporary file beside the target, fsynced, then
 * renamed over it, so a failed write never leaves a half-written or replaced snapshot.
 */
import { closeSync, fsyncSync, openSync, renameSync, rmSync, writeSync } from "node:fs";
import { basename, dirname, join } from "node:path";
import { STRING_COLUMNS } from "../schema.ts";
import type { Store } from "../store/types.ts";
import {
  ELEMENT_BYTES,
  type ElementType,
  FORMAT_VERSION,
  MAGIC,
  PREFIX_BYTES,
  type SectionEntry,
  type SnapshotHeader,
  alignUp,
  currentSchema,
  hashBytes,
  headerPackr,
  stringSectionNames,
} from "./format.ts";

/** A typed array that can be a section. */
type SectionArray = Uint8Array | Uint32Array | Float64Array;

/** The sections of a store, in file order, with their element types. */
export function storeSections(store: Store): { name: string; type: ElementType; data: SectionArray }[] {
  const sections: { name: string; type: ElementType; data: SectionArray }[] = [
    { name: "ids", type: "f64", data: store.ids },
    { name: "statusCodes", type: "u8", data: store.statusCodes },
    { name: "statusCounts", type: "u32", data: store.statusCounts },
    { name: "rowsByStatus", type: "u32", data: store.rowsByStatus },
  ];
  if (store.rowsByAbsId) sections.push({ name: "rowsByAbsId", type: "u32", data: store.rowsByAbsId });
  sections.push(
    { name: "recordOffsets", type: "u32", data: store.records.offsets },
    { name: "records", type: "u8", data: store.records.bytes },
    // zeros whatever a server has assembled there: a snapshot's bytes depend on its data only
    { name: "bodyScratch", type: "u8", data: new Uint8Array(store.records.scratch.length) },
  );
  for (const column of STRING_COLUMNS) {
    const c = store.strings[column];
    const arrays: SectionArray[] = [
      c.folded,
      c.foldedOffsets,
      c.rowsByValue,
      c.rankByRow,
      c.rowsByValueByStatus,
      c.trigrams.keys,
      c.trigrams.counts,
      c.trigrams.statusCounts,
      c.trigrams.refs,
      c.trigrams.bitmaps,
      c.trigrams.gaps,
    ];
    const names = stringSectionNames(column);
    for (let i = 0; i < names.length; i++) {
      sections.push({ name: names[i], type: arrays[i] instanceof Uint8Array ? "u8" : arrays[i] instanceof Float64Array ? "f64" : "u32", data: arrays[i] });
    }
  }
  return sections;
}

/** Bytes of a typed array, as a view (no copy). */
function bytesOf(data: SectionArray): Uint8Array {
  return new Uint8Array(data.buffer, data.byteOffset, data.byteLength);
}

/**
 * Writes `store` to `path` atomically (temporary file + fsync + rename).
 * @param options `createdAt`: the header's build time (ISO 8601), default now (fixed in the golden test).
 * @returns the snapshot id (the header checksum, 16 hex digits) and the file size in bytes.
 * @throws the file system's error (the target is then untouched and the temporary file removed).
 */
export function writeSnapshot(path: string, store: Store, options: { createdAt?: string } = {}): { snapshotId: string; bytes: number } {
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
    createdAt: options.createdAt ?? new Date().toISOString(),
    rowCount: store.rowCount,
    schema: currentSchema(),
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

  const tmp = join(dirname(path), `.${basename(path)}.${process.pid}.${Date.now()}.tmp`);
  const fd = openSync(tmp, "w");
  let position = 0;
  const zeros = new Uint8Array(8);
  const put = (bytes: Uint8Array) => {
    let done = 0;
    while (done < bytes.length) done += writeSync(fd, bytes, done, bytes.length - done, position + done);
    position += bytes.length;
  };
  try {
    put(prefix);
    put(encoded);
    for (let i = 0; i < sections.length; i++) {
      put(zeros.subarray(0, entries[i].offset - position));
      put(bytesOf(sections[i].data));
    }
    put(zeros.subarray(0, alignUp(position) - position));
    fsyncSync(fd);
    closeSync(fd);
    renameSync(tmp, path);
  } catch (error) {
    try {
      closeSync(fd);
    } catch {}
    rmSync(tmp, { force: true });
    throw error;
  }
  return { snapshotId: checksum, bytes: position };
}
