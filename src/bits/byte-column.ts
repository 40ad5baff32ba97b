/**
 * Packs many strings into one UTF-8 byte array plus offsets (the layout of every string
 * section of the snapshot and of the string columns from the readers to the store builder),
 * grows such columns, reorders them and turns them into JSON literals without JS strings.
 */

const encoder = new TextEncoder();
// ignoreBOM: a value may start with U+FEFF, which is kept
const decoder = new TextDecoder("utf-8", { ignoreBOM: true });

/** Strings packed back to back: value i is `bytes[offsets[i] .. offsets[i+1])`. */
export interface ByteColumn {
  /** UTF-8 bytes of all values; length = offsets[n], in bytes. */
  bytes: Uint8Array;
  /** Byte offsets; length n + 1, offsets[0] = 0, non-decreasing. */
  offsets: Uint32Array;
}

/** Largest total a Uint32 offset can address, in bytes: the most a {@link ByteColumn} holds (4 GiB − 1). */
export const MAX_COLUMN_BYTES = 0xffffffff;

/**
 * Encodes `count` strings, given by `valueAt(i)` for i in 0…count-1, into one {@link ByteColumn}.
 * @throws RangeError when the column would exceed 4 GiB (offsets are 32-bit).
 */
export function packStrings(count: number, valueAt: (i: number) => string): ByteColumn {
  const offsets = new Uint32Array(count + 1);
  let capacity = Math.max(1024, count * 16);
  let bytes = new Uint8Array(capacity);
  let used = 0;
  for (let i = 0; i < count; i++) {
    const value = valueAt(i);
    // UTF-8 takes at most 3 bytes per UTF-16 code unit.
    const worst = value.length * 3;
    if (used + worst > capacity) {
      capacity = Math.max(capacity * 2, used + worst);
      if (capacity > MAX_COLUMN_BYTES) capacity = MAX_COLUMN_BYTES;
      if (used + worst > capacity) throw new RangeError("string column exceeds 4 GiB");
      const grown = new Uint8Array(capacity);
      grown.set(bytes.subarray(0, used));
      bytes = grown;
    }
    used += encoder.encodeInto(value, bytes.subarray(used)).written;
    offsets[i + 1] = used;
  }
  return { bytes: bytes.slice(0, used), offsets };
}

/** Value i of a column, decoded to a string. */
export function stringAt(column: ByteColumn, i: number): string {
  return decoder.decode(column.bytes.subarray(column.offsets[i], column.offsets[i + 1]));
}

/** Every value of a column as a string (tests and small data: one string per value). */
export function unpackStrings(column: ByteColumn): string[] {
  const n = column.offsets.length - 1;
  const out: string[] = new Array(n);
  for (let i = 0; i < n; i++) out[i] = stringAt(column, i);
  return out;
}

/**
 * A {@link ByteColumn} being appended to: values 0…count-1 are in `bytes[0 .. offsets[count])`;
 * both arrays have spare room and are replaced by larger copies as they fill.
 */
export interface GrowingByteColumn {
  /** Values back to back, then free room; in bytes. */
  bytes: Uint8Array;
  /** Byte offsets; offsets[0] = 0 and offsets[k + 1] ends value k, for k < count. */
  offsets: Uint32Array;
  /** Values appended so far. */
  count: number;
}

/** An empty {@link GrowingByteColumn} with room for `values` values of `bytes` bytes in all. */
export function growingByteColumn(values = 1024, bytes = 64 * 1024): GrowingByteColumn {
  return { bytes: new Uint8Array(Math.max(16, bytes)), offsets: new Uint32Array(Math.max(2, values + 1)), count: 0 };
}

/**
 * Makes room for one more value of up to `extra` bytes (doubling either array as needed).
 * @throws RangeError when the column would exceed 4 GiB (offsets are 32-bit).
 */
export function reserveValue(column: GrowingByteColumn, extra: number): void {
  if (column.count + 2 > column.offsets.length) {
    const offsets = new Uint32Array(column.offsets.length * 2);
    offsets.set(column.offsets);
    column.offsets = offsets;
  }
  const used = column.offsets[column.count];
  if (used + extra > column.bytes.length) {
    const capacity = Math.min(MAX_COLUMN_BYTES, Math.max(column.bytes.length * 2, used + extra));
    if (used + extra > capacity) throw new RangeError("string column exceeds 4 GiB");
    const bytes = new Uint8Array(capacity);
    bytes.set(column.bytes.subarray(0, used));
    column.bytes = bytes;
  }
}

