/**
 * Substring, equality, prefix and suffix tests through a column's trigram posting lists
 * (bits/trigrams.ts): the needle's lists intersected, smallest first, while decoding the next
 * list costs less than verifying the candidates left, then every candidate verified on the
 * column's folded bytes (or, for a number key, its decimal form).
 */
import { bytesMatch, type PositiveTextOp } from "../bits/folded-match.ts";
import { denseBitmap, isDense, listRows } from "../bits/trigrams.ts";
import { textPasses } from "../kinds/ordered.ts";
import type { Store, TrigramIndex } from "../store/types.ts";
import type { TextSource } from "./plan.ts";
import { PIECE, type Work } from "../bits/work.ts";
import { COST } from "./planner.ts";

const encoder = new TextEncoder();

/**
 * The rows whose value satisfies `op` against the folded `needle` (3+ code points), ascending;
 * work that pauses between pieces of candidates.
 * @param lists the needle's lists in `source.trigrams`, smallest first (the planner's order)
 */
export function* trigramRows(store: Store, source: TextSource, lists: number[], op: PositiveTextOp, needle: string): Work<Uint32Array> {
  const candidates = trigramCandidates(store, source.trigrams, lists);
  yield;
  const out = new Uint32Array(candidates.length);
  let k = 0;
  for (let from = 0; from < candidates.length; from += PIECE) {
    k = verifyRows(source, candidates, from, Math.min(candidates.length, from + PIECE), op, needle, out, k);
    yield;
  }
  return out.subarray(0, k);
}

/**
 * Rows in the first of the given lists and in as many of the others as pay for themselves (a
 * dense list tested bit by bit costs a read per candidate; a sparse one is decoded and
 * intersected), ascending: a superset of the rows holding the needle.
 */
function trigramCandidates(store: Store, index: TrigramIndex, lists: number[]): Uint32Array {
  const n = store.rowCount;
  let rows = listRows(index, lists[0], n);
  for (let l = 1; l < lists.length && rows.length > 0; l++) {
    const k = lists[l];
    const count = index.counts[k];
    const dense = isDense(count, n);
    // stop once verifying what is left costs less than this list (the planner's rule, planner.ts)
    if ((dense ? rows.length : count * COST.POSTING) > rows.length * COST.VERIFY_ROW) break;
    if (dense) {
      const bits = denseBitmap(index, k, n);
      let j = 0;
      for (let i = 0; i < rows.length; i++) {
        const row = rows[i];
        if (bits[row >>> 5] & (1 << (row & 31))) rows[j++] = row;
      }
      rows = rows.subarray(0, j);
    } else {
      rows = intersectSorted(rows, listRows(index, k, n));
    }
  }
  return rows;
}

/** Intersection of two ascending row lists, galloping through the longer `b`: O(|a| log |b|). */
export function intersectSorted(a: Uint32Array, b: Uint32Array): Uint32Array {
  const out = new Uint32Array(a.length);
  let k = 0;
  let lo = 0;
  for (let i = 0; i < a.length && lo < b.length; i++) {
    const x = a[i];
    // gallop: find the first index >= lo with b[index] >= x
    let step = 1;
    let hi = lo;
    while (hi < b.length && b[hi] < x) {
      lo = hi + 1;
      hi += step;
      step <<= 1;
    }
    if (hi > b.length) hi = b.length;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if (b[mid] < x) lo = mid + 1;
      else hi = mid;
    }
    if (lo < b.length && b[lo] === x) out[k++] = x;
  }
  return out.subarray(0, k);
}

/** Writes to `out` at `k` the candidates [from, to) (ascending) whose value satisfies op; returns the new `k`. */
function verifyRows(source: TextSource, candidates: Uint32Array, from: number, to: number, op: PositiveTextOp, needleText: string, out: Uint32Array, k: number): number {
  if ("decimals" in source) {
    const values = source.decimals;
    for (let i = from; i < to; i++) {
      const row = candidates[i];
      if (textPasses(op, String(values[row]), needleText)) out[k++] = row;
    }
    return k;
  }
  const needle = encoder.encode(needleText);
  const bytes = source.folded;
  const offsets = source.foldedOffsets;
  for (let i = from; i < to; i++) {
    const row = candidates[i];
    if (bytesMatch(bytes, offsets[row], offsets[row + 1], op, needle)) out[k++] = row;
  }
  return k;
}
