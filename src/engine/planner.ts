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
import { MAX_KEY_CODE_POINT, findList, gramKey, isDense, needleTrigrams } from "../bits/trigrams.ts";
import type { StoredColumn } from "../kinds/kind.ts";
import { KINDS } from "../kinds/registry.ts";
import { positiveText } from "../kinds/text.ts";
import type { ColumnTest, Predicate, Query, SortKey } from "../query/types.ts";
import { type Store, type TrigramIndex, allCodes, columnGrams, partitionCounts, searchIndexColumns, searchedColumns, storedColumn } from "../store/types.ts";
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
  /**
   * One record hashed for a role's version token (view-version.ts), projected and hashed twice:
   * measured at 0.5–4 µs a row (bench/version-token.ts), counted at the low end.
   */
  VERSION_ROW: 500,
} as const;

/**
 * Plans that cost more than this run in the query scheduler (scheduler.ts), a slice at a time
 * between the other requests: about 0.1 ms, a few cheap requests' worth of work, so that under
 * load a cheap request waits for the cheap ones ahead of it and one slice at most, never behind
 * a run of searches answered inline (0.25 ms let 1M-row searches of frequent terms run inline:
 * the cheap mix's p99 then tripled while the search mix ran).
 */
export const DEFER_ABOVE = 100_000;

/** What the planner may look up besides the store: the engine's caches, without touching recency. */
export interface PlanContext {
  store: Store;
  /** The cached result of a filter, by its cache key; undefined when absent. */
  cachedFilter(key: string): FilterResult | undefined;
  /** Every match of `filterKey` sorted by `keys` when the order cache holds them (length = matches), else undefined. */
  cachedOrder(filterKey: string, keys: readonly SortKey[]): Uint32Array | undefined;
  /** The estimated cost of the walks of `filterKey` by `keys` run so far, in cost units (0 for none). */
  walked(filterKey: string, keys: readonly SortKey[]): number;
  /** Which op orders a filtered window on a match set: chosen by cost, or forced (tests). */
  force: "auto" | "walk" | "sort";
  /** A live replica's changes (docs/live-replicas.md §4), or null for a snapshot alone. */
  live: LivePlanContext | null;
}

/** What the planner asks of a live replica's version (execute.ts makes it per version). */
export interface LivePlanContext {
  /** What explain says the window merges with: the version's changed and replaced rows. */
  changes: string;
  /** The version's order cache entry: every match of `filterKey` sorted by `keys` (extended rows), else undefined. */
  cachedOrder(filterKey: string, keys: readonly SortKey[]): Uint32Array | undefined;
  /**
   * True when the changed rows passing `filter` each have their place in a segment of `keys`'
   * order over the codes of `mask` (live-order.ts `liveWalkable`): a window can walk that
   * order merged with them; else it sorts. O(changed rows), kept per version.
   */
  walkable(filter: Predicate | null, filterKey: string, keys: SortKey[], mask: number): boolean;
}

