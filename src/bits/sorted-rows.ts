/**
 * Binary search over an ascending list of row numbers (a `Uint32Array` such as a match set's
 * rows or a segment's tombstone places): the one lower bound the engine's membership tests and
 * counts are built on.
 */

/** Entries of the ascending `rows` below `x`: the first index whose entry is >= `x` (rows.length when none). O(log n). */
export function countBelow(rows: Uint32Array, x: number): number {
  let lo = 0;
  let hi = rows.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (rows[mid] < x) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

/** True when the ascending `rows` hold `row`. O(log n). */
export function sortedHas(rows: Uint32Array, row: number): boolean {
  const at = countBelow(rows, row);
  return at < rows.length && rows[at] === row;
}
