/**
 * Facets (docs/api.md "Facets"): per column, the distinct values with their row counts (enum,
 * boolean, text) or the value range (number, date, datetime), over the rows that match every
 * filter except the column's own. Counts come from what the store already holds, by the
 * column's kind and role: the partition's counts and per-code bitmaps for the partition column,
 * per-value bitmaps (dense values) and rows-by-value runs (the others) for enum and boolean
 * columns, value runs walked from either end for ranges (the key's first and last member rows),
 * and the rank of each matching row for text columns (the one facet that visits its matches).
 */
import { type Bitmap, countAnd, emptyBitmap, hasRow } from "../bits/bitmap.ts";
import { bytesMatch } from "../bits/folded-match.ts";
import { fold } from "../collation/collation.ts";
import type { StoredColumn } from "../kinds/kind.ts";
import { KINDS } from "../kinds/registry.ts";
import { withinScope, withoutColumn } from "../query/columns.ts";
import type { FacetQuery } from "../query/facets.ts";
import type { ColumnKind } from "../schema/kinds.ts";
import { recordAt } from "../store/rows-json.ts";
import { type Store, partitionCounts, storedColumn } from "../store/types.ts";
import { type Engine, filterCacheKey, planContextOf, runFilter } from "./execute.ts";
import { COST, planFilter } from "./planner.ts";
import type { FilterStep } from "./plan.ts";
import type { Predicate } from "../query/types.ts";
import { type Work, finish } from "../bits/work.ts";
import { type FilterResult, codeBitmaps, matchCountByCode, matchRows } from "./row-set.ts";
import type { DeltaVersion } from "../live/delta.ts";
import { computeLiveFacets } from "./live-facets.ts";
import { baseHas } from "./live-rows.ts";

/** One listed value and its matching rows. */
export interface ValueCount {
  /** The value as the records hold it: a string (enum, text) or a boolean. */
  value: string | boolean;
  /** Matching rows holding it, in rows (> 0). */
  count: number;
}

/** One column's facet (docs/api.md "Facets"). */
export type Facet =
  | {
      kind: "enum" | "boolean" | "text";
      /** At most `limit` values, count descending then value order. */
      values: ValueCount[];
      /** Distinct values with a matching row (after `search`), however many are listed. */
      distinct: number;
      /** Matching rows whose value is null. */
      nulls: number;
    }
  | {
      kind: "number" | "date" | "datetime";
      /** The smallest and largest non-null matching value as the records hold it (null when none). */
      min: number | string | null;
      max: number | string | null;
      nulls: number;
    };

/** The answer: each requested column's facet, and the rows matching every filter. */
export interface FacetsAnswer {
  facets: Record<string, Facet>;
  /** Rows matching the whole filter (the column filters and the search), in rows. */
  total: number;
}

/**
 * The rows a facet counts over: every row, or a bitmap (exact), with the row list when it is
 * at hand (a small match set), and the count.
 */
export interface Members {
  all: boolean;
  count: number;
  bits: Bitmap | null;
  rows: Uint32Array | null;
}

/**
 * A facets request planned (planner.ts): each distinct filter it reads — the whole filter, each
 * column's without its own, the scope, all within the scope — planned once (a cached result or
 * the steps that evaluate it), and the cost of the whole request: what the scheduler admits it
 * by and {@link facetsWork} runs.
 */
export interface FacetsPlan {
  query: FacetQuery;
  /** The predicates the request reads, by filter cache key ("" for none), each with its planned step. */
  filters: Map<string, { predicate: Predicate | null; step: FilterStep }>;
  /** The filters' evaluation and the counting, in cost units (planner.ts `COST`). */
  estimatedCost: number;
}

/** The predicates a facets request reads: the whole filter, the scope, each column's filter (all within the scope). */
function facetPredicates(query: FacetQuery): { whole: Predicate | null; scope: Predicate | null; columns: (Predicate | null)[] } {
  const scope = query.scope ?? null;
  return { whole: withinScope(query.scope, query.filter), scope, columns: query.columns.map((column) => withinScope(query.scope, withoutColumn(query.filter, column))) };
}

