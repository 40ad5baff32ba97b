/**
 * Sorts a string column in the ordering rule of INTERFACE.md ("Ordering") fast enough for
 * 10M rows. Strings with a collation key (sort-key.ts) are sorted by their key bytes: a
 * counting sort on the first two key bytes moves the keys into buckets, then a radix sort built
 * on native typed-array sorts orders each bucket. The other strings are sorted with
 * `collator.compare` and merged in by galloping binary search.
 *
 * The keys are moved once, so that every later step reads memory near the rows it sorts: at 10M
 * rows random reads over the whole key buffer, not comparisons, are what costs.
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

/**
 * Zero bytes at least after every key, so a radix step may read 6 bytes past a key's end;
 * keys start at multiples of 4 bytes (they are copied as 32-bit words).
 */
const KEY_PADDING = 6;

/** Key buffers hold at most 2^32 - 1 words (key offsets are Uint32 word indexes). */
const MAX_KEY_WORDS = 2 ** 32 - 1;

/** Groups this small are sorted by insertion sort on key bytes instead of a native sort. */
const SMALL_GROUP = 12;

/** Groups up to this size carry 6 key bytes and a 16-bit position per 64-bit word. */
const WIDE_GROUP = 65536;

/**
 * Sorts `values` in collation order (INTERFACE.md "Ordering": exactly
 * `new Intl.Collator("en", {sensitivity: "base", numeric: true}).compare`, ties broken by index).
 * Gives the same result as
 * `indexes.sort((a, b) => collator.compare(values[a], values[b]) || a - b)`.
 * Memory: about 2 × (total key bytes + 10 per value) plus 30 bytes per value, transiently.
 * @param values n strings (n < 2^32)
 * @returns `order` (Uint32Array, length n, a permutation of 0..n-1) and `ranks` (Uint32Array,
 *   length n, `ranks[i]` the dense rank of `values[i]`, non-decreasing along `order`)
 * @throws RangeError if n >= 2^32 or the keys of all values exceed 2^32 - 1 words (16 GiB)
 */
export function sortByCollation(values: readonly string[]): CollationSort {
  const n = values.length;
  if (n >= 2 ** 32) throw new RangeError(`sortByCollation: ${n} values, at most 2^32 - 1`);
  const keys = encodeKeys(values);
  const fastCount = keys.rows.length;

  // Fast rows by key; sameAsPrevious[k] = 1 when the key at position k equals the one at k - 1.
  const sorted = bucketByFirstBytes(keys);
  const fastOrder = sorted.rowAt;
  const sameAsPrevious = new Uint8Array(fastCount);
  radixSortBuckets(sorted, sameAsPrevious);

  // Fast classes (runs of equal keys) and the position in fastOrder where each starts.
  let fastClassCount = 0;
  for (let k = 0; k < fastCount; k++) if (sameAsPrevious[k] === 0) fastClassCount++;
  const fastClassStart = new Uint32Array(fastClassCount);
  for (let k = 0, c = 0; k < fastCount; k++) if (sameAsPrevious[k] === 0) fastClassStart[c++] = k;

  // Slow rows: distinct strings sorted by the collator and grouped into classes.
  const slowRows = keys.slowRows;
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
  const slowSorted = slowDistinct.slice().sort(collator.compare);
  const slowClassOfId = new Uint32Array(slowDistinct.length);
  const slowClassRep: string[] = []; // one value of each slow class
  for (let k = 0; k < slowSorted.length; k++) {
    const value = slowSorted[k];
    if (k === 0 || collator.compare(slowClassRep[slowClassRep.length - 1], value) !== 0) slowClassRep.push(value);
    slowClassOfId[slowIdOf.get(value)!] = slowClassRep.length - 1;
  }

  // Dense ranks over both class sequences: each slow class is placed at its lower bound among
  // the fast classes (galloping from the previous one), or joins the fast class it equals.
  const rankOfFastClass = new Uint32Array(fastClassCount);
  const rankOfSlowClass = new Uint32Array(slowClassRep.length);
  let rank = 0;
  let c = 0; // next fast class without a rank
  for (let s = 0; s < slowClassRep.length; s++) {
    const rep = slowClassRep[s];
    const bound = lowerBoundFastClass(rep, c, values, fastOrder, fastClassStart);
    for (; c < bound; c++) rankOfFastClass[c] = rank++;
    if (c < fastClassCount && collator.compare(values[fastOrder[fastClassStart[c]]], rep) === 0) {
      rankOfFastClass[c++] = rank;
    }
    rankOfSlowClass[s] = rank++;
  }
  for (; c < fastClassCount; c++) rankOfFastClass[c] = rank++;

  const ranks = new Uint32Array(n);
  for (let k = 0, cls = -1; k < fastCount; k++) {
    if (sameAsPrevious[k] === 0) cls++;
    ranks[fastOrder[k]] = rankOfFastClass[cls];
  }
  if (slowRows.length === 0) return { order: fastOrder, ranks };

  // Slow rows by (rank, row), then a merge with the fast order, which is by (rank, row) too.
  const slowByRank = new BigUint64Array(slowRows.length);
  const slowWords = new Uint32Array(slowByRank.buffer); // little-endian: [2s] low, [2s+1] high
  for (let s = 0; s < slowRows.length; s++) {
    const row = slowRows[s];
    const slowRank = rankOfSlowClass[slowClassOfId[slowIdByRow[s]]];
    ranks[row] = slowRank;
    slowWords[2 * s] = row;
    slowWords[2 * s + 1] = slowRank;
  }
  slowByRank.sort();
  const order = new Uint32Array(n);
  let k = 0; // next fast position
  let cls = 0; // class of fast position k
  let s = 0; // next slow entry
  for (let out = 0; out < n; out++) {
    const takeFast =
      s === slowRows.length ||
      (k < fastCount &&
        (rankOfFastClass[cls] < slowWords[2 * s + 1] ||
          (rankOfFastClass[cls] === slowWords[2 * s + 1] && fastOrder[k] < slowWords[2 * s])));
    if (takeFast) {
      order[out] = fastOrder[k++];
      if (k < fastCount && sameAsPrevious[k] === 0) cls++;
    } else {
      order[out] = slowWords[2 * s++];
    }
  }
  return { order, ranks };
}

