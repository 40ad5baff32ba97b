/**
 * Packs many strings into one UTF-8 byte array plus offsets (the layout of every string
 * section of the snapshot).
 */

const encoder = new TextEncoder();

/** Strings packed back to back: value i is `bytes[offsets[i] .. offsets[i+1])`. */
export interface ByteColumn {
  /** UTF-8 bytes of all values; length = offsets[n], in bytes. */
  bytes: Uint8Array;
  /** Byte offsets; length n + 1, offsets[0] = 0, non-decreasing. */
  offsets: Uint32Array;
}

/** Largest total a Uint32 offset can address, in bytes. */
const MAX_COLUMN_BYTES = 0xffffffff;

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
