/**
 * Byte-level trigram posting lists over a folded string column: the index that turns a
 * substring filter into one posting list (a 3-byte needle) or an intersection of a few.
 * Dense lists are bitmaps and sparse ones LEB128 gaps (types.ts `TrigramIndex`).
 */
import { rowsOfBitmap } from "../engine/bitmap.ts";
import type { TrigramIndex } from "./types.ts";

/** Number of possible 3-byte keys (2^24). */
const KEY_SPACE = 1 << 24;

/** Scratch tables over the 2^24 key space, allocated once per process and left zeroed. */
let scratch: { counts: Uint32Array; lastRow: Uint32Array } | null = null;

/**
 * True when a list of `count` rows out of `rowCount` is stored as a bitmap: when the bitmap
 * (rowCount / 8 bytes) is smaller than the list as 4-byte row numbers.
 */
export function isDense(count: number, rowCount: number): boolean {
  return count * 32 > rowCount;
}

/** Bytes of `x` as unsigned LEB128. */
function leb128Size(x: number): number {
  return x < 0x80 ? 1 : x < 0x4000 ? 2 : x < 0x200000 ? 3 : x < 0x10000000 ? 4 : 5;
}

/**
 * Builds the trigram index of `rowCount` folded strings packed as `bytes`/`offsets`
 * (value r is `bytes[offsets[r] .. offsets[r+1])`). Every distinct 3-byte sequence of a value
 * lists that row once. Uses two 64 MiB scratch tables kept for the next build (only the keys
 * touched are visited, so small builds are cheap) and, transiently, 4 bytes per posting.
 * @throws RangeError when the postings exceed 2^32 entries or the gaps 4 GiB.
 */
export function buildTrigramIndex(bytes: Uint8Array, offsets: Uint32Array, rowCount: number): TrigramIndex {
  scratch ??= { counts: new Uint32Array(KEY_SPACE), lastRow: new Uint32Array(KEY_SPACE) };
  const { counts, lastRow } = scratch;
  let touched = new Uint32Array(1024);
  let distinct = 0;
  let total = 0;
  for (let row = 0; row < rowCount; row++) {
    const start = offsets[row];
    const end = offsets[row + 1];
    // lastRow[key] = 1 + the last row that counted key, to count each row once per key.
    const mark = row + 1;
    for (let i = start; i + 2 < end; i++) {
      const key = (bytes[i] << 16) | (bytes[i + 1] << 8) | bytes[i + 2];
      if (lastRow[key] !== mark) {
        lastRow[key] = mark;
        if (counts[key]++ === 0) {
          if (distinct === touched.length) {
            const grown = new Uint32Array(touched.length * 2);
            grown.set(touched);
            touched = grown;
          }
          touched[distinct++] = key;
        }
        total++;
      }
    }
  }
  if (total > 0xffffffff) throw new RangeError("trigram postings exceed 2^32 entries");

  const keys = touched.slice(0, distinct).sort();
  const listCounts = new Uint32Array(distinct);
  const listStarts = new Float64Array(distinct + 1);
  // Reuse counts as each key's write cursor into the transient postings. The fill pass below
  // repeats the counting pass's scan on purpose: a shared callback would cost a call per byte.
  let cursor = 0;
  for (let k = 0; k < distinct; k++) {
    const key = keys[k];
    const c = counts[key];
    listCounts[k] = c;
    listStarts[k] = cursor;
    counts[key] = cursor;
    cursor += c;
    lastRow[key] = 0;
  }
  listStarts[distinct] = cursor;

  const postings = new Uint32Array(total);
  for (let row = 0; row < rowCount; row++) {
    const start = offsets[row];
    const end = offsets[row + 1];
    const mark = row + 1;
    for (let i = start; i + 2 < end; i++) {
      const key = (bytes[i] << 16) | (bytes[i + 1] << 8) | bytes[i + 2];
      if (lastRow[key] !== mark) {
        lastRow[key] = mark;
        postings[counts[key]++] = row;
      }
    }
  }
  // Leave the scratch tables zeroed for the next build.
  for (let k = 0; k < distinct; k++) {
    counts[keys[k]] = 0;
    lastRow[keys[k]] = 0;
  }

  // Size the two stores, then fill them.
  const words = (rowCount + 31) >>> 5;
  let denseLists = 0;
  let gapBytes = 0;
  for (let k = 0; k < distinct; k++) {
    if (isDense(listCounts[k], rowCount)) {
      denseLists++;
      continue;
    }
    let prev = 0;
    for (let p = listStarts[k]; p < listStarts[k + 1]; p++) {
      const row = postings[p];
      gapBytes += leb128Size(row - prev);
      prev = row;
    }
  }
  if (gapBytes > 0xffffffff) throw new RangeError("trigram gaps exceed 4 GiB");
  const refs = new Uint32Array(distinct);
  const bitmaps = new Uint32Array(denseLists * words);
  const gaps = new Uint8Array(gapBytes);
  let slot = 0;
  let at = 0;
  for (let k = 0; k < distinct; k++) {
    const from = listStarts[k];
    const to = listStarts[k + 1];
    if (isDense(listCounts[k], rowCount)) {
      const base = slot * words;
      refs[k] = base;
      for (let p = from; p < to; p++) {
        const row = postings[p];
        bitmaps[base + (row >>> 5)] |= 1 << (row & 31);
      }
      slot++;
      continue;
    }
    refs[k] = at;
    let prev = 0;
    for (let p = from; p < to; p++) {
      const row = postings[p];
      let gap = row - prev;
      prev = row;
      // inline LEB128: 7 bits a byte, continuation bit 0x80
      while (gap >= 0x80) {
        gaps[at++] = (gap & 0x7f) | 0x80;
        gap >>>= 7;
      }
      gaps[at++] = gap;
    }
  }
  return { keys, counts: listCounts, refs, bitmaps, gaps };
}