/**
 * Plans a facets request: each distinct filter once, and per column the counting its facet
 * shape costs (src/kinds: `facet`) — a range reads the value order from either end; values are
 * counted over the column's matching rows (a word of bitmap or a row each).
 */
export function planFacets(engine: Engine, query: FacetQuery): FacetsPlan {
  const context = planContextOf(engine);
  const store = engine.store;
  const { whole, scope, columns } = facetPredicates(query);
  const filters: FacetsPlan["filters"] = new Map();
  let cost = 0;
  for (const predicate of [whole, scope, ...columns]) {
    const key = filterCacheKey(predicate);
    if (filters.has(key)) continue;
    const step = planFilter(context, predicate);
    filters.set(key, { predicate, step });
    cost += step.estimatedCost;
  }
  const words = (store.rowCount + 31) >>> 5;
  for (const [i, column] of query.columns.entries()) {
    const shape = KINDS[storedColumn(store, column).spec.kind].facet;
    const rows = (filters.get(filterCacheKey(columns[i])) as { step: FilterStep }).step.estimatedRows;
    cost += shape === "range" ? COST.SEARCH : Math.min(rows * COST.COLUMN_WORK, words * COST.BITMAP_WORD + rows * COST.WALK_ROW);
  }
  return { query, filters, estimatedCost: cost };
}

/**
 * Answers a facets request (facets.ts module comment). Each column's filter (all filters but
 * its own, within the request's scope) is evaluated once through the engine's filter cache, so
 * columns without a filter of their own share one.
 */
export function computeFacets(engine: Engine, query: FacetQuery): FacetsAnswer {
  return finish(facetsWork(engine, planFacets(engine, query)));
}

/**
 * Runs a facets plan ({@link planFacets}) as work that pauses between pieces (bits/work.ts): each
 * filter's evaluation in pieces, then one column's facet at a time.
 */
export function* facetsWork(engine: Engine, plan: FacetsPlan): Work<FacetsAnswer> {
  const results = new Map<string, FilterResult>();
  for (const [key, { step }] of plan.filters) {
    results.set(key, yield* runFilter(engine, step, key, false));
    yield;
  }
  const resultOf = (predicate: Predicate | null): FilterResult => results.get(filterCacheKey(predicate)) as FilterResult;
  if (engine.live !== null && (engine.live.rows > 0 || engine.live.deaths > 0)) return yield* computeLiveFacets(engine as Engine & { live: DeltaVersion }, plan.query, resultOf);
  const query = plan.query;
  const store = engine.store;
  const { whole, scope: scopePredicate, columns } = facetPredicates(query);
  const total = membersOf(store, resultOf(whole)).count;
  const needle = query.search === null || query.search === "" ? null : fold(query.search);
  // a listed text value is shown as a row of the scope writes it (the rows outside it are not the client's)
  const scope = scopePredicate === null ? null : resultOf(scopePredicate);
  const inScope = scope === null ? null : (row: number) => baseHas(store, scope, row);
  const facets: Record<string, Facet> = {};
  for (const [i, column] of query.columns.entries()) {
    facets[column] = facetOf(store, column, resultOf(columns[i]), query.limit, needle, inScope);
    yield;
  }
  return { facets, total };
}

/** One column's facet over the rows of `result`, by the column's kind and role; `inScope`: the rows a text value may be shown from (null: any). */
function facetOf(store: Store, id: string, result: FilterResult, limit: number, needle: string | null, inScope: ((row: number) => boolean) | null): Facet {
  const column = storedColumn(store, id);
  if (store.partition !== null && store.partition.column === id) return partitionFacet(store, column, result, limit, needle);
  const members = membersOf(store, result);
  // the kind's facet shape (src/kinds: `facet`) and the column's role say how it is counted
  const shape = KINDS[column.spec.kind].facet;
  if (shape === "values") return column.key ? keyTextFacet(store, column, members, limit, needle) : textFacet(store, textView(column), members, limit, needle, (row) => recordAt(store, row)[id] as string, inScope);
  if (shape === "codes") return codedFacet(store, column, members, limit, needle);
  if (shape === "range") return column.key ? keyFacet(store, column, members) : rangeFacet(store, column, members);
  throw new Error(`internal: no facet for column "${id}" of kind ${column.spec.kind}`);
}

