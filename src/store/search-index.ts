/**
 * Builds the search index (types.ts `SearchIndex`; docs/api.md "Global search"): the n-gram
 * posting lists (n = 1, 2, 3) of every row's values in the columns it covers
 * (types.ts `searchIndexColumns`), grouped by the rows' partition codes.
 */
import { unionGramIndexes } from "../bits/gram-union.ts";
import { type GramSource, buildGramIndex, decimalStrings } from "../bits/trigrams.ts";
import type { PartitionCodes, StoredColumn } from "../kinds/kind.ts";
import type { SearchIndex, TrigramIndex } from "./types.ts";

/**
 * A covered column's per-row output strings as the search compares them: a text column's folded
 * bytes, a number key's decimal forms (`String(n)`, as written by bits/trigrams.ts `decimalStrings`).
 * @throws Error for a column that is neither (types.ts `searchIndexColumns` lists only these)
 */
export function searchSource(column: StoredColumn): GramSource {
  if (column.folded !== null && column.foldedOffsets !== null) return { bytes: column.folded, offsets: column.foldedOffsets };
  if (column.key && column.distinct !== null) return decimalStrings(column.distinct);
  throw new Error(`internal: column "${column.spec.id}" has no per-row strings to index`);
}

/**
 * A covered column's own 1- and 2-gram lists (its 3-gram lists are its trigram index), grouped
 * by the rows' partition codes: what its build adds for the search index (store/column-worker.ts
 * builds them beside the column, on the worker's core).
 * @param partition the rows' partition codes, or null
 * @throws RangeError as bits/trigrams.ts `buildGramIndex`
 */
export function ownGramLists(column: StoredColumn, rowCount: number, partition: PartitionCodes | null): readonly [TrigramIndex, TrigramIndex] {
  const groups = partition === null ? null : { codes: partition.codes, count: partition.counts.length };
  const one = [searchSource(column)];
  return [buildGramIndex(one, rowCount, 1, groups), buildGramIndex(one, rowCount, 2, groups)];
}

/**
 * The search index of `rowCount` rows over `columns` (their values in row order): each column's
 * own 1- and 2-gram lists ({@link ownGramLists}; those in `ready` as given), and the 1-, 2- and
 * 3-gram lists across the columns, each n-gram listing every row holding it in any of the columns
 * once: the union of the columns' own lists (bits/gram-union.ts), equal to decoding every column's
 * values again (bits/trigrams.ts `buildGramIndex` of the sources together) at a fraction of the
 * time (at 1M rows of three columns, 1.2 s instead of 4.9 s).
 * @param partition the rows' partition codes (lists are grouped by them), or null
 * @param ready columns' own lists already built, by column id
 * @throws RangeError as bits/trigrams.ts `buildGramIndex` (postings beyond 2^32, gaps beyond 4 GiB)
 */
export function buildSearchIndex(
  columns: readonly StoredColumn[],
  rowCount: number,
  partition: PartitionCodes | null,
  ready: ReadonlyMap<string, readonly [TrigramIndex, TrigramIndex]> = new Map(),
): SearchIndex {
  const groups = partition === null ? null : { codes: partition.codes, count: partition.counts.length };
  const own = new Map<string, readonly [TrigramIndex, TrigramIndex]>();
  const ones: TrigramIndex[] = [];
  const twos: TrigramIndex[] = [];
  const threes: TrigramIndex[] = [];
  for (const column of columns) {
    const lists = ready.get(column.spec.id) ?? ownGramLists(column, rowCount, partition);
    own.set(column.spec.id, lists);
    ones.push(lists[0]);
    twos.push(lists[1]);
    // a column's trigram index is its 3-gram lists over the same strings and groups (kinds/text.ts, kinds/number.ts)
    threes.push(column.trigrams ?? buildGramIndex([searchSource(column)], rowCount, 3, groups));
  }
  if (columns.length === 0) return { grams: [buildGramIndex([], rowCount, 1, groups), buildGramIndex([], rowCount, 2, groups), buildGramIndex([], rowCount, 3, groups)], columns: own };
  return { grams: [unionGramIndexes(ones, rowCount, groups), unionGramIndexes(twos, rowCount, groups), unionGramIndexes(threes, rowCount, groups)], columns: own };
}
