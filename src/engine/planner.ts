/**
 * The planner: from a normalized query to the plan (plan.ts), priced once. One place decides
 * how each predicate is answered — which stored index a column test reads, in which order a
 * search's terms run, whether a filtered window walks the sort key's order or sorts the matches —
 * and what it costs; the executor (execute.ts) runs what it decided, the scheduler admits by the
 * root's cost ({@link DEFER_ABOVE}), and explain prints it.
 *
 * What a column can do comes from its kind and its stored parts, never from its name: a test on
 * the partition column is a mask of its codes; a substring of 3+ code points on a column with
 * trigram lists reads them; an ordered kind decides a test once per distinct value; the rest is
 * a scan.
 *
 * Costs are in units of about one nanosecond of this engine's work on this project's machines
 * (2-core VMs): the constants below were read off the in-process benchmark (bench/latency.ts)
 * and are meant to rank plans and to tell a 10 µs query from a 10 ms one, not to predict
 * latency to the microsecond.
 */
import { fold } from "../collation/collation.ts";
import type { PositiveTextOp } from "../bits/folded-match.ts";
import { findList, isDense, needleTrigrams } from "../bits/trigrams.ts";
import type { StoredColumn } from "../kinds/kind.ts";
import { KINDS } from "../kinds/registry.ts";
import type { ColumnTest, Predicate, Query, SortKey, TextOp } from "../query/types.ts";
import { type Store, allCodes, partitionCounts, searchedColumns, storedColumn } from "../store/types.ts";
import { isKeyOrder, normalizeSort, orderIndexName } from "./order.ts";
import type { FilterStep, TermStep, TextSource, WindowOp, WindowStep } from "./plan.ts";
import { type FilterResult, rowsInMask } from "./row-set.ts";

/** Named cost constants, in units (about 1 ns each; see the module comment). */
export const COST = {
  /** A step answered without touching rows (a partition mask, a posting list referenced whole, a cached result). */
  CONSTANT: 50,
  /** A binary search over a column's values or the trigram keys. */
  SEARCH: 100,
  /** One 32-bit word of a bitmap allocated, filled, combined or counted. */
  BITMAP_WORD: 2,
  /** One posting of a sparse trigram list decoded (LEB128). */
  POSTING: 3,
  /** One candidate row's folded bytes checked against a longer needle. */
  VERIFY_ROW: 25,
  /** One row of a stored order walked while testing a match bitmap: a random read. */
  WALK_ROW: 1,
  /** One row of a window copied out of a stored order. */
  WINDOW_ROW: 2,
  /** Per match of a one-key gather-sort: a random read of its rank (~30 walked rows' worth), then the native sort. */
  GATHER_ROW: 32,
  /** Per match and comparison of a comparator sort (several sort keys, or an absolute one). */
  COMPARE: 16,
  /** One unit of a column kind's own work (src/kinds: kind.ts `work`, rows or values visited). */
  COLUMN_WORK: 2,
  /**
   * One row checked for a search term, per searchable column (`check` terms): random reads of
   * its folded bytes and codes, measured at ~2 µs a row over 5 columns at 10M rows.
   */
  SEARCH_CHECK_COLUMN: 400,
} as const;

/**
 * Plans that cost more than this run in the deferred queue (scheduler.ts): about 0.25 ms, so
 * that cheap requests never wait behind more than a slice of expensive ones.
 */
export const DEFER_ABOVE = 250_000;

/**
 * When a walk, priced with the real match count once the filter ran, costs more than this many
 * times the sort of the matches, the window sorts instead: the one choice the executor revisits,
 * because a filter's row estimate can be far off (an AND of columns assumed independent).
 */
export const WALK_REGRET = 4;

/** What the planner may look up besides the store: the engine's caches, without touching recency. */
export interface PlanContext {
  store: Store;
  /** The cached result of a filter, by its cache key; undefined when absent. */
  cachedFilter(key: string): FilterResult | undefined;
  /** True when the order cache holds the matches of `filterKey` sorted by `keys`. */
  cachedOrder(filterKey: string, keys: readonly SortKey[]): boolean;
}