/** The members of a filter result: a mask's shared bitmap, a match set's exact bitmap or rows. */
export function membersOf(store: Store, result: FilterResult): Members {
  if (result.kind === "all") return { all: true, count: store.rowCount, bits: null, rows: null };
  if (result.kind === "codes") {
    let count = 0;
    let bits: Bitmap | null = null;
    const maps = codeBitmaps(store);
    const counts = partitionCounts(store);
    for (let c = 0; c < counts.length; c++) {
      if (((result.mask >>> c) & 1) === 0) continue;
      count += counts[c];
      if (bits === null) bits = maps[c];
      else {
        const merged: Bitmap = bits.slice();
        for (let w = 0; w < merged.length; w++) merged[w] |= maps[c][w];
        bits = merged;
      }
    }
    return count === 0 ? { all: false, count: 0, bits: null, rows: new Uint32Array(0) } : { all: false, count, bits, rows: null };
  }
  const set = result.set;
  if (set.bits !== null && set.bitsExact) return { all: false, count: set.count, bits: set.bits, rows: set.rows };
  return { all: false, count: set.count, bits: null, rows: matchRows(store, set) };
}

/** The members as an exact bitmap (built from the rows when only they are at hand). */
function bitsOf(store: Store, members: Members): Bitmap {
  if (members.bits !== null) return members.bits;
  const bits = emptyBitmap(store.rowCount);
  const rows = members.rows as Uint32Array;
  for (let i = 0; i < rows.length; i++) bits[rows[i] >>> 5] |= 1 << (rows[i] & 31);
  members.bits = bits;
  return bits;
}

/** True when counting by visiting the member rows costs less than testing `runRows` rows or bitmap words. */
function visitRows(members: Members, otherWork: number): boolean {
  return members.rows !== null && members.rows.length < otherWork;
}

// ---------------------------------------------------------------- coded: the partition, enum, boolean

/** The partition column's facet: its codes' counts, or a match set's counts per code. */
function partitionFacet(store: Store, column: StoredColumn, result: FilterResult, limit: number, needle: string | null): Facet {
  return codedListing(column, partitionCountsOf(store, result), limit, needle, null);
}

/** A filter result's rows per partition code (length S). */
export function partitionCountsOf(store: Store, result: FilterResult): Float64Array {
  const all = partitionCounts(store);
  if (result.kind === "all") return Float64Array.from(all);
  if (result.kind === "codes") return Float64Array.from(all, (count, c) => ((result.mask >>> c) & 1 ? count : 0));
  return Float64Array.from(matchCountByCode(store, result.set));
}

/**
 * The listing of an enum or boolean facet from its counts per rank (index 0: null), and, over a
 * live replica's changes, the counts of values the base does not hold (by stored code).
 */
export function codedListing(column: StoredColumn, counts: Float64Array, limit: number, needle: string | null, extra: Map<number, number> | null): Facet {
  const valueJson = KINDS[column.spec.kind].valueJson as NonNullable<(typeof KINDS)["enum"]["valueJson"]>;
  const distinct = column.distinct as Float64Array;
  const entries: { rank: number; count: number; value: string | boolean }[] = [];
  const offer = (order: number, count: number, code: number) => {
    const value = JSON.parse(valueJson(column.spec, code)) as string | boolean;
    if (needle !== null && !fold(String(value)).includes(needle)) return;
    entries.push({ rank: order, count, value });
  };
  for (let r = 1; r < counts.length; r++) if (counts[r] > 0) offer(2 * r, counts[r], distinct[r - 1]);
  // codes only the changes hold: between the base's ranks, in code order
  for (const [code, count] of extra ?? []) {
    let r = 0;
    while (r < distinct.length && distinct[r] < code) r++;
    if (count > 0) offer(2 * r + 1 + code / 256, count, code);
  }
  return listed(column.spec.kind as "enum" | "boolean", entries, limit, counts[0]);
}