/** Bitmap words over the store's rows. */
function words(store: Store): number {
  return (store.rowCount + 31) >>> 5;
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
 * The step that answers `test` on `column` (docs/api.md "Filter model"): by the
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

/** Cost of checking one row's values for a search term's text: each column it reads (random reads); every column the search index covers for a null term. */
function textCheckCost(store: Store, term: TermStep | null): number {
  return Math.max(1, (term?.columns ?? searchIndexColumns(store.searchable)).length) * COST.SEARCH_CHECK_COLUMN;
}

/**
 * Cost of checking `rows` candidate rows for a search term (search.ts `termTester`): its enum
 * values by the rows' ranks, its text by a bit of its one exact dense list, else on the values.
 * @param term the term, or null for a term known only to need its text checked
 */
export function termCheckCost(store: Store, term: TermStep | null, rows: number): number {
  let perRow = COST.WALK_ROW;
  if (term !== null) perRow += term.ranked.length * COST.WALK_ROW;
  if (term !== null && term.lists.length === 0 && term.unions.length === 0) return rows * perRow;
  const bitTest = term !== null && term.exact && term.lists.length === 1 && isDense(term.gramIndex.counts[term.lists[0]], store.rowCount);
  return rows * (perRow + (bitTest ? COST.WALK_ROW : textCheckCost(store, term)));
}

/**
 * Whether a sparse list of `count` rows is intersected with `candidates` rows (decoded and
 * merged) rather than left to the check of each candidate's values: the cheaper of the two. The
 * one rule the planner prices and the executor (search.ts) applies with the real candidate count.
 */
export function intersectsList(store: Store, count: number, candidates: number): boolean {
  return count * COST.POSTING <= termCheckCost(store, null, candidates);
}

/** Rows of an enum column holding a passing rank (from its rank starts). */
function passingRows(column: StoredColumn, pass: Uint8Array): number {
  const starts = column.rankStarts as Uint32Array;
  let rows = 0;
  for (let r = 0; r < pass.length; r++) if (pass[r] === 1) rows += starts[r + 1] - starts[r];
  return rows;
}

/**
 * One search term planned (plan.ts `TermStep`): its lists in the search index and the enum values
 * that contain it; "none" when no row can hold it (then the search has no row), "all" when every
 * row does (then it filters nothing).
 */
function planTerm(store: Store, term: string, searched: readonly StoredColumn[]): TermStep | "none" | "all" {
  const needle = fold(term);
  // stored values are well-formed Unicode: a lone surrogate matches nothing
  if (!needle.isWellFormed()) return "none";
  // a term that folds to nothing (a lone combining mark) is in every value: every row has a key
  if (needle === "") return "all";
  const cps: number[] = [];
  for (const ch of needle) cps.push(ch.codePointAt(0) as number);
  const gram = Math.min(3, cps.length) as 1 | 2 | 3;
  const keys = cps.length <= 3 ? [gramKey(cps)] : (needleTrigrams(needle) as NonNullable<ReturnType<typeof needleTrigrams>>).keys;
  // a needle of 1–3 code points is exactly its one list, unless a code point shares a key
  const exact = cps.length <= 3 && cps.every((cp) => cp < MAX_KEY_CODE_POINT);
  // a search through every covered column reads the lists across them; one through some of them
  // (an access role's) reads only those columns' own lists, so what it costs depends on nothing
  // it may not see (docs/api.md "Access control": cost isolation)
  const columns = searchIndexColumns(searched);
  const everyColumn = columns.length === searchIndexColumns(store.searchable).length;
  const index = everyColumn || columns.length === 0 ? store.search.grams[gram - 1] : columnGrams(store, columns[0], gram);
  let lists = columns.length === 0 ? [] : listsOf(index, keys);
  const unions: TermStep["unions"] = [];
  if (!everyColumn && columns.length > 1) {
    lists = [];
    for (const column of columns) {
      const own = columnGrams(store, column, gram);
      const found = listsOf(own, keys);
      if (found.length > 0) unions.push({ column, index: own, lists: found });
    }
  }
  const contains: ColumnTest = { op: "text", type: "contains", value: term };
  const where = everyColumn ? `search.${gram}` : columns.length === 1 ? gramIndexName(columns[0], gram) : "";
  const children: FilterStep[] = lists.map((k) => ({ op: "gramList", index: where, list: index, k, detail: JSON.stringify(needle), estimatedRows: index.counts[k], estimatedCost: COST.SEARCH }));
  for (const u of unions) for (const k of u.lists) children.push({ op: "gramList", index: gramIndexName(u.column, gram), list: u.index, k, detail: JSON.stringify(needle), estimatedRows: u.index.counts[k], estimatedCost: COST.SEARCH });
  let codes = 0;
  const ranked: TermStep["ranked"] = [];
  let enumRows = 0;
  for (const column of searched) {
    // the key and the columns the search index covers are read through its lists
    if (column.key || KINDS[column.spec.kind].searchIndexed) continue;
    const step = planColumnTest(store, column, contains);
    if (step.op === "none") continue;
    // an enum value of every row holds the term
    if (step.op === "all") return "all";
    children.push(step);
    if (step.op === "partition") {
      codes |= step.mask;
      enumRows += step.estimatedRows;
      continue;
    }
    const passingRanks = KINDS[column.spec.kind].passingRanks;
    if (passingRanks === null) continue;
    const pass = passingRanks(column, contains);
    const rows = passingRows(column, pass);
    if (rows === 0) continue;
    ranked.push({ column, pass });
    enumRows += rows;
  }
  let textRows = lists.length === 0 ? 0 : index.counts[lists[0]];
  for (const u of unions) textRows += u.index.counts[u.lists[0]];
  if (textRows === 0 && codes === 0 && ranked.length === 0) return "none";
  return { ...termBase(term, needle, gram, index, lists, unions, exact, columns, codes, ranked, children), estimatedRows: Math.min(store.rowCount, textRows + enumRows), estimatedCost: COST.SEARCH * keys.length };
}

/** The fields of a term step but its estimates. */
function termBase(
  term: string,
  needle: string,
  gram: 1 | 2 | 3,
  index: TrigramIndex,
  lists: number[],
  unions: TermStep["unions"],
  exact: boolean,
  columns: readonly StoredColumn[],
  codes: number,
  ranked: TermStep["ranked"],
  children: FilterStep[],
): Omit<TermStep, "estimatedRows" | "estimatedCost"> {
  return { op: "term", term, strategy: "list", needle, gram, gramIndex: index, lists, unions, exact, columns, codes, ranked, children };
}

/**
 * The lists of `index` holding every key of `keys` (a term's n-grams), fewest rows first; empty
 * when one of them is in no list (no indexed value holds the term).
 */
function listsOf(index: TrigramIndex, keys: readonly number[]): number[] {
  const lists: number[] = [];
  for (const key of keys) {
    const k = findList(index, key);
    if (k < 0) return [];
    if (!lists.includes(k)) lists.push(k);
  }
  return lists.sort((a, b) => index.counts[a] - index.counts[b]);
}

/** What explain calls one column's own lists of n-grams of `gram` code points (snapshot sections `col.<id>.search.<n>`, or its trigrams). */
function gramIndexName(column: StoredColumn, gram: 1 | 2 | 3): string {
  return gram === 3 ? `col.${column.spec.id}.trigrams` : `col.${column.spec.id}.search.${gram}`;
}

/** Cost of evaluating a term over every row: its lists, its enum values' rows, the union as a bitmap. */
export function termWholeCost(store: Store, term: TermStep): number {
  return term.estimatedRows * COST.POSTING + ((store.rowCount + 31) >>> 5) * COST.BITMAP_WORD;
}

/** True when a term's rows are its lists' alone (no enum value holds it, and its lists are of one index). */
export function isPureTerm(term: TermStep): boolean {
  return term.codes === 0 && term.ranked.length === 0 && term.unions.length === 0;
}

/**
 * True when a term with enum values joins the word-by-word intersection of dense lists (search.ts):
 * one exact dense list, and values of the partition column only (a word of code bitmaps each).
 */
export function joinsWords(store: Store, term: TermStep): boolean {
  if (isPureTerm(term) || term.ranked.length > 0 || !term.exact || term.lists.length !== 1) return false;
  return isDense(term.gramIndex.counts[term.lists[0]], store.rowCount);
}

/**
 * The global search (docs/api.md "Global search"), FTS5's shape: every term's lists in the search
 * index (store/types.ts `SearchIndex`), fewest rows first. Terms no enum value holds ("pure") are
 * intersected through their lists: from the smallest list's rows, each next list tested (a dense
 * one bit by bit) or, when decoding it costs more than checking the candidates left, left to that
 * check; or, when every list is dense, word by word over their bitmaps. Then the candidates are
 * checked on their values for every term whose lists are not exactly its rows and every term an
 * enum value holds (unless checking costs more than evaluating it over every row).
 * @param names the searchable columns the predicate names (an access role's: store/types.ts
 *   `searchedColumns`), or undefined for every one
 */
function planSearch(store: Store, terms: string[], names: readonly string[] | undefined): FilterStep {
  const searched = searchedColumns(store, names);
  const planned: TermStep[] = [];
  for (const term of terms) {
    const step = planTerm(store, term, searched);
    if (step === "none") return { ...none(`no row holds ${JSON.stringify(term)}`), estimatedCost: COST.SEARCH * terms.length };
    if (step === "all") continue;
    if (!planned.some((p) => p.needle === step.needle)) planned.push(step);
  }
  if (planned.length === 0) return all(store);
  planned.sort((a, b) => a.estimatedRows - b.estimatedRows);
  const n = Math.max(1, store.rowCount);
  const words = (store.rowCount + 31) >>> 5;
  const pure = planned.filter(isPureTerm);
  let rows = store.rowCount;
  let cost = 0;
  let detail: string;
  const checked: TermStep[] = [];
  if (pure.length > 0) {
    const lists: { term: TermStep; count: number }[] = [];
    for (const term of pure) for (const k of term.lists) lists.push({ term, count: term.gramIndex.counts[k] });
    lists.sort((a, b) => a.count - b.count);
    if (isDense(lists[0].count, store.rowCount)) {
      // every list dense: their bitmaps ANDed word by word (with the terms that join them)
      const joined = planned.filter((t) => joinsWords(store, t));
      for (const t of joined) t.strategy = "list";
      cost += words * (lists.length + 2 * joined.length) * COST.BITMAP_WORD;
      for (const l of lists) rows = (rows * l.count) / n;
      for (const t of joined) rows = (rows * t.estimatedRows) / n;
      for (const t of pure) t.strategy = "list";
      detail = "dense lists ANDed word by word";
      checked.push(...planned.filter((t) => !isPureTerm(t) && !joined.includes(t)));
    } else {
      rows = lists[0].count;
      cost += rows * COST.POSTING;
      lists[0].term.strategy = "list";
      for (let i = 1; i < lists.length; i++) {
        const l = lists[i];
        if (isDense(l.count, store.rowCount)) cost += rows * COST.WALK_ROW;
        else if (intersectsList(store, l.count, rows)) cost += l.count * COST.POSTING;
        else {
          if (!checked.includes(l.term)) checked.push(l.term);
          continue;
        }
        if (l.term.strategy !== "check") l.term.strategy = l.term === lists[0].term ? "list" : "lists";
        rows = (rows * l.count) / n;
      }
      detail = "the smallest list's rows, the other lists tested on them";
      checked.push(...planned.filter((t) => !isPureTerm(t)));
    }
    for (const t of pure) if (!t.exact && !checked.includes(t)) checked.push(t);
  } else {
    // every term held by an enum value: the first evaluated over every row, the others checked
    const first = planned[0];
    first.strategy = "list";
    rows = first.estimatedRows;
    cost += first.lists.length === 0 && first.unions.length === 0 ? COST.CONSTANT : first.estimatedRows * COST.POSTING + words * COST.BITMAP_WORD;
    detail = "the first term's rows, the others checked on them";
    checked.push(...planned.slice(1));
  }
  for (const t of checked) {
    // a term not in the lists alone (an enum value, a column without lists) is either checked on
    // the rows left or evaluated over every row and ANDed in, whichever costs less at this point
    const check = termCheckCost(store, t, rows);
    const whole = isPureTerm(t) ? Number.POSITIVE_INFINITY : termWholeCost(store, t);
    t.strategy = whole < check ? "list" : "check";
    cost += Math.min(check, whole);
    rows = (rows * t.estimatedRows) / n;
  }
  if (searched.length !== store.searchable.length) detail += `; in ${searched.map((c) => c.spec.id).join(", ") || "no column"}`;
  return { op: "search", detail, searched, children: planned, estimatedRows: rows, estimatedCost: Math.max(COST.CONSTANT, cost) };
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
 * of every match, whichever costs less for `matches` rows (the planner's estimate, or the exact
 * count of a cached filter result; the executor does not revisit it).
 * @param mask the partition codes the matches are restricted to
 */
export function windowChoice(store: Store, windowEnd: number, mask: number, matches: number, keys: readonly SortKey[]): { op: "walk" | "sort"; cost: number } {
  const walk = walkCost(windowEnd, rowsInMask(store, mask), matches);
  const gather = gatherCost(matches, keys);
  return walk > gather ? { op: "sort", cost: gather } : { op: "walk", cost: walk };
}

/** The partition codes a filter step restricts its rows to (every code unless it is a partition step or a cached mask). */
export function stepMask(store: Store, step: FilterStep): number {
  if (step.op === "partition") return step.mask;
  if (step.op === "cached") return step.result.kind === "codes" ? step.result.mask : step.result.kind === "set" ? step.result.set.mask : allCodes(store);
  if (step.op === "and") {
    let mask = allCodes(store);
    for (const child of step.children) mask &= stepMask(store, child);
    return mask;
  }
  return allCodes(store);
}

/**
 * The partition codes whose every row a filter step gives, when it gives no match set (every
 * row: all codes; no row: 0), else null — what evaluating it yields (evaluate.ts: a mask node or
 * a set node), known from the step's shape. A window over a mask is a slice of a stored order.
 * A search of several terms held by partition values alone may still evaluate to a mask (the
 * executor then walks the order over it, every row matching: the slice's rows and work).
 */
export function codesOf(store: Store, step: FilterStep): number | null {
  const every = allCodes(store);
  switch (step.op) {
    case "all":
      return every;
    case "none":
      return 0;
    case "partition":
      return step.mask & every;
    case "cached":
      return step.result.kind === "all" ? every : step.result.kind === "codes" ? step.result.mask & every : null;
    case "not": {
      const child = codesOf(store, step.children[0]);
      return child === null ? null : every & ~child;
    }
    case "and": {
      let mask = every;
      let set = false;
      for (const child of step.children) {
        const m = codesOf(store, child);
        if (m === null) set = true;
        else mask &= m;
        if (m !== null && mask === 0) return 0;
      }
      return set ? null : mask;
    }
    case "or": {
      let mask = 0;
      const masks = step.children.map((c) => codesOf(store, c));
      if (masks.some((m) => m !== null && (m & every) === every)) return every;
      // only empty masks: merged as an empty row list (evaluate.ts mergeSparse)
      if (masks.every((m) => m === 0)) return null;
      for (const m of masks) {
        if (m === null) return null;
        mask |= m;
      }
      return mask;
    }
    case "search": {
      const terms = step.children;
      if (terms.length === 0) return every;
      const t = terms[0];
      return terms.length === 1 && t.lists.length === 0 && t.ranked.length === 0 ? t.codes & every : null;
    }
    default:
      return null;
  }
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
  const codes = codesOf(store, filter);
  const live = context.live;
  const slice = COST.CONSTANT + rows * COST.WINDOW_ROW;
  let op: WindowOp;
  let cost = slice;
  // a snapshot's window over a mask, whatever is cached: a slice (a live window merges the changes)
  const ordered = live === null && codes !== null ? undefined : (live ?? context).cachedOrder(filterKey, keys);
  if (live === null && codes !== null) op = "slice";
  else if (ordered !== undefined) op = "cachedOrder";
  else if (codes !== null) {
    // a live replica: a slice of each segment merged with its changed rows, if each has a place
    op = (live as LivePlanContext).walkable(query.filter, filterKey, keys, codes) ? "slice" : "sort";
    if (op === "sort") cost = gatherCost(matches, keys);
  } else if (isKeyOrder(store, keys) && context.force !== "walk") {
    op = "keyOrder";
    cost = COST.CONSTANT + Math.min(windowEnd, matches) * COST.WINDOW_ROW;
  } else {
    const choice = windowChoice(store, windowEnd, mask, matches, keys);
    op = context.force === "auto" ? choice.op : context.force;
    cost = op === "walk" ? walkCost(windowEnd, rowsInMask(store, mask), matches) : gatherCost(matches, keys);
    // windows of one filter and sort asked again and again (random depths, other tenants' turns
    // in between): once their walks would have cost more than sorting every match, sort and keep
    // the order (at most twice the cheaper of the two, whatever comes next)
    if (context.force === "auto" && op === "walk" && live === null && context.walked(filterKey, keys) + cost > gatherCost(matches, keys)) {
      op = "sort";
      cost = gatherCost(matches, keys);
    }
    if (op === "walk" && live !== null && !live.walkable(query.filter, filterKey, keys, mask)) {
      op = "sort";
      cost = gatherCost(matches, keys);
    }
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
  if (op === "cachedOrder") root.ordered = ordered;
  if (live !== null) root.changes = live.changes;
  return { root, filter: query.filter, filterKey };
}