/** Bitmap words over the store's rows. */
function words(store: Store): number {
  return (store.rowCount + 31) >>> 5;
}

/** The positive form of a text operator, and whether its result is complemented. */
export function positiveText(type: TextOp): { op: PositiveTextOp; negate: boolean } | null {
  switch (type) {
    case "notContains":
      return { op: "contains", negate: true };
    case "notEqual":
      return { op: "equals", negate: true };
    case "contains":
    case "equals":
    case "startsWith":
    case "endsWith":
      return { op: type, negate: false };
    default:
      return null;
  }
}

/** A test as explain describes it. */
function describe(test: ColumnTest): string {
  switch (test.op) {
    case "range":
      return `${test.negate ? "not " : ""}${test.loOpen ? "(" : "["}${test.lo}, ${test.hi}${test.hiOpen ? ")" : "]"}`;
    case "null":
      return test.negate ? "not null" : "null";
    case "text":
      return `${test.type} ${JSON.stringify(test.value)}`;
    case "set":
      return `in ${JSON.stringify(test.values.slice(0, 8))}${test.values.length > 8 ? ` (+${test.values.length - 8})` : ""}${test.nulls ? " or null" : ""}`;
  }
}

/** A step that gives no row. */
function none(detail: string): FilterStep {
  return { op: "none", detail, estimatedRows: 0, estimatedCost: COST.CONSTANT };
}

/** A step that gives every row. */
function all(store: Store): FilterStep {
  return { op: "all", estimatedRows: store.rowCount, estimatedCost: COST.CONSTANT };
}

/** The complement of a step. */
function not(store: Store, child: FilterStep): FilterStep {
  return { op: "not", children: [child], estimatedRows: store.rowCount - child.estimatedRows, estimatedCost: child.estimatedCost + words(store) * COST.BITMAP_WORD };
}

/** Where a text test's candidates are verified (plan.ts `TextSource`), for a column with trigram lists. */
function textSource(column: StoredColumn): TextSource | null {
  const trigrams = column.trigrams;
  if (trigrams === null) return null;
  if (column.folded !== null && column.foldedOffsets !== null) return { column, trigrams, folded: column.folded, foldedOffsets: column.foldedOffsets };
  if (column.key && column.distinct !== null) return { column, trigrams, decimals: column.distinct };
  return null;
}

/**
 * A positive text test of a folded needle of 3+ code points through a column's trigram lists:
 * one list when it is the answer (a 3-code-point `contains`), else the lists intersected and the
 * candidates verified. Null rows fold to "" and never match.
 */
function trigramStep(store: Store, source: TextSource, op: PositiveTextOp, needle: string): FilterStep {
  const id = source.column.spec.id;
  const trigrams = needleTrigrams(needle);
  if (trigrams === null) throw new Error("internal: a trigram step needs a needle of 3 or more code points");
  const index = source.trigrams;
  const lists: number[] = [];
  for (const key of trigrams.keys) {
    const k = findList(index, key);
    // a trigram no row holds: nothing matches
    if (k < 0) return { ...none(`no row holds ${JSON.stringify(needle)}`), estimatedCost: trigrams.keys.length * COST.SEARCH };
    lists.push(k);
  }
  lists.sort((a, b) => index.counts[a] - index.counts[b]);
  const lookups = trigrams.keys.length * COST.SEARCH;
  // A needle of 3 code points is exactly its one list ("1111" also has one distinct trigram, but
  // a row with "111" need not hold it).
  if (op === "contains" && trigrams.codePoints === 3 && trigrams.exact) {
    return { op: "postingList", column: id, index: "trigrams", list: index, k: lists[0], detail: JSON.stringify(needle), estimatedRows: index.counts[lists[0]], estimatedCost: lookups };
  }
  const smallest = index.counts[lists[0]];
  // the lists intersected while a list costs less to decode than verifying the candidates left (execute: text.ts)
  let postings = smallest;
  let candidates = smallest;
  for (let l = 1; l < lists.length; l++) {
    const count = index.counts[lists[l]];
    if ((isDense(count, store.rowCount) ? candidates : count * COST.POSTING) > candidates * COST.VERIFY_ROW) break;
    postings += isDense(count, store.rowCount) ? 0 : count;
    candidates = Math.min(candidates, count);
  }
  const estimatedRows = source.column.key && op === "equals" ? Math.min(1, smallest) : smallest;
  return {
    op: "trigrams",
    column: id,
    index: "trigrams",
    source,
    lists,
    textOp: op,
    needle,
    detail: `${op} ${JSON.stringify(needle)}`,
    estimatedRows,
    estimatedCost: lookups + postings * COST.POSTING + candidates * COST.VERIFY_ROW,
  };
}

