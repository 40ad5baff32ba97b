/**
 * The planner: what a query costs and which plan answers its window. One place for the cost
 * model, read both by execution (execute.ts: walk the sort key's permutation or gather-sort
 * the matches) and by admission (scheduler.ts: a query whose plan costs more than
 * {@link DEFER_ABOVE} waits in the deferred queue instead of running at once).
 *
 * Costs are in units of about one nanosecond of this engine's work on this project's machines
 * (2-core VMs): the constants below were read off the in-process benchmark (bench/latency.ts)
 * and are meant to rank plans and to tell a 10 µs query from a 10 ms one, not to predict
 * latency to the microsecond.
 */
import type { Predicate, Query, SortKey, TextOp } from "../query/types.ts";
import { type ColumnId, STATUS_VALUES } from "../schema.ts";
import { findList, needleTrigrams } from "../store/trigrams.ts";
import type { Store, TrigramIndex } from "../store/types.ts";
import { fold } from "../collation/collation.ts";
import { KINDS } from "../kinds/registry.ts";

/** Named cost constants, in units (about 1 ns each; see the module comment). */
export const COST = {
  /** A predicate answered without touching rows (a status mask, a posting list referenced whole). */
  CONSTANT: 50,
  /** A binary search over the ids or the trigram keys. */
  SEARCH: 100,
  /** One 32-bit word of a bitmap allocated, filled, combined or counted. */
  BITMAP_WORD: 2,
  /** One row of a scan over a folded string column (a needle shorter than 3 code points, blank). */
  SCAN_ROW: 6,
  /** One row of a text filter on `id`: the id formatted as a decimal string and compared. */
  ID_TEXT_ROW: 60,
  /** One posting of a sparse trigram list decoded (LEB128). */
  POSTING: 3,
  /** One candidate row's folded bytes checked against a longer needle. */
  VERIFY_ROW: 25,
  /** One row of a permutation walked while testing a match bitmap: a random read. */
  WALK_ROW: 1,
  /** Per match of a one-key gather-sort: a random read of its rank (~30 walked rows' worth), then the native sort. */
  GATHER_ROW: 32,
  /** Per match and comparison of a comparator sort (several sort keys, or an absolute one). */
  COMPARE: 16,
  /** One unit of a column kind's own work (src/kinds: kind.ts `work`, rows or values visited). */
  COLUMN_WORK: 2,
  /**
   * One row checked for a search term, per searchable column (filter.ts `termChecker`): random
   * reads of its folded bytes and codes, measured at ~2 µs a row over 5 columns at 10M rows.
   */
  SEARCH_CHECK_COLUMN: 400,
} as const;

/**
 * Plans that cost more than this run in the deferred queue (scheduler.ts): about 0.25 ms, so
 * that cheap requests never wait behind more than a slice of expensive ones.
 */
export const DEFER_ABOVE = 250_000;

/** Bitmap words over the store's rows. */
function words(store: Store): number {
  return (store.rowCount + 31) >>> 5;
}

/**
 * Estimated cost of evaluating `predicate` from the store's indexes (filter.ts
 * `evaluateFilter`), in cost units: no evaluation is done, only trigram keys are looked up.
 */
export function filterCost(store: Store, predicate: Predicate): number {
  const n = store.rowCount;
  switch (predicate.kind) {
    case "status":
      return COST.CONSTANT;
    case "number":
      // two binary searches and a bitmap of the range
      return 2 * COST.SEARCH + words(store) * COST.BITMAP_WORD;
    case "text":
      return textCost(store, predicate.column, predicate.op, predicate.value);
    case "set": {
      if (predicate.column === "status") return COST.CONSTANT;
      if (predicate.column === "id") return predicate.values.length * COST.SEARCH + words(store) * COST.BITMAP_WORD;
      let cost = 0;
      for (const value of predicate.values) cost += textCost(store, predicate.column, "equals", value) + words(store) * COST.BITMAP_WORD;
      return cost;
    }
    case "column": {
      const column = store.columns[predicate.column];
      const test = predicate.test;
      if (test.op === "text" && column.trigrams !== null && test.type !== "blank" && test.type !== "notBlank" && needleTrigrams(fold(test.value)) !== null) {
        return trigramCost(column.trigrams, test.type, fold(test.value), store) + words(store) * COST.BITMAP_WORD;
      }
      return KINDS[column.spec.kind].work(column, test, n) * COST.COLUMN_WORK + words(store) * COST.BITMAP_WORD;
    }
    case "search": {
      let cost = 0;
      for (const term of predicate.terms) cost += searchTermCost(store, term);
      return cost;
    }
    case "and":
    case "or": {
      let cost = 0;
      for (const child of predicate.children) cost += filterCost(store, child) + words(store) * COST.BITMAP_WORD;
      return cost;
    }
  }
  return n * COST.SCAN_ROW;
}

