/**
 * Sorts a string column in the ordering rule of INTERFACE.md ("Ordering") fast enough for
 * 10M rows: strings with a collation key (sort-key.ts) are sorted by their key bytes with a
 * radix sort built on native typed-array sorts; the rest are sorted with `collator.compare`
 * and merged in by binary search.
 */
import { collator } from "./collation.ts";
import { MAX_KEY_BYTES_PER_UNIT, encodeCollationKey } from "./sort-key.ts";

/** Result of {@link sortByCollation}; both arrays have the input's length n. */
export interface CollationSort {
  /** Permutation of row indexes 0..n-1 in collation order, ties by index ascending. */
  order: Uint32Array;
  /** Dense rank of each row's value: 0 for the smallest; collator-equal values share a rank. */
  ranks: Uint32Array;
}

/** Zero bytes after every key, so a radix step reads up to 6 bytes past a key's end freely. */
const KEY_PADDING = 6;

/** Key offsets are Uint32: the key buffer stays below 2^32 bytes. */
const MAX_KEY_BUFFER = 2 ** 32 - 1;

/** Groups this small are sorted by insertion sort on key bytes instead of a native sort. */
const SMALL_GROUP = 16;

/** Groups up to this size carry 6 key bytes and a 16-bit position per 64-bit word. */
const WIDE_GROUP = 65536;

/**
 * Sorts `values` in collation order (INTERFACE.md "Ordering": exactly
 * `new Intl.Collator("en", {sensitivity: "base", numeric: true}).compare`, ties broken by index).
 * Gives the same result as
 * `indexes.sort((a, b) => collator.compare(values[a], values[b]) || a - b)`.
 * @param values n strings (n < 2^32)
 * @returns `order` (Uint32Array, length n, a permutation of 0..n-1) and `ranks` (Uint32Array,
 *   length n, `ranks[i]` the dense rank of `values[i]`, non-decreasing along `order`)
 * @throws RangeError if n >= 2^32 or the keys of all values exceed 2^32 - 1 bytes
 */
