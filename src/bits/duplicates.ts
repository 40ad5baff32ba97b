/**
 * The first duplicate among a column's values, in input order, found without a JS value per row:
 * doubles by a native sort of a copy, byte strings by a native sort of 53-bit hashes of their
 * bytes, only the few values that share a hash compared as strings. What a key column's
 * uniqueness is checked with (src/kinds/key.ts) and what the readers report early (src/ingest/key.ts).
 */
import { type ByteColumn, stringAt } from "./byte-column.ts";

/** A duplicate: the row of the later value, and the row where it was first seen (input order). */
export interface Duplicate {
  index: number;
  firstIndex: number;
}

/**
 * The first duplicate in input order among `values[0..n)`: the first row whose value was already
 * seen, and where it was first seen; or null when all are distinct. NaN (null) never repeats;
 * `-0` equals `0`. Strictly ascending values are recognised in one pass; otherwise a
 * Float64Array copy is sorted (native, O(n log n)) and neighbours compared; only when some value
 * repeats is there a second scan, with a Map of the repeated values only.
 */
export function firstDuplicateNumber(values: Float64Array, n: number): Duplicate | null {
  // Strictly ascending values (generated files, most exports) cannot repeat: no sort needed.
  let ascending = true;
  for (let i = 1; i < n; i++) {
    if (!(values[i - 1] < values[i])) {
      ascending = false;
      break;
    }
  }
  if (ascending) return null;
  const sorted = values.slice(0, n);
  sorted.sort();
  let repeated: Set<number> | null = null;
  for (let i = 1; i < n; i++) {
    if (sorted[i] === sorted[i - 1]) {
      if (repeated === null) repeated = new Set();
      // + 0: -0 and 0 are one value (a Set tells them apart otherwise)
      repeated.add(sorted[i] + 0);
    }
  }
  if (repeated === null) return null;
  const firstSeen = new Map<number, number>();
  for (let i = 0; i < n; i++) {
    const value = values[i] + 0;
    if (!repeated.has(value)) continue;
    const first = firstSeen.get(value);
    if (first !== undefined) return { index: i, firstIndex: first };
    firstSeen.set(value, i);
  }
  return null;
}

/** 2^21: the hash below is a 32-bit FNV-1a times this, plus the length's low 21 bits (53 bits in all: exact in a double). */
const LENGTH_SLOTS = 2 ** 21;

/**
 * The first duplicate in input order among the strings `strings` (n values; rows with
 * `isNull[row]` set are skipped), compared as bytes (well-formed UTF-8: equal bytes are equal
 * strings). Each value is hashed into a double (no JS string per row), the hashes sorted natively,
 * and only values whose hash repeats are compared as strings.
 */
export function firstDuplicateText(strings: ByteColumn, n: number, isNull?: Uint8Array): Duplicate | null {
  const { bytes, offsets } = strings;
  const hashes = new Float64Array(n);
  for (let row = 0; row < n; row++) {
    if (isNull !== undefined && isNull[row] !== 0) {
      hashes[row] = Number.NaN;
      continue;
    }
    const from = offsets[row];
    const to = offsets[row + 1];
    // FNV-1a, 32-bit (inlined for speed)
    let h = 0x811c9dc5;
    for (let p = from; p < to; p++) h = Math.imul(h ^ bytes[p], 0x01000193);
    hashes[row] = (h >>> 0) * LENGTH_SLOTS + ((to - from) % LENGTH_SLOTS);
  }
  const sorted = hashes.slice();
  sorted.sort();
  let repeated: Set<number> | null = null;
  for (let i = 1; i < n; i++) {
    if (sorted[i] === sorted[i - 1]) {
      if (repeated === null) repeated = new Set();
      repeated.add(sorted[i]);
    }
  }
  if (repeated === null) return null;
  const firstSeen = new Map<string, number>();
  for (let row = 0; row < n; row++) {
    if (!repeated.has(hashes[row])) continue;
    const value = stringAt(strings, row);
    const first = firstSeen.get(value);
    if (first !== undefined) return { index: row, firstIndex: first };
    firstSeen.set(value, row);
  }
  return null;
}
