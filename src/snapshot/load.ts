/**
 * Loads a snapshot file with `Bun.mmap` and views its sections as the store's typed arrays,
 * in place: start-up reads the header and (by default) verifies the section hashes, and does
 * no other work that grows with the row count.
 */
import { statSync } from "node:fs";
import { COLUMN_ID, COLUMN_KINDS, type ColumnKind, MAX_PARTITION_VALUES, type Schema, listsValues } from "../schema/kinds.ts";
import { ALL_PARTS, PART_TYPES, type StoredPart, emptyStoredColumn, partOf, setPart } from "../kinds/kind.ts";
import { KINDS } from "../kinds/registry.ts";
import type { StoredColumn } from "../kinds/kind.ts";
import { type Partition, type Records, type SearchIndex, type Store, type TrigramIndex, searchIndexColumns, searchableColumns } from "../store/types.ts";
import { ELEMENT_BYTES, FORMAT_VERSION, MAGIC, PREFIX_BYTES, SECTION_ALIGN, type SectionEntry, type SnapshotHeader, columnSectionName, hashBytes, recordChunkName, headerPackr, PARTITION_CODES_SECTION, PARTITION_COUNTS_SECTION, INDEX_FIELDS, INDEX_FIELD_TYPES, searchSectionName, columnSearchSectionName } from "./format.ts";

/** Why a snapshot was refused; its message names the file and the reason. */
export class SnapshotError extends Error {
  /**
   * @param file the snapshot's path
   * @param reason what is wrong, for a person
   */
  constructor(
    readonly file: string,
    readonly reason: string,
  ) {
    super(`${file}: ${reason}`);
    this.name = "SnapshotError";
  }
}

/** A loaded snapshot: the store plus what the header says about it. */
export interface LoadedSnapshot {
  store: Store;
  header: SnapshotHeader;
  /** The file's size, in bytes. */
  bytes: number;
  /** Time spent loading and verifying, in ms. */
  loadMs: number;
}

/** Load options. */
export interface LoadOptions {
  /**
   * Verify every section's xxHash3 (reads the whole file once: ~13 GB/s once cached).
   * Default true. Structure, bounds and the header CRC are always checked.
   */
  verify?: boolean;
  /**
   * Largest mapping, in bytes (default {@link MAX_WINDOW_BYTES}): a larger file is mapped in
   * windows of whole sections. Tests set a small one to map a small file in windows.
   */
  maxWindowBytes?: number;
}

/**
 * Largest mapping, in bytes: the runtime's largest ArrayBuffer is 4 GiB, so a larger file is
 * mapped in windows of whole sections, each at most this long (see {@link planWindows}).
 */
export const MAX_WINDOW_BYTES = 2 ** 32 - 4096;

/** Page size mappings are aligned to, in bytes. */
const PAGE_BYTES = 4096;

/** The bytes of a snapshot file: its length and a view of any section, wherever it is mapped. */
interface SnapshotBytes {
  /** The file's length, in bytes (may exceed 4 GiB). */
  length: number;
  /** The first bytes of the file (prefix and header), at least `min(length, want)` of them. */
  head(want: number): Uint8Array;
  /** A view of `byteLength` bytes at `offset` (a section), 8-byte aligned in its buffer. */
  view(offset: number, byteLength: number): Uint8Array;
}

/** One mapping of a large file: bytes [start, end) of the file, start page-aligned. */
export interface MapWindow {
  start: number;
  end: number;
}

/**
 * How a file larger than one mapping is mapped: windows of whole sections in file order, each at
 * most `maxWindow` bytes from its page-aligned start; a records chunk (`records.<c>`) starts a
 * window, so that chunk 0 and the scratch area after it share one (store/rows-json.ts).
 * Offsets are plain numbers: exact up to 2^53 bytes.
 * @param sections the header's entries with their byte lengths, in file order
 * @returns the windows, and for each section the index of the window holding it
 * @throws RangeError when one section alone does not fit a window
 */
