/**
 * Sorts a string column in the ordering rule of docs/api.md ("Ordering") fast enough for
 * 10M rows. Strings with a collation key (sort-key.ts) are sorted by their key bytes: each key
 * is written, as it is encoded, into a bucket of its first two bytes (a counting sort), then a
 * radix sort built on native typed-array sorts orders each bucket. The other strings (no key)
 * are deduplicated, sorted with `collator.compare`, and merged in by galloping binary search;
 * a final merge by (rank, row) interleaves both.
 *
 * The values come as JS strings or as packed UTF-8 (the snapshot build's case): from UTF-8 the
 * keys are encoded straight from the bytes, and only values without a key, plus the few values
 * the collator compares them with, are decoded to strings.
 *
 * Each key is written once, next to the keys of its bucket, so that later steps read memory near
 * what they sort: at 10M rows, random reads over the whole key buffer and first touches of fresh
 * memory cost more than comparisons. Hence also: typed arrays only, the row stored before its
 * key instead of a row array moved along, and no per-row objects.
 */
import { collator } from "./collation.ts";
import type { ByteColumn } from "../bits/byte-column.ts";
import { MAX_KEY_BYTES_PER_UNIT, encodeCollationKey, encodeCollationKeyUtf8 } from "./sort-key.ts";

if (new Uint8Array(new Uint32Array([1]).buffer)[0] !== 1) {
  // 64-bit sort words are written as two 32-bit halves, low half first
  throw new Error("collation/sort.ts needs a little-endian platform");
}

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
 * Sorts `values` in collation order (docs/api.md "Ordering": exactly
 * `new Intl.Collator("en", {sensitivity: "base", numeric: true}).compare`, ties broken by index).
 * Gives the same result as
 * `indexes.sort((a, b) => collator.compare(values[a], values[b]) || a - b)`.
 * Memory: about the total key bytes (one per character, mostly) plus 45 bytes per value,
 * transiently; strings without a key are also held in a Map while they are sorted.
 * @param values n strings (n < 2^32)
 * @returns `order` (Uint32Array, length n, a permutation of 0..n-1) and `ranks` (Uint32Array,
 *   length n, `ranks[i]` the dense rank of `values[i]`, non-decreasing along `order`)
 * @throws RangeError if n >= 2^32 or the keys of all values exceed 2^32 - 1 words (16 GiB)
 */
export function sortByCollation(values: readonly string[]): CollationSort {
  return sortSource(stringSource(values));
}

/**
 * {@link sortByCollation} of the strings packed in `column` (value i is the UTF-8 in
 * `bytes[offsets[i] .. offsets[i+1])`), read from the bytes: keys are encoded straight from
 * UTF-8, and only values without a key and the few values the collator compares them with are
 * decoded to strings. Same result as `sortByCollation` of the decoded strings.
 * @param column n values of well-formed UTF-8 (n < 2^32); offsets of length n + 1
 * @returns `order` and `ranks` as {@link sortByCollation}
 * @throws RangeError as {@link sortByCollation}
 */
export function sortUtf8ByCollation(column: ByteColumn): CollationSort {
  return sortSource(utf8Source(column));
}

/**
 * The values to sort, however they are stored: keys are encoded one value at a time, and the
 * values themselves are asked for only where the collator compares them.
 */
interface KeySource {
  /** Number of values, n. */
  count: number;
  /** Largest key value i can have, in bytes (the room `encodeKey` needs). */
  maxKeyBytes(i: number): number;
  /** Writes value i's key at `out[0..]`; returns its end, or -1 when the value has no key. */
  encodeKey(i: number, out: Uint8Array): number;
  /** Value i as a string. */
  valueAt(i: number): string;
  /** Mean size of a value in the units of `maxKeyBytes` (a sample), to size the key buffer. */
  meanLength(): number;
  /** Hints that values from..to-1 are read next (strings: touches them so cache misses overlap). */
  prefetch(from: number, to: number): number;
}

/** A {@link KeySource} over JS strings. */
function stringSource(values: readonly string[]): KeySource {
  return {
    count: values.length,
    maxKeyBytes: (i) => values[i].length * MAX_KEY_BYTES_PER_UNIT,
    encodeKey: (i, out) => encodeCollationKey(values[i], out, 0),
    valueAt: (i) => values[i],
    meanLength: () => sampleMean(values.length, (i) => values[i].length),
    prefetch: (from, to) => {
      let touched = 0;
      for (let j = from; j < to; j++) touched += values[j].length;
      return touched;
    },
  };
}