export function sortByCollation(values: readonly string[]): CollationSort {
  const n = values.length;
  if (n >= 2 ** 32) throw new RangeError(`sortByCollation: ${n} values, at most 2^32 - 1`);

  // 1. Keys of every value into one byte buffer; values without a key go to the slow path.
  const keyStart = new Uint32Array(n + 1);
  let units = 0;
  for (let i = 0; i < n; i++) units += values[i].length;
  // most characters take one key byte; grown on demand otherwise
  let keyBytes = new Uint8Array(Math.ceil(units * 1.25) + n * KEY_PADDING + 1024);
  const fastRows = new Uint32Array(n);
  let fastCount = 0;
  const slowRows: number[] = [];
  let pos = 0;
  for (let i = 0; i < n; i++) {
    const value = values[i];
    const need = pos + value.length * MAX_KEY_BYTES_PER_UNIT + KEY_PADDING;
    if (need > keyBytes.length) {
      if (need > MAX_KEY_BUFFER) throw new RangeError(`sortByCollation: keys exceed ${MAX_KEY_BUFFER} bytes`);
      keyBytes = grow(keyBytes, need);
    }
    keyStart[i] = pos;
    const end = encodeCollationKey(value, keyBytes, pos);
    if (end < 0) {
      slowRows.push(i);
      continue;
    }
    for (let p = end; p < end + KEY_PADDING; p++) keyBytes[p] = 0;
    pos = end + KEY_PADDING;
    fastRows[fastCount++] = i;
  }

  // 2. Fast rows by key bytes; sameAsPrevious[k] = 1 when row k equals row k-1 in that order.
  const fastOrder = fastRows.subarray(0, fastCount);
  const sameAsPrevious = new Uint8Array(fastCount);
  radixSortByKey(fastOrder, keyStart, keyBytes, sameAsPrevious);

  // Fast classes (runs of equal keys): the position in fastOrder where each starts.
  let fastClassCount = 0;
  for (let k = 0; k < fastCount; k++) if (sameAsPrevious[k] === 0) fastClassCount++;
  const fastClassStart = new Uint32Array(fastClassCount);
  for (let k = 0, c = 0; k < fastCount; k++) if (sameAsPrevious[k] === 0) fastClassStart[c++] = k;

  // 3. Slow rows: distinct strings sorted by the collator, grouped into classes.
  const slowIdOf = new Map<string, number>();
  const slowDistinct: string[] = [];
  const slowIdByRow = new Uint32Array(slowRows.length);
  for (let s = 0; s < slowRows.length; s++) {
    const value = values[slowRows[s]];
    let id = slowIdOf.get(value);
    if (id === undefined) {
      id = slowDistinct.length;
      slowIdOf.set(value, id);
      slowDistinct.push(value);
    }
    slowIdByRow[s] = id;
  }
  const slowSorted = slowDistinct.map((_, id) => id);
  slowSorted.sort((a, b) => collator.compare(slowDistinct[a], slowDistinct[b]));
  const slowClassOfId = new Uint32Array(slowDistinct.length);
  const slowClassRep: string[] = []; // one value of each slow class
  for (let k = 0; k < slowSorted.length; k++) {
    const value = slowDistinct[slowSorted[k]];
    if (k === 0 || collator.compare(slowClassRep[slowClassRep.length - 1], value) !== 0) slowClassRep.push(value);
    slowClassOfId[slowSorted[k]] = slowClassRep.length - 1;
  }

  // 4. Merge the two class sequences into dense ranks: each slow class is placed by binary
  // search among the fast classes (its lower bound), or joins the fast class it equals.
  const rankOfFastClass = new Uint32Array(fastClassCount);
  const rankOfSlowClass = new Uint32Array(slowClassRep.length);
  let rank = 0;
  let c = 0; // next fast class without a rank
  for (let s = 0; s < slowClassRep.length; s++) {
    const rep = slowClassRep[s];
    let lo = c;
    let hi = fastClassCount;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if (collator.compare(values[fastOrder[fastClassStart[mid]]], rep) < 0) lo = mid + 1;
      else hi = mid;
    }
    for (; c < lo; c++) rankOfFastClass[c] = rank++;
    if (c < fastClassCount && collator.compare(values[fastOrder[fastClassStart[c]]], rep) === 0) {
      rankOfFastClass[c++] = rank;
    }
    rankOfSlowClass[s] = rank++;
  }
  for (; c < fastClassCount; c++) rankOfFastClass[c] = rank++;

  // 5. Ranks per row, then order by a counting sort on rank (rows visited by ascending index,
  // so ties come out by index ascending).
  const ranks = new Uint32Array(n);
  for (let k = 0, cls = -1; k < fastCount; k++) {
    if (sameAsPrevious[k] === 0) cls++;
    ranks[fastOrder[k]] = rankOfFastClass[cls];
  }
  for (let s = 0; s < slowRows.length; s++) ranks[slowRows[s]] = rankOfSlowClass[slowClassOfId[slowIdByRow[s]]];
  const order = new Uint32Array(n);
  if (slowRows.length === 0) {
    order.set(fastOrder); // the radix sort already breaks ties by index
    return { order, ranks };
  }
  const next = new Uint32Array(rank + 1); // next[r]: first free slot of rank r in order
  for (let i = 0; i < n; i++) next[ranks[i] + 1]++;
  for (let r = 1; r <= rank; r++) next[r] += next[r - 1];
  for (let i = 0; i < n; i++) order[next[ranks[i]]++] = i;
  return { order, ranks };
}

/** A copy of `bytes` with room for at least `need` bytes (doubling, capped at MAX_KEY_BUFFER). */
function grow(bytes: Uint8Array, need: number): Uint8Array {
  let size = bytes.length * 2;
  while (size < need) size *= 2;
  size = Math.min(size, MAX_KEY_BUFFER);
  const grown = new Uint8Array(size);
  grown.set(bytes);
  return grown;
}

/**
 * Sorts `rows` in place by their key bytes (`keyBytes[keyStart[row]..]`, each key followed by
 * KEY_PADDING zero bytes, no zero byte inside a key), ties by row ascending; sets
 * `sameAsPrevious[k] = 1` where the key at position k equals the one at k - 1.
 *
 * Most-significant-digit radix sort whose digits are 4 or 6 key bytes: each group of rows with
 * a common key prefix packs (next key bytes, position in group) into 64-bit words that a native
 * BigUint64Array sort orders; runs of equal digits form the next groups. Positions keep ties in
 * row order, since every group starts in row order.
 */