/** Per enum or boolean column: a bitmap of each value held by more than 1/32 of the rows (else null). */
const valueBitmapCache = new WeakMap<StoredColumn, (Bitmap | null)[]>();

/** The dense values' bitmaps of a coded column, index = rank (0 = null), built on first use. */
function valueBitmaps(store: Store, column: StoredColumn): (Bitmap | null)[] {
  let maps = valueBitmapCache.get(column);
  if (maps === undefined) {
    const starts = column.rankStarts as Uint32Array;
    const perm = column.rowsByValue as Uint32Array;
    maps = [];
    for (let r = 0; r + 1 < starts.length; r++) {
      const size = starts[r + 1] - starts[r];
      if (size * 32 <= store.rowCount) {
        maps.push(null);
        continue;
      }
      const bits = emptyBitmap(store.rowCount);
      for (let i = starts[r]; i < starts[r + 1]; i++) bits[perm[i] >>> 5] |= 1 << (perm[i] & 31);
      maps.push(bits);
    }
    valueBitmapCache.set(column, maps);
  }
  return maps;
}

/**
 * An enum or boolean facet: per rank, its run length (every row), the popcount of its bitmap
 * AND the members (a dense value), its run's rows tested against the members (a sparse one),
 * or the member rows' ranks counted (a small match set).
 */
function codedFacet(store: Store, column: StoredColumn, members: Members, limit: number, needle: string | null): Facet {
  return codedListing(column, codedCounts(store, column, members), limit, needle, null);
}

/** An enum or boolean column's member rows per rank (index 0: null; length d + 1). */
export function codedCounts(store: Store, column: StoredColumn, members: Members): Float64Array {
  const starts = column.rankStarts as Uint32Array;
  const ranks = starts.length - 1;
  const counts = new Float64Array(ranks);
  if (members.all) {
    for (let r = 0; r < ranks; r++) counts[r] = starts[r + 1] - starts[r];
  } else if (visitRows(members, (store.rowCount + 31) >>> 5)) {
    const rankByRow = column.rankByRow as Uint32Array;
    const rows = members.rows as Uint32Array;
    for (let i = 0; i < rows.length; i++) counts[rankByRow[rows[i]]]++;
  } else if (members.count > 0) {
    const bits = bitsOf(store, members);
    const maps = valueBitmaps(store, column);
    const perm = column.rowsByValue as Uint32Array;
    for (let r = 0; r < ranks; r++) {
      const map = maps[r];
      if (map !== null) counts[r] = countAnd(bits, map);
      else {
        let count = 0;
        for (let i = starts[r]; i < starts[r + 1]; i++) if (hasRow(bits, perm[i])) count++;
        counts[r] = count;
      }
    }
  }
  return counts;
}

/** The facet of listed values: count descending, then value order (rank), at most `limit`. */
export function listed(kind: "enum" | "boolean" | "text", entries: { rank: number; count: number; value: string | boolean }[], limit: number, nulls: number): Facet {
  entries.sort((a, b) => b.count - a.count || a.rank - b.rank);
  return { kind, values: entries.slice(0, limit).map((e) => ({ value: e.value, count: e.count })), distinct: entries.length, nulls };
}

// ---------------------------------------------------------------- text

/**
 * A text column as facets read it: values grouped by collation rank (values that compare equal,
 * case and accents aside, are one value, docs/api.md "Facets"), each rank's rows a run of
 * `rowsByValue` from `starts[rank]`; ranks [firstRank, starts.length - 1); rank 0 is null when
 * `firstRank` is 1. `folded` and `foldedOffsets` give each row's folded bytes.
 */
