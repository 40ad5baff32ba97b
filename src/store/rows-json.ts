/**
 * Serializes rows straight from the columns to JSON bytes: the string columns already hold
 * JSON literals, so a page is byte copies plus the ids' decimal forms, with no parse or
 * stringify of records and no allocation per row on the hot path.
 *
 * Per row this costs about 100 bytes of copies, so the copies are what is tuned: literals move
 * 4 bytes at a time through DataViews (JSC compiles unaligned `getInt32`/`setInt32` to single
 * loads and stores; a byte loop is 4 times the work), the keys are constant 32-bit words, and
 * integer ids are written two digits a step with int32 arithmetic (a double `%` is a library
 * call per digit).
 * A first pass over the rows sizes the body exactly and, by reading every row's offsets, id,
 * status and first literal byte in a loop with no dependency between rows, lets the CPU fetch
 * the rows' cache lines in parallel instead of one miss at a time in the copy loop.
 */
import { STATUS_VALUES, type UserRecord } from "../schema.ts";
import type { Store } from "./types.ts";

const encoder = new TextEncoder();
const decoder = new TextDecoder();

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
/** Fixed bytes of one record: keys and punctuation, without the values and the status tail. */
const RECORD_FIXED = ID_KEY_LENGTH + NAME_KEY_LENGTH + EMAIL_KEY_LENGTH;
/** Byte every JSON string literal starts with ('"'). */
const QUOTE = 0x22;

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

/** Length of String(id), in bytes (ASCII). */
function idLength(id: number): number {
  if (isSmallInteger(id)) return id < 0 ? 1 + digitCount(-id) : digitCount(id);
  return String(id).length;
}

/**
 * A reusable output buffer for bodies written by {@link writeRowsJsonInto}: grows to the
 * largest body written and never shrinks. Plain data; one per server.
 */
export interface BodyBuffer {
  bytes: Uint8Array<ArrayBuffer>;
  /** A DataView over all of `bytes`. */
  view: DataView<ArrayBuffer>;
}

/** A body buffer of `capacity` bytes (it grows as needed). */
export function createBodyBuffer(capacity = 64 * 1024): BodyBuffer {
  const bytes = new Uint8Array(capacity);
  return { bytes, view: new DataView(bytes.buffer) };
}

/**
 * The exact byte length of `prefix + [records] + suffix` for `rows`. Reads each row's
 * offsets, id, status and first literal byte in a loop with no dependency between rows
 * (see the module comment).
 * @throws Error when a string column does not hold JSON literals (a corrupt store)
 */
function bodyLength(store: Store, rows: Uint32Array, prefix: Uint8Array, suffix: Uint8Array): number {
  const nameOffsets = store.strings.name.jsonOffsets;
  const emailOffsets = store.strings.email.jsonOffsets;
  const nameBytes = store.strings.name.json;
  const emailBytes = store.strings.email.json;
  const ids = store.ids;
  const codes = store.statusCodes;
  const count = rows.length;
  let size = prefix.length + suffix.length + 2 + (count > 0 ? count - 1 : 0) + count * RECORD_FIXED;
  let firstBytes = 0;
  for (let i = 0; i < count; i++) {
    const row = rows[i];
    const name = nameOffsets[row];
    const email = emailOffsets[row];
    size += nameOffsets[row + 1] - name + (emailOffsets[row + 1] - email) + STATUS_TAILS[codes[row]].length + idLength(ids[row]);
    firstBytes |= nameBytes[name] | emailBytes[email];
  }
  if (count > 0 && firstBytes !== QUOTE) throw new Error("corrupt store: a string column value is not a JSON string literal");
  return size;
}

/**
 * Writes `prefix + [record, …] + suffix` into `out` from byte 0; `out` has at least the
 * body's length ({@link bodyLength}). Returns the body's length, in bytes.
 */