/** Cost of one text predicate (filter.ts: trigram lists for needles of 3+ code points, else a scan). */
function textCost(store: Store, column: ColumnId, op: TextOp, value: string): number {
  const n = store.rowCount;
  if (column === "status") return COST.CONSTANT;
  const negated = op === "notContains" || op === "notEqual" || op === "notBlank";
  const complement = negated ? words(store) * COST.BITMAP_WORD : 0;
  if (op === "blank" || op === "notBlank") return (column === "id" ? COST.CONSTANT : n * COST.SCAN_ROW) + complement;
  const needle = fold(value);
  if (needleTrigrams(needle) === null) return (needle.length === 0 ? COST.CONSTANT : n * (column === "id" ? COST.ID_TEXT_ROW : COST.SCAN_ROW)) + complement;
  return trigramCost(column === "id" ? store.idTrigrams : store.strings[column].trigrams, op, needle, store);
}

/**
 * Cost of one search term (docs/api.md "Global search"; filter.ts `searchNode`): each text
 * source's text cost (trigram lists, or a scan under 3 code points), each enum column's rows of
 * the values that contain it (a bitmap when any does), and the union.
 */
export function searchTermCost(store: Store, term: string): number {
  const needle = fold(term);
  let cost = textCost(store, "id", "contains", term) + textCost(store, "name", "contains", term) + textCost(store, "email", "contains", term);
  for (const spec of store.schema.columns) {
    const column = store.columns[spec.id];
    if (column === undefined) continue;
    if (spec.kind === "text") {
      cost += column.trigrams !== null && needleTrigrams(needle) !== null ? trigramCost(column.trigrams, "contains", needle, store) : store.rowCount * COST.SCAN_ROW;
    } else if (spec.kind === "enum") {
      const rows = enumRowsContaining(store, spec.id, needle);
      if (rows > 0) cost += rows * COST.WALK_ROW + words(store) * COST.BITMAP_WORD;
    }
  }
  return cost + 2 * words(store) * COST.BITMAP_WORD;
}

/**
 * Rows of enum column `id` whose value, folded, contains `needle` (folded): the sum of those
 * values' runs in the value order (rank starts), no row visited.
 */
function enumRowsContaining(store: Store, id: string, needle: string): number {
  const column = store.columns[id];
  const values = column.spec.values ?? [];
  const distinct = column.distinct as Float64Array;
  const starts = column.rankStarts as Uint32Array;
  let rows = 0;
  // rank r ≥ 1 holds code distinct[r - 1], the value values[code - 1]
  for (let r = 1; r <= distinct.length; r++) if (fold(values[distinct[r - 1] - 1]).includes(needle)) rows += starts[r + 1] - starts[r];
  return rows;
}

/**
 * An upper bound of a search term's matching rows (filter.ts `searchNode` evaluates the terms
 * fewest first): per text source (`id`, `name`, `email`, every `text` column) its smallest
 * trigram list, plus the rows of the enum and status values that contain the term; every row
 * when the term is under 3 code points.
 */
export function searchTermEstimate(store: Store, term: string): number {
  const needle = fold(term);
  const trigrams = needleTrigrams(needle);
  if (trigrams === null) return store.rowCount;
  const sources: TrigramIndex[] = [store.idTrigrams, store.strings.name.trigrams, store.strings.email.trigrams];
  for (const spec of store.schema.columns) {
    const index = store.columns[spec.id]?.trigrams;
    if (spec.kind === "text" && index != null) sources.push(index);
  }
  let estimate = 0;
  for (const index of sources) {
    let smallest = Number.POSITIVE_INFINITY;
    for (const key of trigrams.keys) {
      const k = findList(index, key);
      smallest = Math.min(smallest, k < 0 ? 0 : index.counts[k]);
    }
    estimate += smallest;
  }
  for (const spec of store.schema.columns) if (spec.kind === "enum" && store.columns[spec.id] !== undefined) estimate += enumRowsContaining(store, spec.id, needle);
  for (let code = 0; code < STATUS_VALUES.length; code++) if (fold(STATUS_VALUES[code]).includes(needle)) estimate += store.statusCounts[code];
  return estimate;
}

/** Cost of checking one row for a search term (filter.ts `termChecker`): each searchable column's check. */
export function searchCheckCost(store: Store, term: string): number {
  let columns = 4;
  for (const spec of store.schema.columns) if (store.columns[spec.id] !== undefined && (spec.kind === "text" || spec.kind === "enum")) columns++;
  return columns * COST.SEARCH_CHECK_COLUMN + (couldBeInId(fold(term)) ? COST.ID_TEXT_ROW : 0);
}

