/**
 * The row-major records section: every row's JSON record, built once by the snapshot builder,
 * so that serving a page is one bulk copy a row (store/rows-json.ts). A column-wise writer
 * reads 6 places a row (id, status, two offsets, two literals), each a cache and TLB miss on a
 * random row of a large store, and copies literals with JS loops; a record is 2 places (its
 * offset and its bytes) and one `copyWithin`. At 10M rows, 100 random rows serialize in about
 * 6 µs instead of 18 µs (in process, warm).
 *
 * Building the records is the one place that writes ids and literals as JSON by hand: ids two
 * digits a step with int32 arithmetic, keys and status tails as constant 32-bit words.
 */
import { STATUS_VALUES, type StringColumnId } from "../schema.ts";
import type { ByteColumn } from "../bits/byte-column.ts";
import type { Records, Store } from "./types.ts";

const encoder = new TextEncoder();
// ignoreBOM: a value may start with U+FEFF, which is kept
const decoder = new TextDecoder("utf-8", { ignoreBOM: true });

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

/** The 4 bytes of `text` at `at` (ASCII) as a little-endian int32, for `DataView.setInt32(…, true)`. */
function word(text: string, at: number): number {
  return text.charCodeAt(at) | (text.charCodeAt(at + 1) << 8) | (text.charCodeAt(at + 2) << 16) | (text.charCodeAt(at + 3) << 24);
}

/** A constant piece of a record: whole 32-bit words, then the remaining bytes. */
interface Piece {
  /** Bytes in all. */
  length: number;
  /** The first `floor(length / 4) * 4` bytes as little-endian int32 words. */
  words: Int32Array;
  /** The last `length % 4` bytes. */
  rest: Uint8Array;
}

function piece(text: string): Piece {
  const whole = text.length >> 2;
  return {
    length: text.length,
    words: Int32Array.from({ length: whole }, (_, i) => word(text, i * 4)),
    rest: encoder.encode(text.slice(whole * 4)),
  };
}

// '{"id":' is 6 bytes: one word and one 16-bit half word.
const ID_KEY_WORD = word('{"id":', 0);
const ID_KEY_HALF = 0x3a22; // '":' little-endian
const ID_KEY_LENGTH = 6;
// ',"name":' is 8 bytes: two words.
const NAME_KEY_WORD0 = word(',"name":', 0);
const NAME_KEY_WORD1 = word(',"name":', 4);
const NAME_KEY_LENGTH = 8;
// ',"email":' is 9 bytes: two words and a ':'.
const EMAIL_KEY_WORD0 = word(',"email":', 0);
const EMAIL_KEY_WORD1 = word(',"email":', 4);
const COLON = 0x3a;
const EMAIL_KEY_LENGTH = 9;
/** `,"status":"<value>"}` per status code. */
const STATUS_TAILS: Piece[] = STATUS_VALUES.map((v) => piece(`,"status":"${v}"}`));
/** `,"status":"<value>"` per status code: the tail when more fields follow. */
const STATUS_MIDDLES: Piece[] = STATUS_VALUES.map((v) => piece(`,"status":"${v}"`));
/** Byte that closes a record ('}'). */
const CLOSE = 0x7d;

/** A field after the seed's four in every record: its key and each row's value as JSON text. */
export interface RecordField {
  /** The column id (the record's key). */
  id: string;
  /** Each row's value as JSON text (src/kinds: kind.ts `literals`), UTF-8, in row order; n values. */
  literals: ByteColumn;
}
/** Fixed bytes of one record: keys and punctuation, without the values and the status tail. */
const RECORD_FIXED = ID_KEY_LENGTH + NAME_KEY_LENGTH + EMAIL_KEY_LENGTH;
/** Byte every JSON string literal starts and ends with ('"'). */
const QUOTE = 0x22;
const BACKSLASH = 0x5c;

/** "00" … "99" as little-endian 16-bit words, for writing two digits with one store. */
const DIGIT_PAIRS = Uint16Array.from({ length: 100 }, (_, i) => (0x30 + Math.floor(i / 10)) | ((0x30 + (i % 10)) << 8));

/** Largest id written with int32 arithmetic; the others go through String(id). */
const MAX_INT32 = 0x7fffffff;

/** Decimal digits of an integer 0 ≤ x ≤ 2^31 - 1. */
function digitCount(x: number): number {
  // a compare chain: cheaper than dividing
  if (x < 100000) return x < 10 ? 1 : x < 100 ? 2 : x < 1000 ? 3 : x < 10000 ? 4 : 5;
  return x < 1000000 ? 6 : x < 10000000 ? 7 : x < 100000000 ? 8 : x < 1000000000 ? 9 : 10;
}