function writeBody(store: Store, rows: Uint32Array, prefix: Uint8Array, suffix: Uint8Array, out: Uint8Array, view: DataView): number {
  const nameBytes = store.strings.name.json;
  const emailBytes = store.strings.email.json;
  const nameOffsets = store.strings.name.jsonOffsets;
  const emailOffsets = store.strings.email.jsonOffsets;
  const names = new DataView(nameBytes.buffer, nameBytes.byteOffset, nameBytes.byteLength);
  const emails = new DataView(emailBytes.buffer, emailBytes.byteOffset, emailBytes.byteLength);
  const ids = store.ids;
  const codes = store.statusCodes;
  out.set(prefix, 0);
  let at = prefix.length;
  out[at++] = 0x5b; // '['
  for (let i = 0; i < rows.length; i++) {
    const row = rows[i];
    if (i > 0) out[at++] = 0x2c; // ','
    view.setInt32(at, ID_KEY_WORD, true);
    view.setUint16(at + 4, ID_KEY_HALF, true);
    at += ID_KEY_LENGTH;

    const id = ids[row];
    if (isSmallInteger(id)) {
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
      at = end;
    } else {
      const text = String(id);
      for (let k = 0; k < text.length; k++) out[at++] = text.charCodeAt(k);
    }

    view.setInt32(at, NAME_KEY_WORD0, true);
    view.setInt32(at + 4, NAME_KEY_WORD1, true);
    at += NAME_KEY_LENGTH;
    // inlined copy, 4 bytes a step (cheaper than subarray + set for literals of tens of bytes)
    let j = nameOffsets[row];
    let end = nameOffsets[row + 1];
    for (; j + 4 <= end; j += 4, at += 4) view.setInt32(at, names.getInt32(j, true), true);
    for (; j < end; j++) out[at++] = nameBytes[j];

    view.setInt32(at, EMAIL_KEY_WORD0, true);
    view.setInt32(at + 4, EMAIL_KEY_WORD1, true);
    out[at + 8] = COLON;
    at += EMAIL_KEY_LENGTH;
    j = emailOffsets[row];
    end = emailOffsets[row + 1];
    for (; j + 4 <= end; j += 4, at += 4) view.setInt32(at, emails.getInt32(j, true), true);
    for (; j < end; j++) out[at++] = emailBytes[j];

    const tail = STATUS_TAILS[codes[row]];
    const words = tail.words;
    const rest = tail.rest;
    for (let k = 0; k < words.length; k++, at += 4) view.setInt32(at, words[k], true);
    for (let k = 0; k < rest.length; k++) out[at++] = rest[k];
  }
  out[at++] = 0x5d; // ']'
  out.set(suffix, at);
  return at + suffix.length;
}

/**
 * Writes `prefix + [record, …] + suffix` as one UTF-8 JSON byte array for `rows` (row
 * numbers, in order); each record is `{"id":…,"name":…,"email":…,"status":…}`, the seed's
 * user record.
 * @param prefix bytes before the array (e.g. `{"data":`), or empty
 * @param suffix bytes after it (e.g. `,"total":42}`), or empty
 * @returns a new byte array of exactly the body's length
 * @throws Error when the store's string columns are corrupt (not JSON literals)
 */
export function writeRowsJson(store: Store, rows: Uint32Array, prefix: Uint8Array, suffix: Uint8Array): Uint8Array<ArrayBuffer> {
  const out = new Uint8Array(bodyLength(store, rows, prefix, suffix));
  writeBody(store, rows, prefix, suffix, out, new DataView(out.buffer));
  return out;
}

/**
 * {@link writeRowsJson} into a reusable buffer, with no allocation of the body: for a caller
 * that copies the bytes before the next write (a `Response` built from a byte array copies it).
 * @returns a view of `buffer` holding exactly the body, valid until the next write into `buffer`
 * @throws Error when the store's string columns are corrupt (not JSON literals)
 */
export function writeRowsJsonInto(buffer: BodyBuffer, store: Store, rows: Uint32Array, prefix: Uint8Array, suffix: Uint8Array): Uint8Array<ArrayBuffer> {
  const length = bodyLength(store, rows, prefix, suffix);
  if (length > buffer.bytes.length) {
    // grow by doubling, so a server reaches its largest body in a few steps
    let capacity = buffer.bytes.length * 2;
    while (capacity < length) capacity *= 2;
    buffer.bytes = new Uint8Array(capacity);
    buffer.view = new DataView(buffer.bytes.buffer);
  }
  writeBody(store, rows, prefix, suffix, buffer.bytes, buffer.view);
  return buffer.bytes.subarray(0, length);
}

const EMPTY = new Uint8Array(0);

/** `[record, …]` for `rows` as UTF-8 JSON bytes ({@link writeRowsJson} without prefix or suffix). */
export function rowsToJson(store: Store, rows: Uint32Array): Uint8Array<ArrayBuffer> {
  return writeRowsJson(store, rows, EMPTY, EMPTY);
}

/** The record of one row, decoded (for tests and tools; the server uses {@link writeRowsJson}). */
export function recordAt(store: Store, row: number): UserRecord {
  const name = store.strings.name;
  const email = store.strings.email;
  return {
    id: store.ids[row],
    name: JSON.parse(decoder.decode(name.json.subarray(name.jsonOffsets[row], name.jsonOffsets[row + 1]))),
    email: JSON.parse(decoder.decode(email.json.subarray(email.jsonOffsets[row], email.jsonOffsets[row + 1]))),
    status: STATUS_VALUES[store.statusCodes[row]],
  };
}
