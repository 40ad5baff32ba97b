/**
 * The row-major records section: every row's JSON record, built once by the snapshot builder,
 * so that serving a page is one bulk copy a row (store/rows-json.ts). A column-wise writer
 * reads two places a row per column (an offset and a literal), each a cache and TLB miss on a
 * random row of a large store; a record is 2 places (its offset and its bytes) and one
 * `copyWithin`. At 10M rows, 100 random rows of the seed's four serialize in about 6 µs instead
 * of 18 µs (in process, warm).
 */
import type { ByteColumn } from "../bits/byte-column.ts";
import type { ExtraRecords, Records } from "./types.ts";

const encoder = new TextEncoder();

/**
 * Largest records chunk, in bytes: under 4 GiB (the runtime's largest ArrayBuffer, and what a
 * Uint32 offset addresses) less room for the scratch area that shares chunk 0's buffer and the
 * snapshot loader's page alignment (snapshot/load.ts maps chunk 0 and the scratch area together).
 */
export const MAX_CHUNK_BYTES = 2 ** 32 - 16 * 1024 * 1024;

/** Longest window the records builder writes through, in bytes: indexes stay below 2^31. */
const WINDOW_BYTES = 2 ** 31 - 1;

/** Most rows a store may have: row numbers and permutations are Uint32. */
const MAX_CHUNK_SHIFT = 31;

/** Largest scratch area a build reserves, in bytes (a 1,000-row body of 4 KiB records). */
export const MAX_SCRATCH_BYTES = 4 * 1024 * 1024;

/** Room in the scratch area for a body's prefix and suffix (GET's meta echoes the query), in bytes. */
const SCRATCH_SLACK = 4 * 1024;

/**
 * The scratch area a build reserves: enough for a body of every row (no page is larger), capped
 * at {@link MAX_SCRATCH_BYTES}.
 * @param recordBytes the records' total length, in bytes
 * @param rowCount rows in the store
 * @returns a byte count, a multiple of 8
 */
export function scratchBytesFor(recordBytes: number, rowCount: number): number {
  return Math.ceil(Math.min(MAX_SCRATCH_BYTES, recordBytes + rowCount + SCRATCH_SLACK) / 8) * 8;
}

/** A field of every record: its key and each row's value as JSON text. */
export interface RecordField {
  /** The column id (the record's key). */
  id: string;
  /** Each row's value as JSON text (src/kinds: kind.ts `literals`), UTF-8, in row order; n values. */
  literals: ByteColumn;
}

/** Byte that closes a record ('}'). */
const CLOSE = 0x7d;

/**
 * The largest chunk shift (rows per chunk 2^shift) at which no chunk of records exceeds `limit`
 * bytes: one chunk (shift 31) whenever the records fit, else halving the rows per chunk.
 * @param sizes each row's record length in bytes; length n
 * @throws RangeError when a single record exceeds `limit`
 */
export function chooseChunkShift(sizes: Uint32Array, limit: number): number {
  for (let shift = MAX_CHUNK_SHIFT; shift >= 0; shift--) {
    let largest = 0;
    let sum = 0;
    for (let row = 0; row < sizes.length; row++) {
      if (row % 2 ** shift === 0) sum = 0;
      sum += sizes[row];
      if (sum > largest) largest = sum;
    }
    if (largest <= limit) return shift;
  }
  throw new RangeError(`a record is longer than ${limit} bytes`);
}

/**
 * Builds every row's record from the columns' JSON literals in row order, in chunks of 2^shift
 * rows (one chunk unless the records exceed `maxChunkBytes`), the first chunk's ArrayBuffer also
 * holding, after it, a zeroed scratch area of `scratchBytes`. A record is
 * `{"<id0>":<literal>,"<id1>":<literal>,…}`: what `JSON.stringify` writes of an object of every
 * column in schema order (docs/api.md: records have every column, in schema order).
 * @param fields the columns in schema order, each with n literals
 * @param rowCount rows, n
 * @param scratchBytes the scratch area's length, in bytes; default {@link scratchBytesFor}
 * @param maxChunkBytes the largest chunk, in bytes (default {@link MAX_CHUNK_BYTES}; tests use tiny ones)
 * @param windowBytes the builder's write window, in bytes (default 2^31 − 1; tests use tiny ones):
 *   it moves on at a record's start past half of it, so a record may be up to half of it long
 * @throws RangeError when one record alone exceeds `maxChunkBytes` or half of `windowBytes` (1 GiB)
 */
