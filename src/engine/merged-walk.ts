/**
 * The walk of one segment of a stored order merged with a live replica's delta
 * (docs/live-replicas.md §4): the segment's base rows in its order, tombstoned ones skipped,
 * with the delta rows that belong to it (its {@link Overlay}) interleaved at their places. Runs
 * of equal first-key rank² (base rows of one rank and delta rows of that rank², or delta rows of
 * one odd rank² between two base values) are sorted by the other keys, as the base's runs are.
 *
 * A walk state is (i, j): base local index i and insert index j, every element before both
 * passed. Without a membership test but the tombstones, a window at any offset is found by
 * arithmetic on the inserts' and dead rows' places (two binary searches), not by walking.
 */
import { countBelow } from "../bits/sorted-rows.ts";
import type { Segment } from "./order.ts";

/**
 * A segment's delta part, in the segment's walking order (reversed for a descending segment).
 */
export interface Overlay {
  /** The delta rows that belong to the segment and pass the filter (extended row numbers), in order. */
  rows: Uint32Array;
  /** The base local index each goes before; nondecreasing; length rows.length. */
  at: Uint32Array;
  /** Local indexes of the segment's tombstoned base rows, ascending (only read without a membership test). */
  deadAt: Uint32Array;
  /** Tombstoned base rows of the segment that the filter holds. */
  deadMatches: number;
  /** The rank² of the segment's run column, for an extended row (when the segment resolves runs). */
  rank2: ((row: number) => number) | null;
  /** Orders a run's rows by the segment's other keys, then the key (extended rows). */
  compare: ((a: number, b: number) => number) | null;
}

/** What a merged walk of a segment gives back (see order.ts `walkSegment`). */
export interface MergedWalk {
  k: number;
  /** The state where emitting began (a run's start), or -1s when nothing was emitted. */
  runI: number;
  runJ: number;
  skippedInRun: number;
  skipLeft: number;
}

/**
 * Walks segment `seg` merged with `ov` from state (`fromI`, `fromJ`), skipping `skip` members and
 * emitting up to `take` into `out` at `k`. A base row is a member unless tombstoned (`dead`), out
 * of `bits` (when set) or of the segment's partition codes; every insert is a member.
 * @param codes the base's partition codes (length N; empty without a partition)
 * @param allCodes the mask of every partition code
 */
export function walkMerged(
  seg: Segment,
  ov: Overlay,
  codes: Uint8Array,
  allCodes: number,
  bits: Uint32Array | null,
  dead: Uint32Array,
  fromI: number,
  fromJ: number,
  skip: number,
  take: number,
  out: Uint32Array,
  k: number,
): MergedWalk {
  const len = seg.end - seg.start;
  const perm = seg.perm;
  const base = seg.start;
  const last = seg.end - 1;
  const reverse = seg.reverse;
  const mask = seg.codeMask;
  const testCode = mask !== allCodes;
  const needTest = bits !== null || testCode;
  const rows = ov.rows;
  const at = ov.at;
  const J = rows.length;
  const rowAt = (i: number) => {
    const p = reverse ? last - i : base + i;
    return perm === null ? p : perm[p];
  };
  const member = (row: number) => (dead[row >>> 5] & (1 << (row & 31))) === 0 && (bits === null || (bits[row >>> 5] & (1 << (row & 31))) !== 0) && (!testCode || ((mask >>> codes[row]) & 1) === 1);
  const runs = seg.rank !== null && seg.rest.length > 0 && ov.rank2 !== null && ov.compare !== null;
  const rank = seg.rank as Uint32Array;
  const rank2 = ov.rank2 as (row: number) => number;
  let i = fromI;
  let j = fromJ;

  if (!needTest && skip > 0) {
    // the members before the target: live base rows before local i, and inserts before j
    const deadAt = ov.deadAt;
    const liveBefore = (x: number) => x - countBelow(deadAt, x);
    const target = liveBefore(i) + j + skip;
    // inserts before the target: those with (index + live base rows before it) < target
    let lo = j;
    let hi = J;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if (mid + liveBefore(at[mid]) < target) lo = mid + 1;
      else hi = mid;
    }
    const jStar = lo;
    // the first base index with target − j* live rows before it
    const want = target - jStar;
    let bLo = i;
    let bHi = len;
    while (bLo < bHi) {
      const mid = (bLo + bHi) >>> 1;
      if (liveBefore(mid) < want) bLo = mid + 1;
      else bHi = mid;
    }
    i = bLo;
    j = jStar;
    skip = 0;
    if (runs) {
      // back to the start of the run holding the target (the next member's rank²)
      let pi = i;
      let pj = j;
      let g = -1;
      while (g < 0) {
        if (pj < J && at[pj] <= pi) g = rank2(rows[pj]);
        else if (pi < len) {
          const row = rowAt(pi++);
          if ((dead[row >>> 5] & (1 << (row & 31))) === 0) g = 2 * rank[row];
        } else break;
      }
      if (g >= 0) {
        while (i > fromI || j > fromJ) {
          if (j > fromJ && at[j - 1] >= i) {
            if (rank2(rows[j - 1]) !== g) break;
            j--;
            skip++;
          } else if (i > fromI) {
            const row = rowAt(i - 1);
            if (2 * rank[row] !== g) break;
            i--;
            if ((dead[row >>> 5] & (1 << (row & 31))) === 0) skip++;
          } else break;
        }
      }
    }
  }

  let runI = -1;
  let runJ = -1;
  let skippedInRun = 0;
  if (!runs) {
    while (take > 0) {
      const si = i;
      const sj = j;
      let x: number;
      if (j < J && at[j] <= i) x = rows[j++];
      else if (i < len) {
        x = rowAt(i++);
        if (!member(x)) continue;
      } else break;
      if (skip > 0) {
        skip--;
        continue;
      }
      if (runI < 0) {
        runI = si;
        runJ = sj;
      }
      out[k++] = x;
      take--;
    }
    return { k, runI, runJ, skippedInRun: 0, skipLeft: skip };
  }
  const compare = ov.compare as (a: number, b: number) => number;
  const run: number[] = [];
  while (take > 0 && (j < J || i < len)) {
    const si = i;
    const sj = j;
    const g = j < J && at[j] <= i ? rank2(rows[j]) : 2 * rank[rowAt(i)];
    run.length = 0;
    for (;;) {
      if (j < J && at[j] <= i) {
        if (rank2(rows[j]) !== g) break;
        run.push(rows[j++]);
      } else if (i < len) {
        const row = rowAt(i);
        if (2 * rank[row] !== g) break;
        i++;
        if (member(row)) run.push(row);
      } else break;
    }
    if (skip >= run.length) {
      skip -= run.length;
      continue;
    }
    if (run.length > 1) run.sort(compare);
    if (runI < 0) {
      runI = si;
      runJ = sj;
      skippedInRun = skip;
    }
    for (let x = skip; x < run.length && take > 0; x++) {
      out[k++] = run[x];
      take--;
    }
    skip = 0;
  }
  return { k, runI, runJ, skippedInRun, skipLeft: skip };
}
