/**
 * The n-gram index of several sources as the union of their own indexes: an n-gram's list over
 * the columns together holds a row when any column's list holds it. Equal, array for array, to
 * trigrams.ts `buildGramIndex` over the sources together, without decoding the sources' bytes
 * again: the search index's lists across columns are built from the columns' own lists
 * (store/search-index.ts), at the cost of reading those lists rather than every value twice.
 */
import { countRows } from "./bitmap.ts";
import type { TrigramIndex } from "./trigram-index.ts";
import { decodeRowsInto, groupsOf, isDense } from "./trigrams.ts";

/** Rows of each word's set bits, counted per group: adds to `counts[codes[row]]` for every set bit of `bits`. */
function countGroups(bits: Uint32Array, codes: Uint8Array, counts: Uint32Array, at: number): void {
  for (let w = 0; w < bits.length; w++) {
    let word = bits[w];
    while (word !== 0) {
      const low = word & -word;
      const row = (w << 5) + (31 - Math.clz32(low));
      counts[at + codes[row]]++;
      word ^= low;
    }
  }
}

/**
 * Decodes group `c` of sparse list `k` of `index` (S groups) into `out` from 0 (trigrams.ts
 * `decodeRowsInto`). Returns the rows decoded.
 */
function decodeInto(index: TrigramIndex, k: number, c: number, groups: number, out: Uint32Array): number {
  const count = index.groupCounts[k * groups + c];
  decodeRowsInto(index.gaps, index.refs[k * groups + c], count, out, 0);
  return count;
}

/**
 * Merges the ascending runs `a[aFrom..aTo)` and `b[bFrom..bTo)` into `out` from `at`, each row
 * once. Returns the end.
 */
function mergeUnique(a: Uint32Array, aFrom: number, aTo: number, b: Uint32Array, bFrom: number, bTo: number, out: Uint32Array, at: number): number {
  let i = aFrom;
  let j = bFrom;
  while (i < aTo && j < bTo) {
    const x = a[i];
    const y = b[j];
    if (x < y) {
      out[at++] = x;
      i++;
    } else if (y < x) {
      out[at++] = y;
      j++;
    } else {
      out[at++] = x;
      i++;
      j++;
    }
  }
  while (i < aTo) out[at++] = a[i++];
  while (j < bTo) out[at++] = b[j++];
  return at;
}

/**
 * The union of `parts`, n-gram indexes (same n) of `rowCount` rows each over one source, grouped
 * by the same `groups`: the index trigrams.ts `buildGramIndex` makes of those sources together
 * (same keys, counts, group counts, dense and sparse lists, layout), for sources whose indexes
 * are already built. Reads every part's lists once: O(postings + dense lists · rowCount / 32).
 * @param groups each row's group (partition code; length rowCount) and the number of groups S,
 *   or null for one group: those the parts were built with
 * @returns a new index; `parts[0]` itself when it is the only part
 * @throws RangeError when the union's gaps exceed 4 GiB (as `buildGramIndex`)
 */