export function planWindows(sections: readonly { name: string; offset: number; bytes: number }[], maxWindow = MAX_WINDOW_BYTES): { windows: MapWindow[]; windowOf: number[] } {
  const windows: MapWindow[] = [];
  const windowOf: number[] = [];
  for (const s of sections) {
    const last = windows[windows.length - 1];
    const end = s.offset + s.bytes;
    if (last !== undefined && !s.name.startsWith("records.") && end - last.start <= maxWindow) {
      last.end = Math.max(last.end, end);
    } else {
      const start = Math.floor(s.offset / PAGE_BYTES) * PAGE_BYTES;
      if (end - start > maxWindow) throw new RangeError(`section ${s.name} is ${s.bytes} bytes, more than one mapping holds`);
      windows.push({ start, end });
    }
    windowOf.push(windows.length - 1);
  }
  return { windows, windowOf };
}

/**
 * Maps and validates a snapshot file: in one mapping when it fits, else in windows of whole
 * sections ({@link planWindows}), so the file may be larger than 4 GiB.
 * @throws SnapshotError when the file is missing, truncated, corrupt (bad magic, header CRC,
 *   section bounds or hash), of another format version, or of another schema.
 */
export function loadSnapshot(path: string, options: LoadOptions = {}): LoadedSnapshot {
  const started = performance.now();
  let size: number;
  try {
    size = statSync(path).size;
  } catch (error) {
    throw new SnapshotError(path, `cannot map the file (${(error as Error).message})`);
  }
  const maxWindow = options.maxWindowBytes ?? MAX_WINDOW_BYTES;
  if (size <= maxWindow) {
    let file: Uint8Array;
    try {
      file = Bun.mmap(path, { shared: false });
    } catch (error) {
      throw new SnapshotError(path, `cannot map the file (${(error as Error).message})`);
    }
    return fromBytes(path, file, options, started);
  }
  return fromSource(path, windowedFile(path, size, maxWindow), options, started);
}

/** A file larger than one mapping: the head mapped at once, sections mapped by window on first use. */
function windowedFile(path: string, size: number, maxWindow: number): SnapshotBytes & { plan(entries: readonly SectionEntry[]): void } {
  const map = (offset: number, length: number): Uint8Array => {
    try {
      return Bun.mmap(path, { shared: false, offset, size: length });
    } catch (error) {
      throw new SnapshotError(path, `cannot map bytes ${offset}–${offset + length} (${(error as Error).message})`);
    }
  };
  let windows: MapWindow[] = [];
  const mapped: (Uint8Array | null)[] = [];
  return {
    length: size,
    head: (want) => map(0, Math.min(size, want)),
    plan(entries) {
      const planned = planWindows(
        entries.map((e) => ({ name: e.name, offset: e.offset, bytes: e.length * (ELEMENT_BYTES[e.type] ?? 1) })),
        maxWindow,
      );
      windows = planned.windows;
      mapped.length = 0;
      for (let i = 0; i < windows.length; i++) mapped.push(null);
    },
    view(offset, byteLength) {
      let w = 0;
      while (w < windows.length && !(offset >= windows[w].start && offset + byteLength <= windows[w].end)) w++;
      if (w === windows.length) throw new SnapshotError(path, `internal: no mapping holds bytes ${offset}–${offset + byteLength}`);
      let bytes = mapped[w];
      if (bytes === null) {
        bytes = map(windows[w].start, windows[w].end - windows[w].start);
        mapped[w] = bytes;
      }
      return bytes.subarray(offset - windows[w].start, offset - windows[w].start + byteLength);
    },
  };
}

/**
 * Validates snapshot bytes already in memory (a mapped or read file) and views them as a store.
 * @throws SnapshotError as {@link loadSnapshot}.
 */
export function fromBytes(path: string, file: Uint8Array, options: LoadOptions = {}, started = performance.now()): LoadedSnapshot {
  if (file.byteOffset % SECTION_ALIGN !== 0) throw new SnapshotError(path, "internal: buffer is not 8-byte aligned");
  return fromSource(path, { length: file.length, head: () => file, view: (offset, byteLength) => file.subarray(offset, offset + byteLength) }, options, started);
}