export function buildRecords(
  fields: readonly RecordField[],
  rowCount: number,
  scratchBytes?: number,
  maxChunkBytes: number = MAX_CHUNK_BYTES,
  windowBytes: number = WINDOW_BYTES,
): Records {
  const moveAt = Math.floor(windowBytes / 2);
  const n = rowCount;
  // `{"a":` for the first field, `,"b":` for the others
  const keys = fields.map((f, i) => encoder.encode(`${i === 0 ? "{" : ","}${JSON.stringify(f.id)}:`));
  const literalBytes = fields.map((f) => f.literals.bytes);
  const literalOffsets = fields.map((f) => f.literals.offsets);
  const sizes = new Uint32Array(n);
  let size = 0;
  let fixed = 1;
  for (const key of keys) fixed += key.length;
  if (fields.length === 0) fixed = 2;
  for (let row = 0; row < n; row++) {
    let length = fixed;
    for (let f = 0; f < fields.length; f++) {
      const o = literalOffsets[f];
      length += o[row + 1] - o[row];
    }
    if (length > windowBytes - moveAt) throw new RangeError(`record of row ${row} is ${length} bytes long; at most ${windowBytes - moveAt}`);
    sizes[row] = length;
    size += length;
  }
  const shift = size <= maxChunkBytes ? MAX_CHUNK_SHIFT : chooseChunkShift(sizes, maxChunkBytes);
  const chunkRows = 2 ** shift;
  const chunkCount = Math.max(1, Math.ceil(n / chunkRows));
  const offsets = new Uint32Array(n + chunkCount);
  const chunks: Uint8Array[] = [];
  let scratch = new Uint8Array(0);
  let out = new Uint8Array(0);
  // `out` is a window of the chunk from `base`, so that every index written is below 2^31 (a
  // typed array indexed past that takes the engine's slow path: at 10M wide rows the records
  // took 40 s instead of 5); `at` is the position in the window.
  let at = 0;
  let base = 0;
  let chunk = -1;
  let chunkBuffer = new ArrayBuffer(0);
  let chunkSize = 0;
  /** Views the chunk from `from` on (at most WINDOW_BYTES). */
  const window = (from: number) => {
    base = from;
    out = new Uint8Array(chunkBuffer, base, Math.min(chunkSize - base, windowBytes));
    at = 0;
  };
  /** Starts chunk c: a buffer of its rows' bytes (and, for chunk 0, the scratch area). */
  const startChunk = (c: number) => {
    chunkSize = 0;
    const end = Math.min(n, (c + 1) * chunkRows);
    for (let row = c * chunkRows; row < end; row++) chunkSize += sizes[row];
    const aligned = Math.ceil(chunkSize / 8) * 8;
    const scratchLength = c === 0 ? (scratchBytes ?? scratchBytesFor(size, n)) : 0;
    chunkBuffer = new ArrayBuffer(aligned + scratchLength);
    if (c === 0) scratch = new Uint8Array(chunkBuffer, aligned, scratchLength);
    chunks.push(new Uint8Array(chunkBuffer, 0, chunkSize));
    window(0);
    chunk = c;
  };
  startChunk(0);
  for (let row = 0; row < n; row++) {
    if (row >>> shift !== chunk) startChunk(row >>> shift);
    else if (at >= moveAt) window(base + at);
    if (fields.length === 0) out[at++] = 0x7b; // '{'
    for (let f = 0; f < fields.length; f++) {
      const key = keys[f];
      for (let k = 0; k < key.length; k++) out[at++] = key[k];
      const bytes = literalBytes[f];
      const o = literalOffsets[f];
      const from = o[row];
      const to = o[row + 1];
      // a short literal byte by byte; a long one by one native copy
      if (to - from <= 16) for (let j = from; j < to; j++) out[at++] = bytes[j];
      else {
        out.set(bytes.subarray(from, to), at);
        at += to - from;
      }
    }
    out[at++] = CLOSE;
    offsets[row + chunk + 1] = base + at;
  }
  return { chunkShift: shift, chunks, offsets, scratch };
}

/**
 * Where row `row`'s record is: its chunk's bytes and the record's [start, end) in them, in bytes
 * (see {@link Records}). For the paths that read one record; page bodies go through rows-json.ts.
 */
export function recordSpan(records: Records, row: number): { bytes: Uint8Array; start: number; end: number } {
  const c = row >>> records.chunkShift;
  return { bytes: records.chunks[c], start: records.offsets[row + c], end: records.offsets[row + c + 1] };
}

/**
 * Where row `row`'s record is, among the store's records or `extra`'s (a live replica's changed
 * rows, from `extra.first` on): writes its [start, end) into `span` (bytes) and returns the bytes
 * that hold it. Allocates nothing: what the row writers' loops read each row's record with
 * (rows-json.ts, rows-export.ts).
 * @param span receives the start and end; length ≥ 2
 */
export function recordIn(records: Records, extra: ExtraRecords | null, row: number, span: Float64Array): Uint8Array {
  if (extra !== null && row >= extra.first) {
    span[0] = extra.offsets[row - extra.first];
    span[1] = extra.offsets[row - extra.first + 1];
    return extra.bytes;
  }
  const c = row >>> records.chunkShift;
  span[0] = records.offsets[row + c];
  span[1] = records.offsets[row + c + 1];
  return records.chunks[c];
}

/** The bytes of the records of `rows` (the store's, or `extra`'s from `extra.first` on), in bytes. */
export function recordsLength(records: Records, rows: Uint32Array, extra: ExtraRecords | null): number {
  const { offsets, chunkShift } = records;
  let total = 0;
  for (let i = 0; i < rows.length; i++) {
    const row = rows[i];
    if (extra !== null && row >= extra.first) total += extra.offsets[row - extra.first + 1] - extra.offsets[row - extra.first];
    else {
      const c = row >>> chunkShift;
      total += offsets[row + c + 1] - offsets[row + c];
    }
  }
  return total;
}