/** A {@link KeySource} over packed UTF-8. */
function utf8Source(column: ByteColumn): KeySource {
  const { bytes, offsets } = column;
  const decoder = new TextDecoder("utf-8", { ignoreBOM: true }); // a value may start with U+FEFF
  return {
    count: offsets.length - 1,
    maxKeyBytes: (i) => (offsets[i + 1] - offsets[i]) * MAX_KEY_BYTES_PER_UNIT,
    encodeKey: (i, out) => encodeCollationKeyUtf8(bytes, offsets[i], offsets[i + 1], out, 0),
    valueAt: (i) => decoder.decode(bytes.subarray(offsets[i], offsets[i + 1])),
    meanLength: () => sampleMean(offsets.length - 1, (i) => offsets[i + 1] - offsets[i]),
    prefetch: () => 0, // the bytes are read in order
  };
}

/** Mean of `lengthOf(i)` over about 1024 evenly spaced i in 0..n-1 (0 when n is 0). */
function sampleMean(n: number, lengthOf: (i: number) => number): number {
  let sampled = 0;
  const step = Math.max(1, Math.floor(n / 1024));
  for (let i = 0; i < n; i += step) sampled += lengthOf(i);
  return sampled / Math.max(1, Math.ceil(n / step));
}

/** {@link sortByCollation} of any {@link KeySource}. */
function sortSource(source: KeySource): CollationSort {
  const n = source.count;
  if (n >= 2 ** 32) throw new RangeError(`sortByCollation: ${n} values, at most 2^32 - 1`);
  // Fast rows by key; sameAsPrevious[k] = 1 when the key at position k equals the one at k - 1.
  const bucketed = encodeAndBucket(source);
  const fastCount = bucketed.startAt.length;
  const sameAsPrevious = new Uint8Array(fastCount);
  radixSortBuckets(bucketed, sameAsPrevious);
  const fastOrder = new Uint32Array(n); // rows by key; its first fastCount entries are used
  const arenaWords = bucketed.words;
  const startAt = bucketed.startAt;
  // each key's row is the word before it
  for (let k = 0; k < fastCount; k++) fastOrder[k] = arenaWords[startAt[k] - 1];

  // Fast classes (runs of equal keys) and the position in fastOrder where each starts.
  let fastClassCount = 0;
  for (let k = 0; k < fastCount; k++) if (sameAsPrevious[k] === 0) fastClassCount++;
  const fastClassStart = new Uint32Array(fastClassCount);
  for (let k = 0, c = 0; k < fastCount; k++) if (sameAsPrevious[k] === 0) fastClassStart[c++] = k;

  // Slow rows: collator classes of their distinct values.
  const { slowRows, slowIds } = bucketed;
  const { classOfId: slowClassOfId, classRep: slowClassRep } = classifyByCollator(bucketed.slowDistinct);

  // Dense ranks over both class sequences: each slow class is placed at its lower bound among
  // the fast classes (galloping from the previous one), or joins the fast class it equals.
  const rankOfFastClass = new Uint32Array(fastClassCount);
  const rankOfSlowClass = new Uint32Array(slowClassRep.length);
  let rank = 0;
  let c = 0; // next fast class without a rank
  for (let s = 0; s < slowClassRep.length; s++) {
    const rep = slowClassRep[s];
    const bound = lowerBoundFastClass(rep, c, source, fastOrder, fastClassStart);
    for (; c < bound; c++) rankOfFastClass[c] = rank++;
    if (c < fastClassCount && collator.compare(source.valueAt(fastOrder[fastClassStart[c]]), rep) === 0) {
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
  if (slowRows.length === 0) return { order: fastOrder, ranks }; // fastCount === n

  // Slow rows by (rank, row), then a merge with the fast order, which is by (rank, row) too.
  const slowByRank = new BigUint64Array(slowRows.length);
  const slowWords = new Uint32Array(slowByRank.buffer); // little-endian: [2s] low, [2s+1] high
  for (let s = 0; s < slowRows.length; s++) {
    const row = slowRows[s];
    const slowRank = rankOfSlowClass[slowClassOfId[slowIds[s]]];
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
 * Collator classes of distinct strings: sorted by `collator.compare`, runs of equal ones grouped.
 * @param distinct strings, pairwise different
 * @returns `classRep`: one string per class, ascending; `classOfId`: for each index of
 *   `distinct` (Uint32Array, same length), the index of its class in `classRep`
 */
function classifyByCollator(distinct: readonly string[]): { classOfId: Uint32Array; classRep: string[] } {
  const idOf = new Map<string, number>();
  for (let id = 0; id < distinct.length; id++) idOf.set(distinct[id], id);
  const sorted = distinct.slice().sort(collator.compare);
  const classOfId = new Uint32Array(distinct.length);
  const classRep: string[] = [];
  for (let k = 0; k < sorted.length; k++) {
    const value = sorted[k];
    if (k === 0 || collator.compare(classRep[classRep.length - 1], value) !== 0) classRep.push(value);
    classOfId[idOf.get(value)!] = classRep.length - 1;
  }
  return { classOfId, classRep };
}

/**
 * Smallest fast class index >= `from` whose value is not below `value` (fastClassCount if none),
 * by galloping then binary search with `collator.compare`.
 */
function lowerBoundFastClass(
  value: string,
  from: number,
  source: KeySource,
  fastOrder: Uint32Array,
  fastClassStart: Uint32Array,
): number {
  const count = fastClassStart.length;
  let lo = from; // every class below lo is below value
  let step = 1;
  let hi = from;
  while (hi < count && collator.compare(source.valueAt(fastOrder[fastClassStart[hi]]), value) < 0) {
    lo = hi + 1;
    hi += step;
    step *= 2;
  }
  if (hi > count) hi = count;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (collator.compare(source.valueAt(fastOrder[fastClassStart[mid]]), value) < 0) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

/** Fast rows laid out for sorting: position k holds the key that starts at word startAt[k]. */
interface BucketedKeys {
  /**
   * Records of the rows with a key: the row index, then its key bytes zero padded to a word
   * boundary with at least KEY_PADDING zeros. Each bucket's records lie in its own chunks.
   */
  words: Uint32Array;
  /** The same buffer as bytes. */
  bytes: Uint8Array;
  /** Word offset of the key at each position: by bucket (first two key bytes), then row. */
  startAt: Uint32Array;
  /** Free Uint32Array of the same length as startAt, for the radix sort. */
  scratch: Uint32Array;
  /** First position of each bucket (by first two key bytes); BUCKETS + 1 entries. */
  bucketStart: Uint32Array;
  /** Rows without a key, ascending. */
  slowRows: number[];
  /** For each entry of slowRows, the index of its value in slowDistinct. */
  slowIds: number[];
  /** The distinct values of the rows without a key, in first-seen order. */
  slowDistinct: string[];
}

/** Number of buckets of the counting sort: one per value of the first two key bytes. */
const BUCKETS = 65536;

/** Records are appended to per-bucket chunks of this many 32-bit words (4 KiB). */
const CHUNK_WORDS = 1024;

/** The encoding loop touches strings in batches of this many, one batch ahead. */
const LOOKAHEAD = 16;

/**
 * Encodes the key of every value and buckets the keys by their first two bytes (a counting
 * sort): each key is encoded into a scratch buffer, then appended with its row to a chunk of its
 * bucket, so the keys a bucket's sort reads later lie together in memory. Values without a key
 * are deduplicated on the way (names repeat).
 * @throws RangeError if the records need more than MAX_KEY_WORDS words
 */
function encodeAndBucket(source: KeySource): BucketedKeys {
  const n = source.count;
  const meanUnits = source.meanLength();
  // about one key byte per character, plus row and padding; untouched pages cost nothing, and it grows
  const estimate = Math.ceil((n * (meanUnits * 1.5 + 20)) / 4) + 64 * CHUNK_WORDS;
  let arena: Uint32Array = new Uint32Array(Math.min(MAX_KEY_WORDS, estimate));
  let arenaTop = 0; // first word of the next chunk
  const chunkNext = new Float64Array(BUCKETS); // next free word in each bucket's chunk
  const chunkEnd = new Float64Array(BUCKETS); // end of each bucket's chunk (0: none yet)

  let scratch = new Uint8Array(1024);
  let scratchWords = new Uint32Array(scratch.buffer);
  const startOf = new Uint32Array(n); // key word offsets in row order
  const bucketOf = new Uint16Array(n);
  const bucketStart = new Uint32Array(BUCKETS + 1);
  const slowRows: number[] = [];
  const slowIds: number[] = [];
  const slowIdOf = new Map<string, number>();
  const slowDistinct: string[] = [];
  let f = 0; // fast rows so far
  let touched = 0;
  for (let i = 0; i < n; i++) {
    if (i % LOOKAHEAD === 0) {
      // touches the next LOOKAHEAD strings at once, so their cache misses overlap
      touched += source.prefetch(i + LOOKAHEAD, Math.min(n, i + 2 * LOOKAHEAD));
    }
    const need = source.maxKeyBytes(i) + KEY_PADDING + 3;
    if (need > scratch.length) {
      scratch = new Uint8Array(4 * Math.ceil(need / 2));
      scratchWords = new Uint32Array(scratch.buffer);
    }
    const end = source.encodeKey(i, scratch);
    if (end < 0) {
      // no key: dedupe now, while the string is in cache
      const value = source.valueAt(i);
      let id = slowIdOf.get(value);
      if (id === undefined) {
        id = slowDistinct.length;
        slowIdOf.set(value, id);
        slowDistinct.push(value);
      }
      slowRows.push(i);
      slowIds.push(id);
      continue;
    }
    const padded = (end + KEY_PADDING + 3) & ~3; // zero padded to a word boundary
    for (let p = end; p < padded; p++) scratch[p] = 0;
    const words = padded >>> 2;
    const bucket = (scratch[0] << 8) | scratch[1];
    let w = chunkNext[bucket];
    if (w + 1 + words > chunkEnd[bucket]) {
      w = arenaTop;
      arenaTop += Math.max(CHUNK_WORDS, 1 + words);
      if (arenaTop > arena.length) arena = growArena(arena, arenaTop);
      chunkEnd[bucket] = arenaTop;
    }
    arena[w] = i;
    for (let q = 0; q < words; q++) arena[w + 1 + q] = scratchWords[q];
    chunkNext[bucket] = w + 1 + words;
    startOf[f] = w + 1;
    bucketOf[f++] = bucket;
    bucketStart[bucket + 1]++;
  }

  if (touched < 0) throw new Error("unreachable"); // keeps the lookahead reads alive
  for (let b = 1; b <= BUCKETS; b++) bucketStart[b] += bucketStart[b - 1];
  const nextPosition = bucketStart.slice(0, BUCKETS);
  const startAt = new Uint32Array(f);
  for (let g = 0; g < f; g++) startAt[nextPosition[bucketOf[g]]++] = startOf[g];
  return {
    words: arena,
    bytes: new Uint8Array(arena.buffer),
    startAt,
    scratch: startOf.subarray(0, f),
    bucketStart,
    slowRows,
    slowIds,
    slowDistinct,
  };
}

/**
 * A copy of `arena` with room for at least `need` words (doubling).
 * @throws RangeError beyond MAX_KEY_WORDS words
 */
function growArena(arena: Uint32Array, need: number): Uint32Array {
  if (need > MAX_KEY_WORDS) throw new RangeError(`sortByCollation: keys exceed ${MAX_KEY_WORDS} words`);
  let size = arena.length * 2;
  while (size < need) size *= 2;
  const grown = new Uint32Array(Math.min(size, MAX_KEY_WORDS));
  grown.set(arena);
  return grown;
}

/**
 * Sorts every bucket in place by key bytes (ties keep position order, which is row order) and
 * sets `sameAsPrevious[k] = 1` where the key at position k equals the one at k - 1.
 *
 * Most-significant-digit radix sort whose digits are 4 or 6 key bytes: each group of positions
 * with a common key prefix packs (next key bytes, position in group) into 64-bit words that a
 * native BigUint64Array sort orders; runs of equal digits form the next groups. Only the key
 * offsets move: each key's row is stored before it.
 */
function radixSortBuckets(bucketed: BucketedKeys, sameAsPrevious: Uint8Array): void {
  const { startAt, bytes, bucketStart, scratch } = bucketed;
  const n = startAt.length;
  const packed = new BigUint64Array(n);
  const words = new Uint32Array(packed.buffer); // little-endian: [2k] low word, [2k+1] high word
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
      insertionSortByKey(startAt, bytes, lo, hi, depth, sameAsPrevious);
      continue;
    }
    const wide = size <= WIDE_GROUP;
    for (let k = 0; k < size; k++) {
      const p = startAt[lo + k] * 4 + depth;
      // inlined for speed: big-endian read of key bytes p..p+3 (and p+4, p+5 when wide)
      const high = (bytes[p] << 24) | (bytes[p + 1] << 16) | (bytes[p + 2] << 8) | bytes[p + 3];
      words[2 * (lo + k) + 1] = high >>> 0;
      words[2 * (lo + k)] = wide ? ((bytes[p + 4] << 24) | (bytes[p + 5] << 16) | k) >>> 0 : k;
    }
    packed.subarray(lo, hi).sort();
    scratch.set(startAt.subarray(lo, hi), lo);

    // Permute, and find runs of equal digits: finished when the digit ends in a zero byte
    // (the keys ended), else the next group.
    const positionMask = wide ? 0xffff : 0xffffffff;
    const digitMask = wide ? 0xffff0000 : 0;
    const width = wide ? 6 : 4;
    let runStart = lo;
    startAt[lo] = scratch[lo + (words[2 * lo] & positionMask)];
    for (let k = lo + 1; k <= hi; k++) {
      if (k < hi) {
        startAt[k] = scratch[lo + (words[2 * k] & positionMask)];
        const sameHigh = words[2 * k + 1] === words[2 * k - 1];
        if (sameHigh && (words[2 * k] & digitMask) === (words[2 * k - 2] & digitMask)) continue;
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
  startAt: Uint32Array,
  bytes: Uint8Array,
  lo: number,
  hi: number,
  depth: number,
  sameAsPrevious: Uint8Array,
): void {
  for (let k = lo + 1; k < hi; k++) {
    const keyStart = startAt[k];
    let j = k - 1;
    while (j >= lo && compareKeys(bytes, startAt[j], keyStart, depth) > 0) {
      startAt[j + 1] = startAt[j];
      j--;
    }
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