/** Validates a snapshot from its bytes, however they are mapped, and views them as a store. */
function fromSource(path: string, file: SnapshotBytes & { plan?(entries: readonly SectionEntry[]): void }, options: LoadOptions, started: number): LoadedSnapshot {
  const fail = (reason: string): never => {
    throw new SnapshotError(path, reason);
  };
  if (file.length < PREFIX_BYTES) fail(`not a snapshot: ${file.length} bytes is shorter than the ${PREFIX_BYTES}-byte prefix`);
  const prefix = file.head(PREFIX_BYTES);
  for (let i = 0; i < MAGIC.length; i++) {
    if (prefix[i] !== MAGIC[i]) fail("not a snapshot: bad magic (expected USERSNAP)");
  }
  const view = new DataView(prefix.buffer, prefix.byteOffset, PREFIX_BYTES);
  const headerLength = view.getUint32(8, true);
  const headerCrc = view.getUint32(12, true);
  if (PREFIX_BYTES + headerLength > file.length) fail(`truncated: the header needs ${headerLength} bytes, the file has ${file.length - PREFIX_BYTES}`);
  const headerBytes = file.head(PREFIX_BYTES + headerLength).subarray(PREFIX_BYTES, PREFIX_BYTES + headerLength);
  if (Bun.hash.crc32(headerBytes) !== headerCrc) fail("corrupt: header checksum mismatch");
  let header: SnapshotHeader;
  try {
    header = headerPackr.unpack(headerBytes) as SnapshotHeader;
  } catch (error) {
    return fail(`corrupt: header does not decode (${(error as Error).message})`);
  }
  if (header === null || typeof header !== "object" || header.format !== "users-listing-snapshot") fail("not a users-listing snapshot");
  if (header.formatVersion !== FORMAT_VERSION) {
    fail(`format version ${header.formatVersion} is not supported (this build reads version ${FORMAT_VERSION}); rebuild it with \`snapshot build\``);
  }
  const schemaProblem = checkSchema(header.schema);
  if (schemaProblem !== null) fail(`corrupt: ${schemaProblem}`);
  const rowCount = header.rowCount;
  if (!Number.isSafeInteger(rowCount) || rowCount < 0 || rowCount > 0xfffffffe) fail(`corrupt: bad row count ${rowCount}`);

  const byName = new Map<string, SectionEntry>();
  for (const entry of header.sections) byName.set(entry.name, entry);
  const verify = options.verify !== false;
  const hashes: string[] = [];
  for (const entry of header.sections) {
    const size = ELEMENT_BYTES[entry.type];
    if (size === undefined) fail(`corrupt: section ${entry.name} has unknown type ${entry.type}`);
    if (entry.offset % SECTION_ALIGN !== 0) fail(`corrupt: section ${entry.name} is not 8-byte aligned`);
    const end = entry.offset + entry.length * size;
    if (end > file.length) fail(`truncated: section ${entry.name} ends at byte ${end}, the file has ${file.length}`);
  }
  if (file.plan !== undefined) {
    try {
      file.plan(header.sections);
    } catch (error) {
      fail(`corrupt: ${(error as Error).message}`);
    }
  }
  for (const entry of header.sections) {
    if (verify && hashBytes(file.view(entry.offset, entry.length * ELEMENT_BYTES[entry.type])) !== entry.hash) fail(`corrupt: section ${entry.name} fails its checksum`);
    hashes.push(entry.hash);
  }
  if (hashBytes(new TextEncoder().encode(hashes.join(""))) !== header.checksum) fail("corrupt: snapshot checksum mismatch");

  const section = <T extends "u8" | "u32" | "f64">(name: string, type: T, length?: number) => {
    const entry = byName.get(name);
    if (!entry) return fail(`corrupt: section ${name} is missing`);
    if (entry.type !== type) fail(`corrupt: section ${name} has type ${entry.type}, expected ${type}`);
    if (length !== undefined && entry.length !== length) fail(`corrupt: section ${name} has ${entry.length} elements, expected ${length}`);
    const bytes = file.view(entry.offset, entry.length * ELEMENT_BYTES[type]);
    const at = bytes.byteOffset;
    return (
      type === "u8"
        ? new Uint8Array(bytes.buffer, at, entry.length)
        : type === "u32"
          ? new Uint32Array(bytes.buffer, at, entry.length)
          : new Float64Array(bytes.buffer, at, entry.length)
    ) as T extends "u8" ? Uint8Array : T extends "u32" ? Uint32Array : Float64Array;
  };

  const chunkShift = header.recordChunkShift;
  if (!Number.isInteger(chunkShift) || chunkShift < 0 || chunkShift > 31) fail(`corrupt: bad records chunk shift ${chunkShift}`);
  const chunkCount = Math.max(1, Math.ceil(rowCount / 2 ** chunkShift));
  const chunks: Uint8Array[] = [];
  for (let c = 0; c < chunkCount; c++) chunks.push(section(recordChunkName(c), "u8"));
  const records: Records = { chunkShift, chunks, offsets: section("recordOffsets", "u32", rowCount + chunkCount), scratch: section("bodyScratch", "u8") };
  for (let c = 0; c < chunkCount; c++) {
    // chunk c's offsets are at [first + c, last + c + 1]: from 0 to the chunk's length
    const first = c * 2 ** chunkShift + c;
    const last = Math.min(rowCount, (c + 1) * 2 ** chunkShift) + c;
    if (records.offsets[first] !== 0 || records.offsets[last] !== chunks[c].length) fail(`corrupt: recordOffsets does not span ${recordChunkName(c)}`);
  }
  let partition: Partition | null = null;
  if (header.schema.partition !== null) {
    const codes = section(PARTITION_CODES_SECTION, "u8", rowCount);
    const counts = section(PARTITION_COUNTS_SECTION, "u32");
    if (counts.length < 2 || counts.length > MAX_PARTITION_VALUES + 1) fail(`corrupt: ${PARTITION_COUNTS_SECTION} has ${counts.length} codes`);
    let counted = 0;
    for (let i = 0; i < counts.length; i++) counted += counts[i];
    if (counted !== rowCount) fail(`corrupt: ${PARTITION_COUNTS_SECTION} does not add up to the row count`);
    partition = { column: header.schema.partition, codes, counts };
  }
  const groups = partition?.counts.length ?? 1;
  /** Fails unless a trigram index's arrays agree in length (sections `<name>.*`). */
  const checkTrigrams = (index: TrigramIndex, name: string) => {
    const lists = index.keys.length;
    if (index.counts.length !== lists) fail(`corrupt: ${name}.counts length does not match ${name}.keys`);
    const cells = lists * groups;
    if (index.groupCounts.length !== cells || index.refs.length !== cells) fail(`corrupt: ${name}.groupCounts or ${name}.refs length is not ${name}.keys times the partition's codes`);
    if (index.bitmaps.length % Math.max(1, (rowCount + 31) >>> 5) !== 0) fail(`corrupt: ${name}.bitmaps is not a whole number of bitmaps`);
  };
  /** Elements a part must have, when its length is fixed by the row count. */
  const partLength = (part: StoredPart, key: boolean): number | undefined => {
    switch (part) {
      case "rankByRow":
      case "rowsByValue":
      case "rowsByValueByPartition":
      case "rowsByAbsValue":
        return rowCount;
      case "foldedOffsets":
      case "rawOffsets":
        return rowCount + 1;
      case "blank":
        return (rowCount + 31) >>> 5;
      case "distinct":
        return key ? rowCount : undefined;
      default:
        return undefined;
    }
  };
  const columns = new Map<string, StoredColumn>();
  for (const spec of header.schema.columns) {
    const key = spec.id === header.schema.key;
    const column = emptyStoredColumn(spec, key);
    const required = new Set(KINDS[spec.kind].parts({ key }));
    for (const part of ALL_PARTS) {
      const name = columnSectionName(spec.id, part);
      if (!required.has(part) && !byName.has(name)) continue;
      setPart(column, part, section(name, PART_TYPES[part], partLength(part, key)));
    }
    for (const part of required) if (partOf(column, part) === null) fail(`corrupt: column ${spec.id} lacks its ${part}`);
    const starts = column.rankStarts;
    if (starts !== null && (starts.length < 2 || starts[starts.length - 1] !== rowCount)) fail(`corrupt: column ${spec.id}'s rank starts do not end at the row count`);
    if (column.distinct !== null && starts !== null && starts.length !== column.distinct.length + 2) fail(`corrupt: column ${spec.id} has ${column.distinct.length} distinct values but ${starts.length} rank starts`);
    if (column.foldedOffsets !== null && column.folded !== null && column.foldedOffsets[rowCount] !== column.folded.length) fail(`corrupt: column ${spec.id}'s folded offsets do not span its bytes`);
    if (column.rawOffsets !== null && column.raw !== null && column.rawOffsets[rowCount] !== column.raw.length) fail(`corrupt: column ${spec.id}'s raw offsets do not span its bytes`);
    if (column.trigrams !== null) checkTrigrams(column.trigrams, columnSectionName(spec.id, "trigrams"));
    if (column.rowsByValueByPartition !== null && partition === null) fail(`corrupt: column ${spec.id} has a per-partition order but the snapshot has no partition`);
    columns.set(spec.id, column);
  }
  if (partition !== null) {
    const column = columns.get(partition.column) as StoredColumn;
    if (column.rankStarts === null || column.rankStarts.length - 1 !== partition.counts.length) fail(`corrupt: the partition's codes do not match column ${partition.column}'s values`);
  }
  const grams = [1, 2, 3].map((n) => {
    const index = {} as Record<(typeof INDEX_FIELDS)[number], Uint8Array | Uint32Array | Float64Array>;
    for (const field of INDEX_FIELDS) index[field] = section(searchSectionName(n, field), INDEX_FIELD_TYPES[field]);
    const lists = index as unknown as TrigramIndex;
    checkTrigrams(lists, `search.${n}`);
    return lists;
  }) as unknown as SearchIndex["grams"];
  const own = new Map<string, readonly [TrigramIndex, TrigramIndex]>();
  for (const column of searchIndexColumns(searchableColumns(columns, header.schema))) {
    const id = column.spec.id;
    const pair = ([1, 2] as const).map((n) => {
      const index = {} as Record<(typeof INDEX_FIELDS)[number], Uint8Array | Uint32Array | Float64Array>;
      for (const field of INDEX_FIELDS) index[field] = section(columnSearchSectionName(id, n, field), INDEX_FIELD_TYPES[field]);
      const lists = index as unknown as TrigramIndex;
      checkTrigrams(lists, `col.${id}.search.${n}`);
      return lists;
    });
    own.set(id, [pair[0], pair[1]]);
    if (column.trigrams === null) fail(`corrupt: column ${id} is searched through the search index but lacks its trigrams`);
  }
  const store: Store = {
    rowCount,
    schema: header.schema,
    columns,
    partition,
    searchable: searchableColumns(columns, header.schema),
    search: { grams, columns: own },
    records,
    snapshotId: header.checksum,
  };
  return { store, header, bytes: file.length, loadMs: performance.now() - started };
}