/**
 * Appends `source[from .. to)` (UTF-8, copied as is) as the next value.
 * @throws RangeError when the column would exceed 4 GiB.
 */
export function appendBytes(column: GrowingByteColumn, source: Uint8Array, from: number, to: number): void {
  const length = to - from;
  reserveValue(column, length);
  const count = column.count;
  const at = column.offsets[count];
  const bytes = column.bytes;
  // a loop beats subarray + set for the short values of a user record
  if (length < 64) for (let k = 0; k < length; k++) bytes[at + k] = source[from + k];
  else bytes.set(source.subarray(from, to), at);
  column.offsets[count + 1] = at + length;
  column.count = count + 1;
}

/**
 * Appends `value` encoded as UTF-8 as the next value (a lone surrogate becomes U+FFFD, as
 * TextEncoder writes it).
 * @throws RangeError when the column would exceed 4 GiB.
 */
export function appendString(column: GrowingByteColumn, value: string): void {
  // UTF-8 takes at most 3 bytes per UTF-16 code unit.
  reserveValue(column, value.length * 3);
  const count = column.count;
  const at = column.offsets[count];
  let written: number;
  if (value.length < 32 && isAscii(value)) {
    for (let k = 0; k < value.length; k++) column.bytes[at + k] = value.charCodeAt(k);
    written = value.length;
  } else {
    // Buffer's native UTF-8 write at an offset: no subarray per value (6 times encodeInto's speed)
    written = bufferOf(column.bytes).utf8Write(value, at);
  }
  column.offsets[count + 1] = at + written;
  column.count = count + 1;
}

/** A Buffer over a byte array's memory, with Node's `utf8Write` (not in the type declarations). */
type Utf8Writable = Buffer & { utf8Write(value: string, offset: number): number };

/** Buffer views of the byte arrays written to (a column's bytes are replaced only when it grows). */
const buffers = new WeakMap<Uint8Array, Utf8Writable>();

/** A Buffer over `bytes`' memory, made once per array. */
function bufferOf(bytes: Uint8Array): Utf8Writable {
  let buffer = buffers.get(bytes);
  if (buffer === undefined) {
    buffer = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength) as Utf8Writable;
    buffers.set(bytes, buffer);
  }
  return buffer;
}

/** True when every code unit of `s` is below 0x80. */
function isAscii(s: string): boolean {
  for (let k = 0; k < s.length; k++) if (s.charCodeAt(k) >= 0x80) return false;
  return true;
}

/**
 * The values appended so far as a {@link ByteColumn}: views of the used parts, no copy (room
 * reserved but never written costs no memory).
 */
export function finishByteColumn(column: GrowingByteColumn): ByteColumn {
  const n = column.count;
  return { bytes: column.bytes.subarray(0, column.offsets[n]), offsets: column.offsets.subarray(0, n + 1) };
}

/**
 * The column's values in a new order: value k of the result is value `rows[k]` of `column`.
 * @param rows row numbers (usually a permutation); length m
 * @returns a new column of m values
 */
export function gatherByteColumn(column: ByteColumn, rows: Uint32Array): ByteColumn {
  const { bytes, offsets } = column;
  const m = rows.length;
  const outOffsets = new Uint32Array(m + 1);
  let total = 0;
  for (let k = 0; k < m; k++) {
    const row = rows[k];
    total += offsets[row + 1] - offsets[row];
    outOffsets[k + 1] = total;
  }
  const out = new Uint8Array(total);
  for (let k = 0; k < m; k++) {
    const row = rows[k];
    const from = offsets[row];
    const length = offsets[row + 1] - from;
    const at = outOffsets[k];
    // inlined for speed: short values are copied byte by byte
    if (length < 64) for (let b = 0; b < length; b++) out[at + b] = bytes[from + b];
    else out.set(bytes.subarray(from, from + length), at);
  }
  return { bytes: out, offsets: outOffsets };
}

/**
 * Copies the body of a JSON string that starts at `source[from]` (just after its opening quote)
 * into the column's free room, up to its closing quote, without adding a value yet (see
 * {@link commitValue}): the NDJSON reader's fast path, which copies and checks in one pass.
 * @returns the index of the closing `"` in `source`; -1 at a backslash or a control character
 *   (the string needs JSON.parse), at the end of `source`, or when the free room is too short
 *   (the caller then takes a path that grows the column)
 */