export interface TextView {
  rankByRow: Uint32Array;
  rowsByValue: Uint32Array;
  starts: Uint32Array;
  firstRank: number;
  folded: Uint8Array;
  foldedOffsets: Uint32Array;
}

/** A `text` column (not the key) as a {@link TextView} (rank 0 = null). */
export function textView(column: StoredColumn): TextView {
  return {
    rankByRow: column.rankByRow as Uint32Array,
    rowsByValue: column.rowsByValue as Uint32Array,
    starts: column.rankStarts as Uint32Array,
    firstRank: 1,
    folded: column.folded as Uint8Array,
    foldedOffsets: column.foldedOffsets as Uint32Array,
  };
}

const encoder = new TextEncoder();

/**
 * A text facet: each matching row's rank counted (every rank's run length when every row
 * matches), the ranks whose value (as its first row holds it, folded) contains the search kept,
 * then the `limit` largest counts.
 * @param valueAt the raw value of a row (for the listed values only)
 */
function textFacet(store: Store, view: TextView, members: Members, limit: number, needle: string | null, valueAt: (row: number) => string, inScope: ((row: number) => boolean) | null = null): Facet {
  const { starts, rowsByValue, firstRank } = view;
  const ranks = starts.length - 1;
  const { dense, sparse, nulls } = textCounts(store, view, members);
  const needleBytes = needle === null ? null : encoder.encode(needle);
  // the row a rank is shown as: its first by key (of the scope's, when there is one: a rank with members has one)
  const shownRow = (rank: number): number => {
    if (inScope === null) return rowsByValue[starts[rank]];
    for (let i = starts[rank]; i < starts[rank + 1]; i++) if (inScope(rowsByValue[i])) return rowsByValue[i];
    return rowsByValue[starts[rank]];
  };
  const passes = (rank: number) => {
    if (needleBytes === null) return true;
    const row = shownRow(rank);
    return bytesMatch(view.folded, view.foldedOffsets[row], view.foldedOffsets[row + 1], "contains", needleBytes);
  };
  const top = new TopCounts(limit);
  if (sparse !== null) {
    for (const [rank, count] of sparse) if (rank >= firstRank && passes(rank)) top.offer(rank, count);
  } else {
    for (let rank = firstRank; rank < ranks; rank++) {
      const count = dense === null ? starts[rank + 1] - starts[rank] : dense[rank];
      if (count > 0 && passes(rank)) top.offer(rank, count);
    }
  }
  const values = top.sorted().map(({ rank, count }) => ({ value: valueAt(shownRow(rank)), count }));
  return { kind: "text", values, distinct: top.seen, nulls };
}

/**
 * A text column's member rows per rank: every rank's run length when every row is a member
 * (both null), else a dense array (many ranks touched) or a map; and the null members.
 */
export function textCounts(store: Store, view: TextView, members: Members): { dense: Uint32Array | null; sparse: Map<number, number> | null; nulls: number } {
  const { starts, rankByRow, firstRank } = view;
  const ranks = starts.length - 1;
  let nulls = 0;
  // rank → count, as a dense array when many ranks may be touched, else a map
  let dense: Uint32Array | null = null;
  let sparse: Map<number, number> | null = null;
  if (members.all) {
    if (firstRank === 1) nulls = starts[1] - starts[0];
  } else if (members.count * 8 >= ranks) {
    dense = new Uint32Array(ranks);
    forEachMember(store, members, (row) => dense![rankByRow[row]]++);
    if (firstRank === 1) nulls = dense[0];
  } else {
    sparse = new Map();
    const counts = sparse;
    forEachMember(store, members, (row) => {
      const rank = rankByRow[row];
      counts.set(rank, (counts.get(rank) ?? 0) + 1);
    });
    if (firstRank === 1) nulls = sparse.get(0) ?? 0;
  }
  return { dense, sparse, nulls };
}