/**
 * What is wrong with a header's schema, or null: columns of known kinds with valid, distinct ids;
 * enum values present on enums only; a key that is one of the columns and of a key kind; a
 * partition that is null or an enum column.
 */
function checkSchema(schema: unknown): string | null {
  if (typeof schema !== "object" || schema === null || !Array.isArray((schema as Schema).columns)) return "the header has no schema";
  const { columns, key, partition } = schema as Schema;
  const seen = new Map<string, string>();
  for (const c of columns) {
    if (typeof c !== "object" || c === null || typeof c.id !== "string" || !COLUMN_ID.test(c.id)) return `a column id ${JSON.stringify(c?.id)} is not valid`;
    if (seen.has(c.id)) return `column ${c.id} is listed twice`;
    if (!(COLUMN_KINDS as readonly string[]).includes(c.kind)) return `column ${c.id} has an unknown kind ${JSON.stringify(c.kind)}`;
    seen.set(c.id, c.kind);
    if (listsValues(c.kind) !== Array.isArray(c.values)) return `column ${c.id}'s values do not fit its kind`;
  }
  const keyKind = typeof key === "string" ? seen.get(key) : undefined;
  if (keyKind === undefined || KINDS[keyKind as ColumnKind].key === null) return `the key ${JSON.stringify(key)} is not a number or text column of the schema`;
  const partitionKind = typeof partition === "string" ? seen.get(partition) : undefined;
  if (partition !== null && (partitionKind === undefined || KINDS[partitionKind as ColumnKind].partitionValues === null)) return `the partition column ${JSON.stringify(partition)} is not an enum column of the schema`;
  return null;
}