/** True for an id written by hand: an int32 other than -2^31 (whose negation is no int32). */
function isSmallInteger(id: number): boolean {
  return (id | 0) === id && id >= -MAX_INT32;
}

/** Length of String(id) (JSON's form of a finite number), in bytes (ASCII). */
function idLength(id: number): number {
  if (isSmallInteger(id)) return id < 0 ? 1 + digitCount(-id) : digitCount(id);
  return String(id).length;
}

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
 * Builds every row's record from the columns in row order, in chunks of 2^shift rows (one chunk
 * unless the records exceed `maxChunkBytes`), the first chunk's ArrayBuffer also holding, after
 * it, a zeroed scratch area of `scratchBytes`.
 * @param ids each row's id (finite numbers); length n
 * @param statusCodes each row's status code; length n
 * @param names each row's name as a JSON string literal (byte-column.ts `packJsonLiterals`); n values
 * @param emails each row's email as a JSON string literal; n values
 * @param scratchBytes the scratch area's length, in bytes; default {@link scratchBytesFor}
 * @param fields the columns beyond the seed's four, in schema order: each record gets
 *   `,"<id>":<literal>` for each, after `status` (docs/api.md: records have every column, in schema order)
 * @param maxChunkBytes the largest chunk, in bytes (default {@link MAX_CHUNK_BYTES}; tests use tiny ones)
 * @param windowBytes the builder's write window, in bytes (default 2^31 − 1; tests use tiny ones):
 *   it moves on at a record's start past half of it, so a record may be up to half of it long
 * @throws RangeError when one record alone exceeds `maxChunkBytes` or half of `windowBytes` (1 GiB)
 */
