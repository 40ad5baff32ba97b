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