function radixSortByKey(rows: Uint32Array, keyStart: Uint32Array, keyBytes: Uint8Array, sameAsPrevious: Uint8Array): void {
  const n = rows.length;
  const packed = new BigUint64Array(n);
  const words = new Uint32Array(packed.buffer); // little-endian: [2k] low word, [2k+1] high word
  const scratch = new Uint32Array(n);
  const stack: number[] = [0, n, 0]; // (lo, hi, depth) triples of groups still to sort
  while (stack.length > 0) {
    const depth = stack.pop()!;
    const hi = stack.pop()!;
    const lo = stack.pop()!;
    const size = hi - lo;
    if (size < 2) continue;
    if (size <= SMALL_GROUP) {
      insertionSortByKey(rows, lo, hi, depth, keyStart, keyBytes, sameAsPrevious);
      continue;
    }
    const wide = size <= WIDE_GROUP;
    for (let k = 0; k < size; k++) {
      const p = keyStart[rows[lo + k]] + depth;
      // inlined for speed: big-endian read of key bytes p..p+3 (p+4, p+5 when wide)
      words[2 * (lo + k) + 1] = ((keyBytes[p] << 24) | (keyBytes[p + 1] << 16) | (keyBytes[p + 2] << 8) | keyBytes[p + 3]) >>> 0;
      words[2 * (lo + k)] = wide ? ((keyBytes[p + 4] << 24) | (keyBytes[p + 5] << 16) | k) >>> 0 : k;
    }
    packed.subarray(lo, hi).sort();
    scratch.set(rows.subarray(lo, hi), lo);
    const positionMask = wide ? 0xffff : 0xffffffff;
    for (let k = 0; k < size; k++) rows[lo + k] = scratch[lo + (words[2 * (lo + k)] & positionMask)];

    // Runs of equal digits: finished when the digit ends in a zero byte (the keys ended).
    const width = wide ? 6 : 4;
    let runStart = lo;
    for (let k = lo + 1; k <= hi; k++) {
      if (
        k < hi &&
        words[2 * k + 1] === words[2 * (k - 1) + 1] &&
        (!wide || words[2 * k] >>> 16 === words[2 * (k - 1)] >>> 16)
      ) {
        continue;
      }
      if (k - runStart > 1) {
        const lastByte = wide ? (words[2 * runStart] >>> 16) & 0xff : words[2 * runStart + 1] & 0xff;
        if (lastByte === 0) for (let e = runStart + 1; e < k; e++) sameAsPrevious[e] = 1;
        else stack.push(runStart, k, depth + width);
      }
      runStart = k;
    }
  }
}

/** Insertion sort of `rows[lo..hi)` by key bytes from `depth` on, ties by row; marks equal neighbours. */
function insertionSortByKey(
  rows: Uint32Array,
  lo: number,
  hi: number,
  depth: number,
  keyStart: Uint32Array,
  keyBytes: Uint8Array,
  sameAsPrevious: Uint8Array,
): void {
  for (let k = lo + 1; k < hi; k++) {
    const row = rows[k];
    let j = k - 1;
    while (j >= lo && compareKeys(rows[j], row, depth, keyStart, keyBytes) > 0) {
      rows[j + 1] = rows[j];
      j--;
    }
    rows[j + 1] = row;
  }
  for (let k = lo + 1; k < hi; k++) {
    if (compareKeys(rows[k - 1], rows[k], depth, keyStart, keyBytes) === 0) sameAsPrevious[k] = 1;
  }
}

/** Compares the keys of rows `a` and `b` from byte `depth` on: -1, 0 (same key) or 1. */
function compareKeys(a: number, b: number, depth: number, keyStart: Uint32Array, keyBytes: Uint8Array): number {
  let p = keyStart[a] + depth;
  let q = keyStart[b] + depth;
  for (;;) {
    const x = keyBytes[p++];
    const y = keyBytes[q++];
    if (x !== y) return x < y ? -1 : 1;
    if (x === 0) return 0; // both keys ended
  }
}