/** Index of `key` in `index.keys`, or -1: binary search, O(log K). */
export function findList(index: TrigramIndex, key: number): number {
  const keys = index.keys;
  let lo = 0;
  let hi = keys.length - 1;
  while (lo <= hi) {
    const mid = (lo + hi) >>> 1;
    const k = keys[mid];
    if (k < key) lo = mid + 1;
    else if (k > key) hi = mid - 1;
    else return mid;
  }
  return -1;
}

/**
 * The bitmap of dense list `k` (see {@link isDense}): a view into the index, ceil(rowCount/32)
 * words. Read-only: copy it before changing it.
 */
export function denseBitmap(index: TrigramIndex, k: number, rowCount: number): Uint32Array {
  const words = (rowCount + 31) >>> 5;
  return index.bitmaps.subarray(index.refs[k], index.refs[k] + words);
}

/**
 * The rows of list `k`, ascending; length `index.counts[k]`. Sparse lists are decoded from
 * their gaps, O(count); dense ones read from their bitmap, O(rowCount / 32 + count).
 */
export function listRows(index: TrigramIndex, k: number, rowCount: number): Uint32Array {
  const count = index.counts[k];
  if (isDense(count, rowCount)) return rowsOfBitmap(denseBitmap(index, k, rowCount), count);
  const rows = new Uint32Array(count);
  const gaps = index.gaps;
  let at = index.refs[k];
  let row = 0;
  for (let i = 0; i < count; i++) {
    // inline LEB128 decode
    let b = gaps[at++];
    let gap = b & 0x7f;
    let shift = 7;
    while (b & 0x80) {
      b = gaps[at++];
      gap |= (b & 0x7f) << shift;
      shift += 7;
    }
    // >>> 0: a 5-byte gap sets bit 31, which | leaves as a sign
    row += gap >>> 0;
    rows[i] = row;
  }
  return rows;
}