export function copyPlainJsonString(column: GrowingByteColumn, source: Uint8Array, from: number): number {
  const bytes = column.bytes;
  let at = column.offsets[column.count];
  const room = bytes.length - at;
  const end = Math.min(source.length, from + room);
  for (let i = from; i < end; i++) {
    const b = source[i];
    // '"' ends it; '\\' and control characters leave the fast path
    if (b === 0x22) return i;
    if (b === 0x5c || b < 0x20) return -1;
    bytes[at++] = b;
  }
  return -1;
}

/**
 * Adds the `length` bytes written by {@link copyPlainJsonString} as the next value.
 * @throws RangeError when the offsets would exceed their 4 GiB range (never: the bytes fit).
 */
export function commitValue(column: GrowingByteColumn, length: number): void {
  if (column.count + 2 > column.offsets.length) reserveValue(column, 0);
  const count = column.count;
  column.offsets[count + 1] = column.offsets[count] + length;
  column.count = count + 1;
}

/** JSON's short escapes for control characters (as JSON.stringify writes them). */
const SHORT_ESCAPES: Record<number, number> = { 0x08: 0x62, 0x09: 0x74, 0x0a: 0x6e, 0x0c: 0x66, 0x0d: 0x72 };
const HEX = new TextEncoder().encode("0123456789abcdef");

/**
 * Packs each string as its JSON string literal (quotes included), UTF-8: byte for byte what
 * `new TextEncoder().encode(JSON.stringify(s))` gives, without building the intermediate
 * strings (inlined for speed: this runs over every value of a 10M-row build).
 * @throws RangeError when the column would exceed 4 GiB (offsets are 32-bit).
 */
export function packJsonStrings(count: number, valueAt: (i: number) => string): ByteColumn {
  const offsets = new Uint32Array(count + 1);
  let capacity = Math.max(1024, count * 24);
  let bytes = new Uint8Array(capacity);
  let at = 0;
  for (let i = 0; i < count; i++) {
    const s = valueAt(i);
    const len = s.length;
    // Worst case: 6 bytes per code unit (\u00XX) plus the quotes.
    if (at + len * 6 + 2 > capacity) {
      capacity = Math.min(MAX_COLUMN_BYTES, Math.max(capacity * 2, at + len * 6 + 2));
      if (at + len * 6 + 2 > capacity) throw new RangeError("string column exceeds 4 GiB");
      const grown = new Uint8Array(capacity);
      grown.set(bytes.subarray(0, at));
      bytes = grown;
    }
    bytes[at++] = 0x22; // '"'
    for (let k = 0; k < len; k++) {
      const c = s.charCodeAt(k);
      if (c < 0x80) {
        if (c >= 0x20 && c !== 0x22 && c !== 0x5c) {
          bytes[at++] = c;
        } else if (c === 0x22 || c === 0x5c) {
          bytes[at++] = 0x5c; // '\'
          bytes[at++] = c;
        } else {
          bytes[at++] = 0x5c;
          const short = SHORT_ESCAPES[c];
          if (short !== undefined) bytes[at++] = short;
          else at = writeUnicodeEscape(bytes, at, c);
        }
      } else if (c < 0x800) {
        bytes[at++] = 0xc0 | (c >> 6);
        bytes[at++] = 0x80 | (c & 0x3f);
      } else if (c >= 0xd800 && c <= 0xdbff && k + 1 < len && (s.charCodeAt(k + 1) & 0xfc00) === 0xdc00) {
        const cp = 0x10000 + ((c - 0xd800) << 10) + (s.charCodeAt(++k) - 0xdc00);
        bytes[at++] = 0xf0 | (cp >> 18);
        bytes[at++] = 0x80 | ((cp >> 12) & 0x3f);
        bytes[at++] = 0x80 | ((cp >> 6) & 0x3f);
        bytes[at++] = 0x80 | (cp & 0x3f);
      } else if (c >= 0xd800 && c <= 0xdfff) {
        // A lone surrogate: JSON.stringify escapes it (well-formed JSON.stringify).
        bytes[at++] = 0x5c;
        at = writeUnicodeEscape(bytes, at, c);
      } else {
        bytes[at++] = 0xe0 | (c >> 12);
        bytes[at++] = 0x80 | ((c >> 6) & 0x3f);
        bytes[at++] = 0x80 | (c & 0x3f);
      }
    }
    bytes[at++] = 0x22;
    offsets[i + 1] = at;
  }
  return { bytes: bytes.slice(0, at), offsets };
}