/** A test decided per distinct value of an ordered column (or a text column's null test), its rows taken from the column's order. */
function valuesStep(store: Store, column: StoredColumn, test: ColumnTest): FilterStep {
  const kind = KINDS[column.spec.kind];
  return {
    op: "values",
    column: column.spec.id,
    index: column.key ? "key order" : "rowsByValue",
    stored: column,
    test,
    detail: describe(test),
    estimatedRows: kind.estimate(column, test, store.rowCount),
    estimatedCost: kind.work(column, test, store.rowCount) * COST.COLUMN_WORK + words(store) * COST.BITMAP_WORD,
  };
}

/** A test checked on every row (a text column's short needle, or its set of short values). */
function scanStep(store: Store, column: StoredColumn, test: ColumnTest): FilterStep {
  const kind = KINDS[column.spec.kind];
  return {
    op: "scan",
    column: column.spec.id,
    index: "folded",
    stored: column,
    test,
    detail: describe(test),
    estimatedRows: kind.estimate(column, test, store.rowCount),
    estimatedCost: kind.work(column, test, store.rowCount) * COST.COLUMN_WORK + words(store) * COST.BITMAP_WORD,
  };
}

/** The union of steps (a set filter's values, a search term's columns). */
function or(store: Store, children: FilterStep[]): FilterStep {
  if (children.length === 1) return children[0];
  let rows = 0;
  let cost = 0;
  for (const child of children) {
    rows += child.estimatedRows;
    cost += child.estimatedCost + words(store) * COST.BITMAP_WORD;
  }
  return { op: "or", children, estimatedRows: Math.min(store.rowCount, rows), estimatedCost: cost };
}

/** The intersection of steps; rows estimated as if the children were independent, or exactly for a posting list under a partition mask. */
function and(store: Store, children: FilterStep[]): FilterStep {
  if (children.length === 1) return children[0];
  const n = Math.max(1, store.rowCount);
  let fraction = 1;
  let cost = 0;
  let mask = allCodes(store);
  let list: Extract<FilterStep, { op: "postingList" }> | null = null;
  let others = 0;
  for (const child of children) {
    fraction *= child.estimatedRows / n;
    cost += child.estimatedCost + words(store) * COST.BITMAP_WORD;
    if (child.op === "partition") mask &= child.mask;
    else if (child.op === "postingList" && list === null) list = child;
    else others++;
  }
  let rows = fraction * store.rowCount;
  if (list !== null && others === 0) {
    // one posting list under a partition mask: its groups' counts, exactly
    const groups = partitionCounts(store).length;
    rows = 0;
    for (let c = 0; c < groups; c++) if ((mask >>> c) & 1) rows += list.list.groupCounts[list.k * groups + c];
  }
  return { op: "and", children, estimatedRows: rows, estimatedCost: cost };
}

/**
 * The step that answers `test` on `column` (docs/api.md "Filtering on any column"): by the
 * column's kind and its stored parts.
 */
