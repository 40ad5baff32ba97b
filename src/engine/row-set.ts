/**
 * Row sets: what a filter selects, in the forms the store gives for free — every row, the rows of
 * some partition codes (a mask), or a match set held as a bitmap, an ascending row list or a
 * posting list referenced without decoding — and what every consumer (windows, facets, export)
 * asks of them: the count, the rows ascending, the first rows, the counts per partition code.
 */
import { type Bitmap, countAnd, emptyBitmap, rowsOfBitmap } from "../bits/bitmap.ts";
import { listRows } from "../bits/trigrams.ts";
import type { Store, TrigramIndex } from "../store/types.ts";
import { allCodes, partitionCounts } from "../store/types.ts";

/** A posting list of a trigram index, referenced rather than decoded. */
export interface ListRef {
  index: TrigramIndex;
  /** The list's index in `index.keys`. */
  k: number;
}

/**
 * The rows a filter selects: those of `bits`, `rows` or `list` (at least one is set) whose
 * partition code is in `mask`. Rows and per-code counts are built on first use by
 * {@link matchRows} and {@link matchCountByCode} and kept (a cached match set gets cheaper with
 * use); walks borrow the engine's scratch bitmap (execute.ts).
 */
export interface MatchSet {
  /** Matching rows, in rows. */
  count: number;
  /** Matching rows per partition code (length S), once known. */
  countByCode: Uint32Array | null;
  /** Partition codes the matches are restricted to (bit c = code c). */
  mask: number;
  /**
   * Membership bitmap over the store's rows, when materialized. Holds exactly the matches
   * unless `bitsExact` is false: then it is a posting list's bitmap that also holds rows of
   * codes outside `mask`.
   */
  bits: Bitmap | null;
  bitsExact: boolean;
  /** True when `bits` is a view into the store (a dense posting list): never change it. */
  sharedBits: boolean;
  /** The matching rows ascending (key order), when materialized; length count. */
  rows: Uint32Array | null;
  /** A sparse posting list whose rows of the codes in `mask` are the matches. */
  list: ListRef | null;
}

/**
 * A filter's result: every row, the rows whose partition code is in a mask (bit c = code c), or
 * an explicit match set. No row is a mask of 0.
 */
export type FilterResult = { kind: "all" } | { kind: "codes"; mask: number } | { kind: "set"; set: MatchSet };

/** The rows whose partition code is in `mask`, counted from the partition's counts. */
export function rowsInMask(store: Store, mask: number): number {
  const counts = partitionCounts(store);
  let rows = 0;
  for (let c = 0; c < counts.length; c++) if ((mask >>> c) & 1) rows += counts[c];
  return rows;
}

/** Matching rows of a filter result. */
export function countOf(store: Store, result: FilterResult): number {
  if (result.kind === "all") return store.rowCount;
  if (result.kind === "set") return result.set.count;
  return rowsInMask(store, result.mask);
}

/** The rows (ascending) whose partition code is in `mask`: O(rows). */
export function keepCodes(store: Store, rows: Uint32Array, mask: number): Uint32Array {
  const codes = store.partition?.codes;
  if (codes === undefined || (mask & allCodes(store)) === allCodes(store)) return rows;
  let k = 0;
  const kept = new Uint32Array(rows.length);
  for (let i = 0; i < rows.length; i++) if ((mask >>> codes[rows[i]]) & 1) kept[k++] = rows[i];
  return kept.subarray(0, k);
}

/** The match set's rows ascending, decoded or built on first use and kept; length `set.count`. */
export function matchRows(store: Store, set: MatchSet): Uint32Array {
  if (set.rows === null) {
    if (set.list !== null) set.rows = listRows(set.list.index, set.list.k, store.rowCount, Number.POSITIVE_INFINITY, set.mask);
    else if (set.bitsExact) set.rows = rowsOfBitmap(set.bits as Bitmap, set.count);
    else set.rows = keepCodes(store, rowsOfBitmap(set.bits as Bitmap), set.mask);
  }
  return set.rows;
}

/**
 * The first `limit` matching rows ascending (fewer when the set is smaller), decoding no more
 * of a sparse posting list than that: O(limit) for a list, else as {@link matchRows}.
 */