/** Writes `uXXXX` (lower-case hex) at `at`; the backslash is already written. Returns the new end. */
function writeUnicodeEscape(bytes: Uint8Array, at: number, c: number): number {
  bytes[at++] = 0x75; // 'u'
  bytes[at++] = HEX[(c >> 12) & 15];
  bytes[at++] = HEX[(c >> 8) & 15];
  bytes[at++] = HEX[(c >> 4) & 15];
  bytes[at++] = HEX[c & 15];
  return at;
}

/** Per byte: 0 copied as is; 1 escaped with a backslash; 2 a control character. */
const JSON_BYTE_CLASS = new Uint8Array(256);
for (let b = 0; b < 0x20; b++) JSON_BYTE_CLASS[b] = 2;
JSON_BYTE_CLASS[0x22] = 1; // '"'
JSON_BYTE_CLASS[0x5c] = 1; // '\\'

/** Bytes a control character takes in a JSON literal: `\n` or `\u00XX`. */
function controlEscapeLength(b: number): number {
  return SHORT_ESCAPES[b] !== undefined ? 2 : 6;
}

/**
 * Each value of a UTF-8 column as its JSON string literal (quotes included), UTF-8: byte for
 * byte what {@link packJsonStrings} gives for the decoded strings (`"` and `\\` escaped with a
 * backslash, control characters below U+0020 as `\b \f \n \r \t` or `\u00XX` in lower-case
 * hex, every other byte copied). The bytes must be well-formed UTF-8 (no lone surrogates to
 * escape), as the readers and {@link packStrings} of well-formed strings give them.
 * @returns a column of the same length; its size is the input's plus 2 bytes a value plus escapes
 * @throws RangeError when the result would exceed 4 GiB (offsets are 32-bit).
 */
export function packJsonLiterals(column: ByteColumn): ByteColumn {
  const { offsets } = column;
  const n = offsets.length - 1;
  // The common case has nothing to escape: one pass at that size, sizing escapes only when it gives up.
  return writeJsonLiterals(column, offsets[n] - offsets[0] + 2 * n, false) ?? writeJsonLiterals(column, escapedLiteralsSize(column), true);
}

/** Bytes of {@link packJsonLiterals}'s result: the values, 2 quotes a value and every escape. */
function escapedLiteralsSize(column: ByteColumn): number {
  const { bytes, offsets } = column;
  const n = offsets.length - 1;
  let size = offsets[n] - offsets[0] + 2 * n;
  for (let p = offsets[0], end = offsets[n]; p < end; p++) {
    const cls = JSON_BYTE_CLASS[bytes[p]];
    if (cls !== 0) size += cls === 1 ? 1 : controlEscapeLength(bytes[p]) - 1;
  }
  return size;
}

/**
 * {@link packJsonLiterals} into `size` bytes. With `escapes` false, `size` has no room for an
 * escape and the first byte that needs one gives up (null); with it true, `size` is
 * {@link escapedLiteralsSize}.
 * @throws RangeError when `size` exceeds 4 GiB (offsets are 32-bit).
 */
function writeJsonLiterals(column: ByteColumn, size: number, escapes: true): ByteColumn;
function writeJsonLiterals(column: ByteColumn, size: number, escapes: false): ByteColumn | null;
function writeJsonLiterals(column: ByteColumn, size: number, escapes: boolean): ByteColumn | null {
  if (size > MAX_COLUMN_BYTES) throw new RangeError("string column exceeds 4 GiB");
  const { bytes, offsets } = column;
  const n = offsets.length - 1;
  const out = new Uint8Array(size);
  const outOffsets = new Uint32Array(n + 1);
  let at = 0;
  for (let i = 0; i < n; i++) {
    const end = offsets[i + 1];
    out[at++] = 0x22; // '"'
    for (let p = offsets[i]; p < end; p++) {
      const b = bytes[p];
      const cls = JSON_BYTE_CLASS[b];
      if (cls === 0) {
        out[at++] = b;
      } else if (!escapes) {
        return null;
      } else if (cls === 1) {
        out[at++] = 0x5c; // '\\'
        out[at++] = b;
      } else {
        out[at++] = 0x5c;
        const short = SHORT_ESCAPES[b];
        if (short !== undefined) out[at++] = short;
        else at = writeUnicodeEscape(out, at, b);
      }
    }
    out[at++] = 0x22;
    outOffsets[i + 1] = at;
  }
  return { bytes: out, offsets: outOffsets };
}