export function planColumnTest(store: Store, column: StoredColumn, test: ColumnTest): FilterStep {
  const kind = KINDS[column.spec.kind];
  const id = column.spec.id;
  // a test on the partition column: the set of its codes (ranks) that pass, decided per value
  if (store.partition !== null && store.partition.column === id && kind.passingRanks !== null) {
    const pass = kind.passingRanks(column, test);
    let mask = 0;
    const values: string[] = [];
    for (let r = 0; r < pass.length; r++) {
      if (pass[r] === 0) continue;
      mask |= 1 << r;
      values.push(r === 0 ? "null" : String((kind.format as NonNullable<typeof kind.format>)(column.spec, (column.distinct as Float64Array)[r - 1])));
    }
    // codes without rows (no null, say) do not matter either way
    const counts = partitionCounts(store);
    let occupied = 0;
    for (let c = 0; c < counts.length; c++) if (counts[c] > 0) occupied |= 1 << c;
    if ((mask & occupied) === 0) return none(`no value of ${id} passes ${describe(test)}`);
    if ((mask & occupied) === occupied) return all(store);
    return { op: "partition", column: id, mask, detail: values.join(","), estimatedRows: rowsInMask(store, mask), estimatedCost: COST.CONSTANT };
  }
  const source = textSource(column);
  if (test.op === "text") {
    if (test.type === "blank" || test.type === "notBlank") {
      if (column.blank === null) return valuesStep(store, column, test);
      const blank: FilterStep = { op: "blank", column: id, index: "blank", stored: column, estimatedRows: kind.estimate(column, { op: "text", type: "blank", value: "" }, store.rowCount), estimatedCost: words(store) * COST.BITMAP_WORD };
      return test.type === "blank" ? blank : not(store, blank);
    }
    const positive = positiveText(test.type);
    const needle = fold(test.value);
    // stored values are well-formed Unicode: a lone surrogate matches nothing
    if (positive !== null && !needle.isWellFormed()) return positive.negate ? all(store) : none("the needle is not well-formed Unicode");
    const ordered = kind.passingRanks !== null;
    // an ordered column's equality is a binary search over its values, cheaper than any list
    const viaTrigrams = positive !== null && source !== null && needleTrigrams(needle) !== null && !(ordered && positive.op === "equals");
    if (viaTrigrams) {
      const step = trigramStep(store, source as TextSource, (positive as NonNullable<typeof positive>).op, needle);
      return (positive as NonNullable<typeof positive>).negate ? not(store, step) : step;
    }
    if (!ordered && positive !== null && needle === "" && positive.op !== "equals") {
      // every value holds the empty string: the non-null rows (null passes only the negated test)
      if (column.key) return positive.negate ? none("no value lacks the empty string") : all(store);
      return valuesStep(store, column, { op: "null", negate: !positive.negate });
    }
    return ordered ? valuesStep(store, column, test) : scanStep(store, column, test);
  }
  if (test.op === "set" && source !== null && source.trigrams !== null && kind.passingRanks === null) {
    // whole values through the lists when every value has 3+ code points
    const values = test.values.filter((v) => v.isWellFormed());
    if (values.every((v) => needleTrigrams(v) !== null)) {
      const children = values.map((v) => trigramStep(store, source, "equals", v));
      if (test.nulls && column.blank !== null) children.push({ op: "blank", column: id, index: "blank", stored: column, estimatedRows: kind.estimate(column, { op: "text", type: "blank", value: "" }, store.rowCount), estimatedCost: words(store) * COST.BITMAP_WORD });
      if (children.length === 0) return none("an empty set");
      return or(store, children);
    }
    return scanStep(store, column, test);
  }
  if (kind.passingRanks !== null || test.op === "null") return valuesStep(store, column, test);
  return scanStep(store, column, test);
}

/**
 * A search term's alternatives (docs/api.md "Global search"): every searched column's
 * `contains` of the term, each planned as a column test (an enum none of whose values holds the
 * term adds nothing).
 */