export function firstMatchRows(store: Store, set: MatchSet, limit: number): Uint32Array {
  if (set.rows === null && set.list !== null) return listRows(set.list.index, set.list.k, store.rowCount, limit, set.mask);
  return matchRows(store, set).subarray(0, limit);
}

/** Per store, the bitmap of each partition code's rows: built on first use (O(rowCount)), then kept. */
const codeBitmapCache = new WeakMap<Store, Bitmap[]>();

/**
 * The bitmap of each partition code's rows; index = code (length S). Shared: never change them.
 * Computed once per store, so that a filter on the partition column combined with others costs
 * O(rowCount / 32).
 */
export function codeBitmaps(store: Store): Bitmap[] {
  let maps = codeBitmapCache.get(store);
  if (maps === undefined) {
    const counts = partitionCounts(store);
    maps = Array.from(counts, () => emptyBitmap(store.rowCount));
    const codes = store.partition?.codes;
    if (codes === undefined) {
      const all = maps[0];
      for (let row = 0; row < store.rowCount; row++) all[row >>> 5] |= 1 << (row & 31);
    } else for (let row = 0; row < codes.length; row++) maps[codes[row]][row >>> 5] |= 1 << (row & 31);
    codeBitmapCache.set(store, maps);
  }
  return maps;
}

/** A new bitmap of the rows whose partition code is in `mask`. */
export function maskBitmap(store: Store, mask: number): Bitmap {
  const maps = codeBitmaps(store);
  const bits = emptyBitmap(store.rowCount);
  for (let code = 0; code < maps.length; code++) {
    if (((mask >>> code) & 1) === 0) continue;
    const map = maps[code];
    for (let w = 0; w < bits.length; w++) bits[w] |= map[w];
  }
  return bits;
}

/** Per store, bitmaps of masks of several partition codes (see {@link maskBits}), most recent last. */
const maskBitsCache = new WeakMap<Store, Map<number, Bitmap>>();

/** Masks of several codes whose bitmaps a store keeps (each ceil(rowCount / 32) words). */
const MASK_BITS_KEPT = 4;

/**
 * The bitmap of the rows whose partition code is in `mask` (read-only: shared): a code's own
 * bitmap ({@link codeBitmaps}) for one code, else built and kept for the last few masks asked.
 */
export function maskBits(store: Store, mask: number): Bitmap {
  const single = singleCode(mask);
  if (single >= 0) return codeBitmaps(store)[single];
  let kept = maskBitsCache.get(store);
  if (kept === undefined) {
    kept = new Map();
    maskBitsCache.set(store, kept);
  }
  let bits = kept.get(mask);
  if (bits !== undefined) {
    kept.delete(mask);
    kept.set(mask, bits);
    return bits;
  }
  bits = maskBitmap(store, mask);
  kept.set(mask, bits);
  if (kept.size > MASK_BITS_KEPT) kept.delete(kept.keys().next().value as number);
  return bits;
}

/**
 * Matching rows per partition code (length S), computed on first use and kept: O(count) over
 * rows, or O(rowCount / 32) per code over the bitmap.
 */
export function matchCountByCode(store: Store, set: MatchSet): Uint32Array {
  if (set.countByCode !== null) return set.countByCode;
  const groups = partitionCounts(store).length;
  const counts = new Uint32Array(groups);
  const codes = store.partition?.codes;
  if (codes === undefined) counts[0] = set.count;
  else if (set.bits === null || !set.bitsExact) {
    const rows = matchRows(store, set);
    for (let i = 0; i < rows.length; i++) counts[codes[rows[i]]]++;
  } else {
    const maps = codeBitmaps(store);
    for (let code = 0; code < maps.length; code++) counts[code] = countAnd(set.bits, maps[code]);
  }
  set.countByCode = counts;
  return counts;
}

/** The single code of a mask with exactly one bit set, or -1 for any other mask. */
export function singleCode(mask: number): number {
  return mask !== 0 && (mask & (mask - 1)) === 0 ? 31 - Math.clz32(mask) : -1;
}