/** Calls `visit` with every member row (ascending). */
export function forEachMember(store: Store, members: Members, visit: (row: number) => void): void {
  if (members.rows !== null) {
    const rows = members.rows;
    for (let i = 0; i < rows.length; i++) visit(rows[i]);
    return;
  }
  const bits = bitsOf(store, members);
  for (let w = 0; w < bits.length; w++) {
    let word = bits[w];
    while (word !== 0) {
      const low = word & -word;
      visit((w << 5) + (31 - Math.clz32(low)));
      word ^= low;
    }
  }
}

/**
 * The `limit` (rank, count) pairs first in the facet order (count descending, then rank) among
 * those offered, kept in a min-heap of the order's last: O(offered · log limit).
 */
export class TopCounts {
  /** Pairs offered, in pairs. */
  seen = 0;
  private readonly heap: { rank: number; count: number }[] = [];
  constructor(private readonly limit: number) {}

  /** True when a comes after b in the facet order. */
  private static after(a: { rank: number; count: number }, b: { rank: number; count: number }): boolean {
    return a.count < b.count || (a.count === b.count && a.rank > b.rank);
  }

  offer(rank: number, count: number): void {
    this.seen++;
    const heap = this.heap;
    const item = { rank, count };
    if (heap.length < this.limit) {
      heap.push(item);
      let i = heap.length - 1;
      while (i > 0) {
        const parent = (i - 1) >> 1;
        if (!TopCounts.after(heap[i], heap[parent])) break;
        [heap[i], heap[parent]] = [heap[parent], heap[i]];
        i = parent;
      }
      return;
    }
    // the heap's root is the last of the kept pairs: replace it when the new pair comes first
    if (!TopCounts.after(heap[0], item)) return;
    heap[0] = item;
    let i = 0;
    for (;;) {
      const l = 2 * i + 1;
      const r = l + 1;
      let last = i;
      if (l < heap.length && TopCounts.after(heap[l], heap[last])) last = l;
      if (r < heap.length && TopCounts.after(heap[r], heap[last])) last = r;
      if (last === i) break;
      [heap[i], heap[last]] = [heap[last], heap[i]];
      i = last;
    }
  }

  /** The kept pairs in the facet order. */
  sorted(): { rank: number; count: number }[] {
    return [...this.heap].sort((a, b) => b.count - a.count || a.rank - b.rank);
  }
}

/**
 * A text key's facet: every value is its own (a count of 1), so the listed values are the first
 * `limit` matching rows in key order whose folded value holds the search; `distinct` counts every
 * matching row that holds it.
 */
function keyTextFacet(store: Store, column: StoredColumn, members: Members, limit: number, needle: string | null): Facet {
  const folded = column.folded as Uint8Array;
  const offsets = column.foldedOffsets as Uint32Array;
  const needleBytes = needle === null ? null : encoder.encode(needle);
  const rows: number[] = [];
  let distinct = 0;
  const visit = (row: number) => {
    if (needleBytes !== null && !bytesMatch(folded, offsets[row], offsets[row + 1], "contains", needleBytes)) return;
    distinct++;
    if (rows.length < limit) rows.push(row);
  };
  if (members.all) {
    if (needleBytes === null) {
      distinct = store.rowCount;
      for (let row = 0; row < Math.min(limit, store.rowCount); row++) rows.push(row);
    } else for (let row = 0; row < store.rowCount; row++) visit(row);
  } else forEachMember(store, members, visit);
  return { kind: "text", values: rows.map((row) => ({ value: recordAt(store, row)[column.spec.id] as string, count: 1 })), distinct, nulls: 0 };
}

// ---------------------------------------------------------------- ranges: the key, number, date, datetime