function termAlternatives(store: Store, term: string, searched: readonly StoredColumn[]): FilterStep[] {
  const test: ColumnTest = { op: "text", type: "contains", value: term };
  const out: FilterStep[] = [];
  for (const column of searched) {
    const step = planColumnTest(store, column, test);
    if (step.op === "none") continue;
    out.push(step);
  }
  return out;
}

/** Cost of checking one row for a term: each searched column's check (what a `check` term reads per row). */
function checkCost(searched: readonly StoredColumn[]): number {
  return Math.max(1, searched.length) * COST.SEARCH_CHECK_COLUMN;
}

/**
 * The global search (docs/api.md "Global search"): the terms in order of their expected rows
 * (fewest first), the first evaluated from the indexes, each next one evaluated and intersected,
 * or, when few rows are expected to be left, checked on those rows alone.
 * @param columns the searchable columns named by the predicate (store/types.ts `searchedColumns`), or undefined for every one
 */
function planSearch(store: Store, terms: string[], columns: readonly string[] | undefined): FilterStep {
  const searched = searchedColumns(store, columns);
  const planned = terms.map((term) => {
    const children = termAlternatives(store, term, searched);
    const union = or(store, children);
    return { term, children, rows: children.length === 0 ? 0 : union.estimatedRows, cost: children.length === 0 ? COST.CONSTANT : union.estimatedCost };
  });
  planned.sort((a, b) => a.rows - b.rows);
  const steps: TermStep[] = [];
  let left = store.rowCount;
  let cost = 0;
  for (let t = 0; t < planned.length; t++) {
    const p = planned[t];
    const check = t > 0 && left * checkCost(searched) < p.cost;
    const stepCost = check ? left * checkCost(searched) : p.cost;
    const rows = t === 0 ? p.rows : Math.min(left, (left * p.rows) / Math.max(1, store.rowCount));
    steps.push({ op: "term", term: p.term, strategy: check ? "check" : "evaluate", children: p.children, estimatedRows: rows, estimatedCost: stepCost });
    left = rows;
    cost += stepCost;
  }
  return { op: "search", children: steps, searched, estimatedRows: left, estimatedCost: cost };
}

/** The step of a predicate tree (src/query/types.ts). */
export function planPredicate(store: Store, p: Predicate): FilterStep {
  switch (p.kind) {
    case "column":
      return planColumnTest(store, storedColumn(store, p.column), p.test);
    case "search":
      return planSearch(store, p.terms, p.columns);
    case "and":
      return and(store, p.children.map((c) => planPredicate(store, c)));
    case "or":
      return or(store, p.children.map((c) => planPredicate(store, c)));
  }
}

/** Keys already computed, per predicate tree object (a query's tree is keyed once). */
const filterKeys = new WeakMap<Predicate, string>();

/** The filter cache's key of a predicate tree: its JSON (equal trees, equal keys), remembered per tree object. */
export function filterCacheKey(filter: Predicate | null): string {
  if (filter === null) return "";
  let key = filterKeys.get(filter);
  if (key === undefined) {
    key = JSON.stringify(filter);
    filterKeys.set(filter, key);
  }
  return key;
}

/** The filter step of a query: its cached result, or the predicate planned. */
export function planFilter(context: PlanContext, filter: Predicate | null): FilterStep {
  const store = context.store;
  if (filter === null) return all(store);
  const cached = context.cachedFilter(filterCacheKey(filter));
  if (cached !== undefined) {
    const rows = cached.kind === "all" ? store.rowCount : cached.kind === "codes" ? rowsInMask(store, cached.mask) : cached.set.count;
    return { op: "cached", result: cached, estimatedRows: rows, estimatedCost: COST.CONSTANT };
  }
  return planPredicate(store, filter);
}

