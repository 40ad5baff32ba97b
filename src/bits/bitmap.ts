/**
 * Row bitmaps: bit r of word r >>> 5 is set when row r is in the set. A bitmap over n rows
 * has ceil(n / 32) words; bits past n are always zero.
 */

/** A row bitmap (see the module doc); length ceil(rowCount / 32) words. */
export type Bitmap = Uint32Array;

/** An empty bitmap over `rowCount` rows. */
export function emptyBitmap(rowCount: number): Bitmap {
  return new Uint32Array((rowCount + 31) >>> 5);
}

/** A bitmap with every one of `rowCount` rows set. */
export function fullBitmap(rowCount: number): Bitmap {
  const bits = emptyBitmap(rowCount);
  setRange(bits, 0, rowCount);
  return bits;
}

/** Sets rows [lo, hi) in `bits`. */
export function setRange(bits: Bitmap, lo: number, hi: number): void {
  if (hi <= lo) return;
  let w = lo >>> 5;
  const last = (hi - 1) >>> 5;
  const head = 0xffffffff << (lo & 31);
  // mask of bits 0..(hi-1)&31 inclusive
  const tail = 0xffffffff >>> (31 - ((hi - 1) & 31));
  if (w === last) {
    bits[w] |= head & tail;
    return;
  }
  bits[w++] |= head;
  while (w < last) bits[w++] = 0xffffffff;
  bits[last] |= tail;
}

/** A bitmap of the given rows (any order) over `rowCount` rows. */
export function bitmapOfRows(rows: Uint32Array, rowCount: number): Bitmap {
  const bits = emptyBitmap(rowCount);
  for (let i = 0; i < rows.length; i++) {
    const row = rows[i];
    bits[row >>> 5] |= 1 << (row & 31);
  }
  return bits;
}

/** True when `row` is set. */
export function hasRow(bits: Bitmap, row: number): boolean {
  return (bits[row >>> 5] & (1 << (row & 31))) !== 0;
}

/** `a &= b`, in place; returns a. */
export function andInPlace(a: Bitmap, b: Bitmap): Bitmap {
  for (let i = 0; i < a.length; i++) a[i] &= b[i];
  return a;
}

/** `out = a & b` (all of one length), in one pass; returns the number of rows set in `out`. */
export function andInto(out: Bitmap, a: Bitmap, b: Bitmap): number {
  let count = 0;
  for (let i = 0; i < out.length; i++) {
    const w = a[i] & b[i];
    if (w !== 0) {
      out[i] = w;
      count += popcount32(w);
    }
  }
  return count;
}

/** `a |= b`, in place; returns a. */
export function orInPlace(a: Bitmap, b: Bitmap): Bitmap {
  for (let i = 0; i < a.length; i++) a[i] |= b[i];
  return a;
}

/** Complements `a` over `rowCount` rows, in place (bits past rowCount stay zero); returns a. */
export function notInPlace(a: Bitmap, rowCount: number): Bitmap {
  for (let i = 0; i < a.length; i++) a[i] = ~a[i];
  const spare = rowCount & 31;
  if (spare !== 0 && a.length > 0) a[a.length - 1] &= 0xffffffff >>> (32 - spare);
  return a;
}

/** Number of set bits in one 32-bit word (SWAR popcount). */
export function popcount32(x: number): number {
  x = x - ((x >>> 1) & 0x55555555);
  x = (x & 0x33333333) + ((x >>> 2) & 0x33333333);
  return (Math.imul((x + (x >>> 4)) & 0x0f0f0f0f, 0x01010101) >>> 24);
}

/** Number of rows set. */
export function countRows(bits: Bitmap): number {
  let count = 0;
  for (let i = 0; i < bits.length; i++) {
    const w = bits[i];
    if (w !== 0) count += popcount32(w);
  }
  return count;
}

/** The set rows, ascending; length = countRows(bits) (pass it as `count` when known). */
export function rowsOfBitmap(bits: Bitmap, count = countRows(bits)): Uint32Array {
  const rows = new Uint32Array(count);
  let k = 0;
  for (let i = 0; i < bits.length; i++) {
    let w = bits[i];
    while (w !== 0) {
      // lowest set bit: its index is 31 - clz32(w & -w)
      const low = w & -w;
      rows[k++] = (i << 5) | (31 - Math.clz32(low));
      w ^= low;
    }
  }
  return rows;
}

/** Number of rows set in both `a` and `b` (same length), without materializing `a & b`. */
export function countAnd(a: Bitmap, b: Bitmap): number {
  let count = 0;
  for (let i = 0; i < a.length; i++) {
    const w = a[i] & b[i];
    if (w !== 0) count += popcount32(w);
  }
  return count;
}

/**
 * The set rows of ranks [offset, offset + limit) in ascending row order, or in descending
 * order when `reverse` (rank 0 is then the highest row). Whole words are skipped by
 * popcount: O(rowCount / 32 + limit), no row list is built.
 */
export function selectRows(bits: Bitmap, offset: number, limit: number, reverse: boolean): Uint32Array {
  const out = new Uint32Array(limit);
  let k = 0;
  let skip = offset;
  const words = bits.length;
  for (let step = 0; step < words && k < limit; step++) {
    const w = reverse ? words - 1 - step : step;
    let word = bits[w];
    if (word === 0) continue;
    const c = popcount32(word);
    if (skip >= c) {
      skip -= c;
      continue;
    }
    while (word !== 0 && k < limit) {
      let bit: number;
      if (reverse) {
        bit = 31 - Math.clz32(word);
        word &= ~(1 << bit);
      } else {
        const low = word & -word;
        bit = 31 - Math.clz32(low);
        word ^= low;
      }
      if (skip > 0) {
        skip--;
        continue;
      }
      out[k++] = (w << 5) | bit;
    }
  }
  return out.subarray(0, k);
}