/**
 * Smallest fast class index >= `from` whose value is not below `value` (fastClassCount if none),
 * by galloping then binary search with `collator.compare`.
 */
function lowerBoundFastClass(
  value: string,
  from: number,
  values: readonly string[],
  fastOrder: Uint32Array,
  fastClassStart: Uint32Array,
): number {
  const count = fastClassStart.length;
  let lo = from; // every class below lo is below value
  let step = 1;
  let hi = from;
  while (hi < count && collator.compare(values[fastOrder[fastClassStart[hi]]], value) < 0) {
    lo = hi + 1;
    hi += step;
    step *= 2;
  }
  if (hi > count) hi = count;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (collator.compare(values[fastOrder[fastClassStart[mid]]], value) < 0) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

/** Keys of the values that have one, in row order, and the rows that have none. */
interface EncodedKeys {
  /** Key bytes; key f starts at byte 4 * start[f] and is followed by KEY_PADDING zeros. */
  bytes: Uint8Array;
  /** The same buffer as 32-bit words. */
  words: Uint32Array;
  /** Rows with a key, ascending; length f. */
  rows: Uint32Array;
  /** Word offset of each key; length f + 1 (start[f] is the end of the last key). */
  start: Uint32Array;
  /** Rows without a key, ascending. */
  slowRows: number[];
}

/** Encodes the key of every value (see {@link EncodedKeys}). */
function encodeKeys(values: readonly string[]): EncodedKeys {
  const n = values.length;
  let units = 0;
  for (let i = 0; i < n; i++) units += values[i].length;
  // most characters take one key byte; the buffer grows if not
  let bytes = new Uint8Array(4 * Math.ceil((units * 1.25 + n * (KEY_PADDING + 3) + 1024) / 4));
  const rows = new Uint32Array(n);
  const start = new Uint32Array(n + 1);
  const slowRows: number[] = [];
  let f = 0;
  let pos = 0; // byte offset of the next key, a multiple of 4
  for (let i = 0; i < n; i++) {
    const value = values[i];
    const need = pos + value.length * MAX_KEY_BYTES_PER_UNIT + KEY_PADDING + 3;
    if (need > bytes.length) bytes = growKeyBuffer(bytes, need);
    const end = encodeCollationKey(value, bytes, pos);
    if (end < 0) {
      slowRows.push(i);
      continue;
    }
    const next = (end + KEY_PADDING + 3) & ~3; // padded to the next word boundary
    for (let p = end; p < next; p++) bytes[p] = 0;
    rows[f] = i;
    start[f++] = pos >>> 2;
    pos = next;
  }
  start[f] = pos >>> 2;
  return {
    bytes,
    words: new Uint32Array(bytes.buffer, 0, bytes.length >>> 2),
    rows: rows.subarray(0, f),
    start: start.subarray(0, f + 1),
    slowRows,
  };
}

/**
 * A copy of `bytes` with room for at least `need` bytes (doubling; a multiple of 4).
 * @throws RangeError beyond MAX_KEY_WORDS words
 */
function growKeyBuffer(bytes: Uint8Array, need: number): Uint8Array {
  if (need > 4 * MAX_KEY_WORDS) throw new RangeError(`sortByCollation: keys exceed ${MAX_KEY_WORDS} words`);
  let size = bytes.length * 2;
  while (size < need) size *= 2;
  const grown = new Uint8Array(Math.min(size, 4 * MAX_KEY_WORDS));
  grown.set(bytes);
  return grown;
}

/** Fast rows laid out for sorting: position k holds row rowAt[k] whose key starts at word startAt[k]. */
interface SortedKeys {
  /** Rows with a key, bucketed by their first two key bytes, each bucket in row order. */
  rowAt: Uint32Array;
  /** Word offset in `bytes` of the key at each position. */
  startAt: Uint32Array;
  /** Key bytes, each bucket's keys contiguous and in position order. */
  bytes: Uint8Array;
  /** First position of each bucket (by first two key bytes), 65537 entries. */
  bucketStart: Uint32Array;
}

/** Number of buckets of the counting sort: one per value of the first two key bytes. */
const BUCKETS = 65536;

/**
 * Counting sort of the keys by their first two bytes: reads the keys in row order and appends
 * each to its bucket (the copies go to ~one stream per bucket, which caches absorb).
 */
function bucketByFirstBytes(keys: EncodedKeys): SortedKeys {
  const { bytes, words, rows, start } = keys;
  const count = rows.length;
  const bucketStart = new Uint32Array(BUCKETS + 1);
  const bucketWord = new Float64Array(BUCKETS + 1); // word offsets may exceed 2^32 in sums
  for (let f = 0; f < count; f++) {
    const p = start[f] * 4;
    const bucket = (bytes[p] << 8) | bytes[p + 1];
    bucketStart[bucket + 1]++;
    bucketWord[bucket + 1] += start[f + 1] - start[f];
  }
  for (let b = 1; b <= BUCKETS; b++) {
    bucketStart[b] += bucketStart[b - 1];
    bucketWord[b] += bucketWord[b - 1];
  }
  const nextPosition = bucketStart.slice(0, BUCKETS);
  const nextWord = bucketWord.slice(0, BUCKETS);
  const rowAt = new Uint32Array(count);
  const startAt = new Uint32Array(count);
  const sortedWords = new Uint32Array(start[count]);
  for (let f = 0; f < count; f++) {
    const from = start[f];
    const to = start[f + 1];
    const p = from * 4;
    const bucket = (bytes[p] << 8) | bytes[p + 1];
    const k = nextPosition[bucket]++;
    const w = nextWord[bucket];
    nextWord[bucket] = w + (to - from);
    rowAt[k] = rows[f];
    startAt[k] = w;
    for (let q = from, r = w; q < to; q++, r++) sortedWords[r] = words[q];
  }
  return { rowAt, startAt, bytes: new Uint8Array(sortedWords.buffer), bucketStart };
}

/**
 * Sorts every bucket of `sorted` in place by key bytes (ties by row ascending) and sets
 * `sameAsPrevious[k] = 1` where the key at position k equals the one at k - 1.
 *
 * Most-significant-digit radix sort whose digits are 4 or 6 key bytes: each group of positions
 * with a common key prefix packs (next key bytes, position in group) into 64-bit words that a
 * native BigUint64Array sort orders; runs of equal digits form the next groups. Positions keep
 * ties in row order, since every group starts in row order.
 */
function radixSortBuckets(sorted: SortedKeys, sameAsPrevious: Uint8Array): void {
  const { rowAt, startAt, bytes, bucketStart } = sorted;
  const n = rowAt.length;
  const packed = new BigUint64Array(n);
  const words = new Uint32Array(packed.buffer); // little-endian: [2k] low word, [2k+1] high word
  const scratchRow = new Uint32Array(n);
  const scratchStart = new Uint32Array(n);
  const stack: number[] = []; // (lo, hi, depth) triples of groups still to sort
  for (let b = BUCKETS - 1; b >= 0; b--) {
    const lo = bucketStart[b];
    const hi = bucketStart[b + 1];
    if (hi - lo < 2) continue;
    if ((b & 0xff) === 0) for (let e = lo + 1; e < hi; e++) sameAsPrevious[e] = 1; // keys ended
    else stack.push(lo, hi, 2);
  }
  while (stack.length > 0) {
    const depth = stack.pop()!;
    const hi = stack.pop()!;
    const lo = stack.pop()!;
    const size = hi - lo;
    if (size <= SMALL_GROUP) {
      insertionSortByKey(rowAt, startAt, bytes, lo, hi, depth, sameAsPrevious);
      continue;
    }
    const wide = size <= WIDE_GROUP;
    for (let k = 0; k < size; k++) {
      const p = startAt[lo + k] * 4 + depth;
      // inlined for speed: big-endian read of key bytes p..p+3 (and p+4, p+5 when wide)
      words[2 * (lo + k) + 1] = ((bytes[p] << 24) | (bytes[p + 1] << 16) | (bytes[p + 2] << 8) | bytes[p + 3]) >>> 0;
      words[2 * (lo + k)] = wide ? ((bytes[p + 4] << 24) | (bytes[p + 5] << 16) | k) >>> 0 : k;
    }
    packed.subarray(lo, hi).sort();
    scratchRow.set(rowAt.subarray(lo, hi), lo);
    scratchStart.set(startAt.subarray(lo, hi), lo);
    const positionMask = wide ? 0xffff : 0xffffffff;
    for (let k = lo; k < hi; k++) {
      const from = lo + (words[2 * k] & positionMask);
      rowAt[k] = scratchRow[from];
      startAt[k] = scratchStart[from];
    }

    // Runs of equal digits: finished when the digit ends in a zero byte (the keys ended).
    const width = wide ? 6 : 4;
    let runStart = lo;
    for (let k = lo + 1; k <= hi; k++) {
      if (
        k < hi &&
        words[2 * k + 1] === words[2 * k - 1] &&
        (!wide || words[2 * k] >>> 16 === words[2 * k - 2] >>> 16)
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

/** Insertion sort of positions lo..hi-1 by key bytes from `depth` on (stable); marks equal neighbours. */
function insertionSortByKey(
  rowAt: Uint32Array,
  startAt: Uint32Array,
  bytes: Uint8Array,
  lo: number,
  hi: number,
  depth: number,
  sameAsPrevious: Uint8Array,
): void {
  for (let k = lo + 1; k < hi; k++) {
    const row = rowAt[k];
    const keyStart = startAt[k];
    let j = k - 1;
    while (j >= lo && compareKeys(bytes, startAt[j], keyStart, depth) > 0) {
      rowAt[j + 1] = rowAt[j];
      startAt[j + 1] = startAt[j];
      j--;
    }
    rowAt[j + 1] = row;
    startAt[j + 1] = keyStart;
  }
  for (let k = lo + 1; k < hi; k++) {
    if (compareKeys(bytes, startAt[k - 1], startAt[k], depth) === 0) sameAsPrevious[k] = 1;
  }
}

/** Compares the keys at word offsets `a` and `b` from byte `depth` on: -1, 0 (same key) or 1. */
function compareKeys(bytes: Uint8Array, a: number, b: number, depth: number): number {
  let p = a * 4 + depth;
  let q = b * 4 + depth;
  for (;;) {
    const x = bytes[p++];
    const y = bytes[q++];
    if (x !== y) return x < y ? -1 : 1;
    if (x === 0) return 0; // both keys ended
  }
}