export function buildRecords(
  ids: Float64Array,
  statusCodes: Uint8Array,
  names: ByteColumn,
  emails: ByteColumn,
  scratchBytes?: number,
  fields: readonly RecordField[] = [],
  maxChunkBytes: number = MAX_CHUNK_BYTES,
  windowBytes: number = WINDOW_BYTES,
): Records {
  const moveAt = Math.floor(windowBytes / 2);
  const n = ids.length;
  const nameOffsets = names.offsets;
  const emailOffsets = emails.offsets;
  const tails = fields.length === 0 ? STATUS_TAILS : STATUS_MIDDLES;
  const keys = fields.map((f) => encoder.encode(`,${JSON.stringify(f.id)}:`));
  const sizes = new Uint32Array(n);
  let size = 0;
  const fixed = RECORD_FIXED + (fields.length > 0 ? 1 : 0);
  for (let row = 0; row < n; row++) {
    let length = fixed + idLength(ids[row]) + tails[statusCodes[row]].length;
    length += nameOffsets[row + 1] - nameOffsets[row] + emailOffsets[row + 1] - emailOffsets[row];
    for (let f = 0; f < fields.length; f++) {
      const o = fields[f].literals.offsets;
      length += keys[f].length + o[row + 1] - o[row];
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
  const nameBytes = names.bytes;
  const emailBytes = emails.bytes;
  const nameView = new DataView(nameBytes.buffer, nameBytes.byteOffset, nameBytes.byteLength);
  const emailView = new DataView(emailBytes.buffer, emailBytes.byteOffset, emailBytes.byteLength);
  let out = new Uint8Array(0);
  let view = new DataView(out.buffer);
  // `out` and `view` are a window of the chunk from `base`, so that every index written is below
  // 2^31 (a typed array indexed past that takes the engine's slow path: at 10M wide rows the
  // records took 40 s instead of 5); `at` is the position in the window.
  let at = 0;
  let base = 0;
  let chunk = -1;
  let chunkBuffer = new ArrayBuffer(0);
  let chunkSize = 0;
  /** Views the chunk from `from` on (at most WINDOW_BYTES). */
  const window = (from: number) => {
    base = from;
    out = new Uint8Array(chunkBuffer, base, Math.min(chunkSize - base, windowBytes));
    view = new DataView(chunkBuffer, base, out.length);
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
    view.setInt32(at, ID_KEY_WORD, true);
    view.setUint16(at + 4, ID_KEY_HALF, true);
    at += ID_KEY_LENGTH;
    at = writeId(out, view, at, ids[row]);

    view.setInt32(at, NAME_KEY_WORD0, true);
    view.setInt32(at + 4, NAME_KEY_WORD1, true);
    at += NAME_KEY_LENGTH;
    at = copyLiteral(nameBytes, nameView, nameOffsets[row], nameOffsets[row + 1], out, view, at);

    view.setInt32(at, EMAIL_KEY_WORD0, true);
    view.setInt32(at + 4, EMAIL_KEY_WORD1, true);
    out[at + 8] = COLON;
    at += EMAIL_KEY_LENGTH;
    at = copyLiteral(emailBytes, emailView, emailOffsets[row], emailOffsets[row + 1], out, view, at);

    const tail = tails[statusCodes[row]];
    const words = tail.words;
    const rest = tail.rest;
    for (let k = 0; k < words.length; k++, at += 4) view.setInt32(at, words[k], true);
    for (let k = 0; k < rest.length; k++) out[at++] = rest[k];
    if (fields.length > 0) {
      for (let f = 0; f < fields.length; f++) {
        const key = keys[f];
        for (let k = 0; k < key.length; k++) out[at++] = key[k];
        const { bytes, offsets: o } = fields[f].literals;
        const to = o[row + 1];
        for (let j = o[row]; j < to; j++) out[at++] = bytes[j];
      }
      out[at++] = CLOSE;
    }
    offsets[row + chunk + 1] = base + at;
  }
  return { chunkShift: shift, chunks, offsets, scratch };
}

/** Writes String(id) at `at`; returns the end. */
function writeId(out: Uint8Array, view: DataView, at: number, id: number): number {
  if (!isSmallInteger(id)) {
    const text = String(id);
    for (let k = 0; k < text.length; k++) out[at++] = text.charCodeAt(k);
    return at;
  }
  let x = id;
  if (x < 0) {
    out[at++] = 0x2d; // '-'
    x = -x;
  }
  // two digits a step, from the last: half the (slow) integer divisions of one a step
  const end = at + digitCount(x);
  let p = end;
  while (x >= 100) {
    const rest = (x / 100) | 0;
    p -= 2;
    view.setUint16(p, DIGIT_PAIRS[x - rest * 100], true);
    x = rest;
  }
  if (x >= 10) view.setUint16(p - 2, DIGIT_PAIRS[x], true);
  else out[p - 1] = 0x30 + x; // '0' + x
  return end;
}

/** Copies `source[from .. to)` to `out` at `at`, 4 bytes a step; returns the end. */
function copyLiteral(source: Uint8Array, sourceView: DataView, from: number, to: number, out: Uint8Array, view: DataView, at: number): number {
  if (to <= from || source[from] !== QUOTE) throw new Error("corrupt column: a value is not a JSON string literal");
  let j = from;
  for (; j + 4 <= to; j += 4, at += 4) view.setInt32(at, sourceView.getInt32(j, true), true);
  for (; j < to; j++) out[at++] = source[j];
  return at;
}

/**
 * The end (one past the closing quote) of the JSON string literal starting at `start`, or -1
 * when it does not close before `limit`.
 */
function literalEnd(bytes: Uint8Array, start: number, limit: number): number {
  for (let p = start + 1; p < limit; p++) {
    const b = bytes[p];
    if (b === QUOTE) return p + 1;
    if (b === BACKSLASH) p++;
  }
  return -1;
}

/**
 * Row `row`'s value of a string column, decoded from its record (for the few paths that need a
 * raw value: the blank filter's check, tools and tests).
 * @throws Error when the record is corrupt (not the layout {@link buildRecords} writes)
 */
export function stringValueAt(store: Store, column: StringColumnId, row: number): string {
  const { bytes, start: recordStart, end } = recordSpan(store.records, row);
  const corrupt = () => new Error(`corrupt store: record ${row} does not have its ${column} where expected`);
  let start = recordStart + ID_KEY_LENGTH + idLength(store.ids[row]) + NAME_KEY_LENGTH;
  if (column === "email") {
    const nameEnd = bytes[start] === QUOTE ? literalEnd(bytes, start, end) : -1;
    if (nameEnd < 0) throw corrupt();
    start = nameEnd + EMAIL_KEY_LENGTH;
  }
  const stop = start < end && bytes[start] === QUOTE ? literalEnd(bytes, start, end) : -1;
  if (stop < 0) throw corrupt();
  return JSON.parse(decoder.decode(bytes.subarray(start, stop))) as string;
}

/**
 * Where row `row`'s record is: its chunk's bytes and the record's [start, end) in them, in bytes
 * (see {@link Records}). For the paths that read one record; page bodies go through rows-json.ts.
 */
export function recordSpan(records: Records, row: number): { bytes: Uint8Array; start: number; end: number } {
  const c = row >>> records.chunkShift;
  return { bytes: records.chunks[c], start: records.offsets[row + c], end: records.offsets[row + c + 1] };
}