/** A number key's facet: the first and last member rows (rows are in key order). */
function keyFacet(store: Store, column: StoredColumn, members: Members): Facet {
  const keys = column.distinct as Float64Array;
  if (members.count === 0) return { kind: "number", min: null, max: null, nulls: 0 };
  if (members.all) return { kind: "number", min: keys[0], max: keys[store.rowCount - 1], nulls: 0 };
  if (members.rows !== null) return { kind: "number", min: keys[members.rows[0]], max: keys[members.rows[members.rows.length - 1]], nulls: 0 };
  const bits = members.bits as Bitmap;
  let first = 0;
  while (bits[first] === 0) first++;
  let last = bits.length - 1;
  while (bits[last] === 0) last--;
  const lo = (first << 5) + (31 - Math.clz32(bits[first] & -bits[first]));
  const hi = (last << 5) + (31 - Math.clz32(bits[last]));
  return { kind: "number", min: keys[lo], max: keys[hi], nulls: 0 };
}

/**
 * The smallest and largest stored value (NaN when none) and the nulls among the member rows
 * that are not `dead` (a live replica's tombstones; null for none), of an ordered column: the
 * key's first and last live member rows, another column's value runs walked from either end.
 */
export function valueExtent(store: Store, column: StoredColumn, members: Members, dead: Bitmap | null): { min: number; max: number; nulls: number } {
  const n = store.rowCount;
  const live = (row: number) => (members.all || hasRow(bitsOf(store, members), row)) && (dead === null || !hasRow(dead, row));
  if (column.key) {
    const keys = column.distinct as Float64Array;
    let lo = 0;
    while (lo < n && !live(lo)) lo++;
    if (lo === n) return { min: Number.NaN, max: Number.NaN, nulls: 0 };
    let hi = n - 1;
    while (!live(hi)) hi--;
    return { min: keys[lo], max: keys[hi], nulls: 0 };
  }
  const starts = column.rankStarts as Uint32Array;
  const perm = column.rowsByValue as Uint32Array;
  const rankByRow = column.rankByRow as Uint32Array;
  const distinct = column.distinct as Float64Array;
  let nulls = 0;
  for (let i = 0; i < starts[1]; i++) if (live(perm[i])) nulls++;
  let lo = starts[1];
  while (lo < n && !live(perm[lo])) lo++;
  if (lo === n) return { min: Number.NaN, max: Number.NaN, nulls };
  let hi = n - 1;
  while (!live(perm[hi])) hi--;
  return { min: distinct[rankByRow[perm[lo]] - 1], max: distinct[rankByRow[perm[hi]] - 1], nulls };
}

/**
 * A number, date or datetime facet: the value runs walked from the smallest value up and from
 * the largest down to the first member row (O(rows / members) expected), nulls counted over the
 * null run.
 */
function rangeFacet(store: Store, column: StoredColumn, members: Members): Facet {
  const kind = column.spec.kind as Extract<ColumnKind, "number" | "date" | "datetime">;
  const starts = column.rankStarts as Uint32Array;
  const perm = column.rowsByValue as Uint32Array;
  const rankByRow = column.rankByRow as Uint32Array;
  const distinct = column.distinct as Float64Array;
  const valueJson = KINDS[kind].valueJson as NonNullable<(typeof KINDS)["number"]["valueJson"]>;
  const n = store.rowCount;
  const valueOf = (row: number) => JSON.parse(valueJson(column.spec, distinct[rankByRow[row] - 1])) as number | string;
  if (members.all) {
    const nonNull = starts[1] < n;
    return { kind, min: nonNull ? valueOf(perm[starts[1]]) : null, max: nonNull ? valueOf(perm[n - 1]) : null, nulls: starts[1] };
  }
  if (members.count === 0) return { kind, min: null, max: null, nulls: 0 };
  const bits = bitsOf(store, members);
  let nulls = 0;
  for (let i = 0; i < starts[1]; i++) if (hasRow(bits, perm[i])) nulls++;
  let lo = starts[1];
  while (lo < n && !hasRow(bits, perm[lo])) lo++;
  if (lo === n) return { kind, min: null, max: null, nulls };
  let hi = n - 1;
  while (!hasRow(bits, perm[hi])) hi--;
  return { kind, min: valueOf(perm[lo]), max: valueOf(perm[hi]), nulls };
}