export function unionGramIndexes(parts: readonly TrigramIndex[], rowCount: number, groups: { codes: Uint8Array; count: number } | null = null): TrigramIndex {
  if (parts.length === 1) return parts[0];
  const S = groups?.count ?? 1;
  for (const part of parts) if (part.keys.length > 0 && groupsOf(part) !== S) throw new RangeError("the parts of a union are grouped alike");
  const words = (rowCount + 31) >>> 5;

  // The union's keys, ascending.
  let all = 0;
  for (const part of parts) all += part.keys.length;
  const sorted = new Float64Array(all);
  let o = 0;
  for (const part of parts) {
    sorted.set(part.keys, o);
    o += part.keys.length;
  }
  sorted.sort();
  let K = 0;
  for (let i = 0; i < sorted.length; i++) if (i === 0 || sorted[i] !== sorted[i - 1]) sorted[K++] = sorted[i];
  const keys = sorted.slice(0, K);

  const counts = new Uint32Array(K);
  const groupCounts = new Uint32Array(K * S);
  const refs = new Uint32Array(K * S);
  let gapCapacity = 0;
  for (const part of parts) gapCapacity += part.gaps.length;
  const gaps = new Uint8Array(gapCapacity);
  let gapAt = 0;
  const dense: Uint32Array[] = [];
  // Per part: the index of its next list (the parts' keys are ascending too), and of this key's.
  const next = new Uint32Array(parts.length);
  const at = new Int32Array(parts.length);
  // Scratch: one part's rows of a group; the union of a group so far (two buffers, swapped);
  // the union's rows, group after group.
  let one = new Uint32Array(1024);
  let current = new Uint32Array(1024);
  let spare = new Uint32Array(1024);
  let union = new Uint32Array(1024);
  const starts = new Uint32Array(S + 1);
  let bits = new Uint32Array(words);

  for (let k = 0; k < K; k++) {
    const key = keys[k];
    let anyDense = false;
    let most = 0;
    for (let p = 0; p < parts.length; p++) {
      const part = parts[p];
      const i = next[p];
      if (i < part.keys.length && part.keys[i] === key) {
        at[p] = i;
        next[p] = i + 1;
        if (isDense(part.counts[i], rowCount)) anyDense = true;
        most += part.counts[i];
      } else at[p] = -1;
    }
    if (one.length < most) {
      one = new Uint32Array(most);
      current = new Uint32Array(most);
      spare = new Uint32Array(most);
      union = new Uint32Array(most);
    }
    if (!anyDense) {
      // Every part's list is sparse: merge them group by group.
      let total = 0;
      for (let c = 0; c < S; c++) {
        starts[c] = total;
        let m = 0;
        for (let p = 0; p < parts.length; p++) {
          if (at[p] < 0) continue;
          const n = decodeInto(parts[p], at[p], c, S, one);
          if (n === 0) continue;
          m = mergeUnique(current, 0, m, one, 0, n, spare, 0);
          const swap = current;
          current = spare;
          spare = swap;
        }
        union.set(current.subarray(0, m), total);
        groupCounts[k * S + c] = m;
        total += m;
      }
      starts[S] = total;
      counts[k] = total;
      if (!isDense(total, rowCount)) {
        for (let c = 0; c < S; c++) {
          refs[k * S + c] = gapAt;
          let prev = -1;
          for (let r = starts[c]; r < starts[c + 1]; r++) {
            const row = union[r];
            let gap = prev < 0 ? row : row - prev;
            prev = row;
            while (gap >= 0x80) {
              gaps[gapAt++] = (gap & 0x7f) | 0x80;
              gap >>>= 7;
            }
            gaps[gapAt++] = gap;
          }
        }
        continue;
      }
      // Sparse lists whose union is dense: the group counts are known.
      for (let r = 0; r < total; r++) {
        const row = union[r];
        bits[row >>> 5] |= 1 << (row & 31);
      }
    } else {
      for (let p = 0; p < parts.length; p++) {
        if (at[p] < 0) continue;
        const part = parts[p];
        const i = at[p];
        if (isDense(part.counts[i], rowCount)) {
          const from = part.refs[i * S];
          const source = part.bitmaps.subarray(from, from + words);
          for (let w = 0; w < words; w++) bits[w] |= source[w];
          continue;
        }
        for (let c = 0; c < S; c++) {
          const n = decodeInto(part, i, c, S, one);
          for (let r = 0; r < n; r++) {
            const row = one[r];
            bits[row >>> 5] |= 1 << (row & 31);
          }
        }
      }
      const total = countRows(bits);
      counts[k] = total;
      if (S === 1) groupCounts[k] = total;
      else countGroups(bits, (groups as { codes: Uint8Array }).codes, groupCounts, k * S);
    }
    const slot = dense.length * words;
    for (let c = 0; c < S; c++) refs[k * S + c] = slot;
    dense.push(bits);
    bits = new Uint32Array(words);
  }
  if (gapAt > 0xffffffff) throw new RangeError("n-gram gaps exceed 4 GiB");
  const bitmaps = new Uint32Array(dense.length * words);
  for (let d = 0; d < dense.length; d++) bitmaps.set(dense[d], d * words);
  return { keys, counts, groupCounts, refs, bitmaps, gaps: gaps.slice(0, gapAt) };
}