/**
 * Cost of a walk of the sort key's order to the end of the window, testing a match bitmap: the
 * rows walked at this selectivity.
 * @param windowEnd offset + limit of the window, in matching rows
 * @param scopeRows rows of the partition codes walked, in rows
 * @param matches rows matching the filter
 */
export function walkCost(windowEnd: number, scopeRows: number, matches: number): number {
  return matches === 0 ? 0 : ((Math.min(windowEnd, matches) * scopeRows) / matches) * COST.WALK_ROW;
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

/**
 * How a filtered window on a match set is ordered: the walk of the first key's order or the sort
 * of every match, whichever costs less for `matches` rows (estimated at plan time, exact when
 * the executor revisits the choice with {@link WALK_REGRET}).
 * @param mask the partition codes the matches are restricted to
 */
export function windowChoice(store: Store, windowEnd: number, mask: number, matches: number, keys: readonly SortKey[]): { op: "walk" | "sort"; cost: number } {
  const walk = walkCost(windowEnd, rowsInMask(store, mask), matches);
  const gather = gatherCost(matches, keys);
  return walk > gather ? { op: "sort", cost: gather } : { op: "walk", cost: walk };
}

/** The partition codes a filter step restricts its rows to (every code unless it is a partition step or a cached mask). */
function stepMask(store: Store, step: FilterStep): number {
  if (step.op === "partition") return step.mask;
  if (step.op === "cached") return step.result.kind === "codes" ? step.result.mask : step.result.kind === "set" ? step.result.set.mask : allCodes(store);
  if (step.op === "and") {
    let mask = allCodes(store);
    for (const child of step.children) mask &= stepMask(store, child);
    return mask;
  }
  return allCodes(store);
}

/** True when a filter step gives every row or the rows of some partition codes (no match set): the window is a slice. */
function givesCodes(step: FilterStep): boolean {
  return step.op === "all" || step.op === "partition" || (step.op === "cached" && step.result.kind !== "set");
}

/** A query's plan (plan.ts): the root window step over the filter step, and the cache keys the executor files results under. */
export interface QueryPlan {
  root: WindowStep;
  /** The query's filter (what a live engine also tests its changed rows with). */
  filter: Predicate | null;
  /** The filter's cache key ("" for no filter). */
  filterKey: string;
}

/**
 * Plans a normalized query (src/query/types.ts `Query`): the filter (cached, or planned from the
 * predicate) and how its rows are ordered and cut to the window. The root's `estimatedCost` is
 * the whole plan's: the filter's (unless cached) and the window's.
 */
export function planQuery(context: PlanContext, query: Query): QueryPlan {
  const store = context.store;
  const keys = normalizeSort(store, query.sort);
  const filterKey = filterCacheKey(query.filter);
  const filter = planFilter(context, query.filter);
  const matches = filter.estimatedRows;
  const windowEnd = query.offset + query.limit;
  const rows = Math.max(0, Math.min(query.limit, matches - query.offset));
  const mask = stepMask(store, filter);
  let op: WindowOp;
  let cost: number;
  if (givesCodes(filter) || filter.op === "none") {
    op = "slice";
    cost = COST.CONSTANT + rows * COST.WINDOW_ROW;
  } else if (context.cachedOrder(filterKey, keys)) {
    op = "cachedOrder";
    cost = COST.CONSTANT + rows * COST.WINDOW_ROW;
  } else if (isKeyOrder(store, keys)) {
    op = "keyOrder";
    cost = COST.CONSTANT + Math.min(windowEnd, matches) * COST.WINDOW_ROW;
  } else {
    const choice = windowChoice(store, windowEnd, mask, matches, keys);
    op = choice.op;
    cost = choice.cost;
  }
  const root: WindowStep = {
    op,
    column: keys[0].column,
    index: orderIndexName(store, keys, mask),
    offset: query.offset,
    limit: query.limit,
    keys,
    children: [filter],
    estimatedRows: rows,
    estimatedCost: filter.estimatedCost + cost,
  };
  return { root, filter: query.filter, filterKey };
}
