/**
 * The row order of a store: ascending key (docs/api.md "The key"). A number key orders
 * numerically; a text key by code point, which is the byte order of its UTF-8 (so a UUID orders
 * as its hex string). Input already in key order (the generator's, most exports) is kept as is.
 */
import type { ConvertedColumn } from "../kinds/convert.ts";

/**
 * Store row → input position in ascending key order, or null when the input is in that order
 * already (the identity).
 * @param key the key column's values in input order (number or text, never null)
 * @returns a permutation of 0…n-1, or null
 * @throws RangeError on a duplicate key (`duplicate key 42`), or a key column of another kind
 */
export function orderByKey(key: ConvertedColumn): Uint32Array | null {
  if (key.kind === "number") return orderNumbers(key.values);
  if (key.kind === "text") return orderUtf8(key.strings.bytes, key.strings.offsets);
  throw new RangeError(`a key column is a number or a text, not ${key.kind}`);
}

/**
 * Numbers ascending: a native numeric sort of a copy, then each input position placed by
 * binary search — O(n log n) without a comparator callback. -0 and 0 are one key.
 */
function orderNumbers(values: Float64Array): Uint32Array | null {
  const n = values.length;
  let sorted = true;
  for (let i = 1; i < n; i++) {
    if (!(values[i - 1] < values[i])) {
      sorted = false;
      break;
    }
  }
  if (sorted) return null;
  const keys = values.slice().sort();
  for (let i = 1; i < n; i++) if (keys[i] === keys[i - 1]) throw new RangeError(`duplicate key ${keys[i]}`);
  const order = new Uint32Array(n);
  for (let i = 0; i < n; i++) {
    const x = values[i];
    let lo = 0;
    let hi = n - 1;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if (keys[mid] < x) lo = mid + 1;
      else hi = mid;
    }
    order[lo] = i;
  }
  return order;
}

/** Compares values a and b of a packed UTF-8 column by their bytes (= by code point). */
function compareBytes(bytes: Uint8Array, offsets: Uint32Array, a: number, b: number): number {
  let i = offsets[a];
  let j = offsets[b];
  const endA = offsets[a + 1];
  const endB = offsets[b + 1];
  while (i < endA && j < endB) {
    const d = bytes[i++] - bytes[j++];
    if (d !== 0) return d;
  }
  return endA - i - (endB - j);
}

/**
 * Strings ascending by code point (their UTF-8 bytes compared): a sort of the positions with a
 * byte comparator. Text keys are short (at most 256 characters), so the comparator costs a few
 * byte reads.
 */
function orderUtf8(bytes: Uint8Array, offsets: Uint32Array): Uint32Array | null {
  const n = offsets.length - 1;
  let sorted = true;
  for (let i = 1; i < n; i++) {
    if (compareBytes(bytes, offsets, i - 1, i) >= 0) {
      sorted = false;
      break;
    }
  }
  if (sorted) return null;
  const positions = new Array<number>(n);
  for (let i = 0; i < n; i++) positions[i] = i;
  positions.sort((a, b) => compareBytes(bytes, offsets, a, b));
  for (let i = 1; i < n; i++) {
    if (compareBytes(bytes, offsets, positions[i - 1], positions[i]) === 0) {
      const from = offsets[positions[i]];
      throw new RangeError(`duplicate key ${JSON.stringify(new TextDecoder().decode(bytes.subarray(from, offsets[positions[i] + 1])))}`);
    }
  }
  return Uint32Array.from(positions);
}
