/**
 * The order of a column whose values are doubles (`number`, `date` as day numbers, `datetime` as
 * milliseconds): a permutation of the rows by value with nulls first, dense ranks, the distinct
 * values and where each rank starts in the permutation. A range predicate is then two binary
 * searches over the distinct values and one slice of the permutation; a sort is a walk of it.
 *
 * Built without a comparator: the distinct values come from a native sort of a copy, each row's
 * rank from a binary search over them, and the permutation from a counting sort by rank (rows
 * ascending within a rank, so ties are in key order as docs/api.md "Ordering" needs).
 */

/** A double column's order. */
export interface OrderedColumn {
  /** Row numbers by value ascending, null rows first, ties by row ascending; length n. */
  rowsByValue: Uint32Array;
  /** Each row's rank: 0 for null, r ≥ 1 for the r-th smallest distinct value; length n. */
  rankByRow: Uint32Array;
  /** The distinct non-null values ascending: rank r is `distinct[r - 1]`; length d. */
  distinct: Float64Array;
  /** Where each rank's rows start in `rowsByValue` (rank 0 = null at 0); length d + 2, the last is n. */
  rankStarts: Uint32Array;
}

/**
 * Orders a double column.
 * @param values each row's value, NaN for null; length n (n < 2^32)
 * @returns the permutation, ranks, distinct values and rank starts (see {@link OrderedColumn})
 */
export function orderDoubles(values: Float64Array): OrderedColumn {
  const n = values.length;
  // A native sort puts NaN last: the distinct values are the non-NaN prefix, deduplicated.
  const sorted = values.slice().sort();
  let d = 0;
  for (let i = 0; i < n; i++) {
    const x = sorted[i];
    if (Number.isNaN(x)) break;
    // -0 and 0 are one value
    if (d === 0 || x !== sorted[d - 1]) sorted[d++] = x === 0 ? 0 : x;
  }
  const distinct = sorted.slice(0, d);
  const rankByRow = new Uint32Array(n);
  const counts = new Uint32Array(d + 2);
  for (let row = 0; row < n; row++) {
    const x = values[row];
    let rank = 0;
    if (!Number.isNaN(x)) {
      // first index with distinct[index] >= x; the value is there
      let lo = 0;
      let hi = d;
      while (lo < hi) {
        const mid = (lo + hi) >>> 1;
        if (distinct[mid] < x) lo = mid + 1;
        else hi = mid;
      }
      rank = lo + 1;
    }
    rankByRow[row] = rank;
    counts[rank + 1]++;
  }
  // counts[r + 1] held rank r's rows: prefix sums turn them into starts
  const rankStarts = counts;
  for (let r = 1; r < rankStarts.length; r++) rankStarts[r] += rankStarts[r - 1];
  const cursor = rankStarts.slice(0, d + 1);
  const rowsByValue = new Uint32Array(n);
  for (let row = 0; row < n; row++) rowsByValue[cursor[rankByRow[row]]++] = row;
  return { rowsByValue, rankByRow, distinct, rankStarts };
}

/** First index in the ascending `distinct` whose value is ≥ x (or > x when `strict`): a binary search. */
export function firstAtLeast(distinct: Float64Array, x: number, strict: boolean): number {
  let lo = 0;
  let hi = distinct.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (strict ? distinct[mid] <= x : distinct[mid] < x) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

/**
 * The slice of `rowsByValue` holding the rows whose value lies in [lo, hi] (bounds inclusive
 * unless the `…Open` flags say so; ±Infinity for an open side): positions [start, end).
 */
export function valueRange(column: OrderedColumn, lo: number, loOpen: boolean, hi: number, hiOpen: boolean): { start: number; end: number } {
  const first = firstAtLeast(column.distinct, lo, loOpen);
  const last = firstAtLeast(column.distinct, hi, !hiOpen);
  if (last <= first) return { start: 0, end: 0 };
  // rank = index + 1
  return { start: column.rankStarts[first + 1], end: column.rankStarts[last + 1] };
}

/**
 * Rows by absolute value ascending, then by signed value (-x before x), then by row: the order of
 * AG Grid's `absolute` sort (docs/api.md "POST /api/users"). NaN (null) rows first, by row.
 * @param values each row's value, NaN for null; length n
 * @returns a permutation of 0…n-1
 */
export function rowsByAbsoluteValue(values: Float64Array): Uint32Array {
  const n = values.length;
  const rows = new Uint32Array(n);
  for (let i = 0; i < n; i++) rows[i] = i;
  const key = (row: number) => (Number.isNaN(values[row]) ? -1 : Math.abs(values[row]));
  return Uint32Array.from(Array.from(rows).sort((a, b) => key(a) - key(b) || (values[a] || 0) - (values[b] || 0) || a - b));
}

/**
 * A permutation stably partitioned by group: the rows of group 0 in the permutation's order, then
 * group 1's, and so on (the text columns' `rowsByValueByPartition`).
 * @param rows a permutation of row numbers; length n
 * @param codes each row's group; length n
 * @param counts rows per group; length S
 * @returns a new permutation of length n; group g starts at the sum of `counts[0..g)`
 */
export function partitionRows(rows: Uint32Array, codes: Uint8Array, counts: Uint32Array): Uint32Array {
  const out = new Uint32Array(rows.length);
  const cursor = new Uint32Array(counts.length);
  for (let code = 1; code < cursor.length; code++) cursor[code] = cursor[code - 1] + counts[code - 1];
  for (let i = 0; i < rows.length; i++) {
    const row = rows[i];
    out[cursor[codes[row]]++] = row;
  }
  return out;
}