/** True when a folded needle could be part of some `String(id)` (ids are finite: digits, sign, point, exponent). */
export function couldBeInId(needle: string): boolean {
  return /^[-+0-9.e]+$/.test(needle);
}

/**
 * Cost of a text predicate answered by a trigram index (`needle` folded, 3+ code points): the
 * key lookups, the smallest list decoded and intersected with the others, its rows verified.
 */
function trigramCost(index: TrigramIndex, op: TextOp, needle: string, store: Store): number {
  const trigrams = needleTrigrams(needle);
  if (trigrams === null) return store.rowCount * COST.SCAN_ROW;
  const negated = op === "notContains" || op === "notEqual";
  const complement = negated ? words(store) * COST.BITMAP_WORD : 0;
  let smallest = Number.POSITIVE_INFINITY;
  let postings = 0;
  for (const key of trigrams.keys) {
    const k = findList(index, key);
    // a trigram no row holds: nothing matches
    if (k < 0) return trigrams.keys.length * COST.SEARCH + complement;
    const count = index.counts[k];
    smallest = Math.min(smallest, count);
    postings += count;
  }
  const lookups = trigrams.keys.length * COST.SEARCH;
  if ((op === "contains" || op === "notContains") && trigrams.codePoints === 3 && trigrams.exact) return lookups + complement;
  // the smallest list decoded, each other list intersected with it, the candidates verified
  return lookups + Math.min(postings, smallest * trigrams.keys.length) * COST.POSTING + smallest * COST.VERIFY_ROW + complement;
}

/**
 * Cost of a walk of the sort key's permutation to the end of the window, testing a match
 * bitmap: the rows walked at this selectivity.
 * @param windowEnd offset + limit of the window, in matching rows
 * @param scopeRows rows of the partitions walked (the match set's status codes), in rows
 * @param matches rows matching the filter
 */
export function walkCost(windowEnd: number, scopeRows: number, matches: number): number {
  return matches === 0 ? 0 : ((windowEnd * scopeRows) / matches) * COST.WALK_ROW;
}

/**
 * Cost of a gather-sort of every match (order.ts `orderAll`): a native sort of packed
 * (rank, row) words for one plain key, a comparator sort otherwise.
 * @param matches rows to sort
 * @param keys the normalized sort keys
 */
export function gatherCost(matches: number, keys: readonly SortKey[]): number {
  const log = Math.log2(matches + 2);
  if (keys.length === 1 && !keys[0].absolute) return matches * (COST.GATHER_ROW + log);
  return COST.COMPARE * matches * log;
}

/** Rows of the partitions (status codes) in `mask`. */
export function rowsInMask(store: Store, mask: number): number {
  let rows = 0;
  for (let c = 0; c < STATUS_VALUES.length; c++) if ((mask >>> c) & 1) rows += store.statusCounts[c];
  return rows;
}

/**
 * The window plan of a filtered, sorted query whose match set is known: `walk` the first key's
 * permutation testing the match bitmap (resumable from a checkpoint), or `gather` and sort
 * every match (then cached) — whichever costs less.
 * @param windowEnd offset + limit, in matching rows
 * @param scopeRows rows of the partitions the walk covers
 * @param matches rows matching the filter
 * @param keys the normalized sort keys
 */
export function windowPlan(windowEnd: number, scopeRows: number, matches: number, keys: readonly SortKey[]): { plan: "walk" | "gather"; cost: number } {
  const walk = walkCost(windowEnd, scopeRows, matches);
  const gather = gatherCost(matches, keys);
  return walk > gather ? { plan: "gather", cost: gather } : { plan: "walk", cost: walk };
}

/**
 * What answering `query` is estimated to cost, given what is cached: the filter's evaluation
 * unless its result is cached, plus the window's plan when the match set is known (cached) and
 * its order is not. Unfiltered and status-filtered windows are slices of prebuilt permutations:
 * O(limit), counted as constant.
 * @param keys the normalized sort keys (order.ts `normalizeSort`)
 * @param filterCached true when the filter's result is cached
 * @param matches the cached result's row count and status mask when it is a match set, else null
 * @param orderCached true when the match set's order for these keys is cached
 */
export function queryCost(
  store: Store,
  query: Query,
  keys: readonly SortKey[],
  filterCached: boolean,
  matches: { count: number; mask: number } | null,
  orderCached: boolean,
): number {
  if (query.filter === null) return COST.CONSTANT;
  if (!filterCached) return filterCost(store, query.filter);
  if (matches === null || orderCached) return COST.CONSTANT;
  if (keys.length === 1 && keys[0].column === "id" && !keys[0].absolute) return COST.CONSTANT;
  return windowPlan(query.offset + query.limit, rowsInMask(store, matches.mask), matches.count, keys).cost;
}
