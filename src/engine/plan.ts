/**
 * The plan as a value (docs/api.md "Explain"): a tree of steps the planner (planner.ts) builds
 * from a normalized query, priced once, that the executor (execute.ts) runs and explain prints.
 * Each step names what it does (`op`), the column and the stored index it reads, and the rows and
 * cost the planner expects; a run with analyze adds the rows it gave and the milliseconds it took.
 *
 * Filter steps give a row set (row-set.ts); the root step orders the set and cuts the window.
 */
import type { ColumnTest, SortKey } from "../query/types.ts";
import type { StoredColumn } from "../kinds/kind.ts";
import type { TrigramIndex } from "../store/types.ts";
import type { PositiveTextOp } from "../bits/folded-match.ts";
import type { FilterResult } from "./row-set.ts";

/** What every step holds: its estimates, and, once run with analyze, what it did. */
interface StepBase {
  /** Rows the planner expects the step to give. */
  estimatedRows: number;
  /** Work the planner expects the step to take, in cost units (planner.ts `COST`: about 1 ns each). */
  estimatedCost: number;
  /** Rows the step gave (analyze only). */
  rows?: number;
  /** Milliseconds the step took, its children included (analyze only). */
  ms?: number;
}

/**
 * Where a text test's candidates are verified: a column's folded bytes, or a number key's decimal
 * forms (formatted per candidate).
 */
export type TextSource = { column: StoredColumn; trigrams: TrigramIndex; folded: Uint8Array; foldedOffsets: Uint32Array } | { column: StoredColumn; trigrams: TrigramIndex; decimals: Float64Array };

/** A filter step: what it evaluates to is a row set. */
export type FilterStep = StepBase &
  (
    | { op: "all" }
    | { op: "none"; detail: string }
    /** A filter result the engine's cache holds: no work. */
    | { op: "cached"; result: FilterResult }
    /** The rows of some partition codes: a test on the partition column, decided per value. */
    | { op: "partition"; column: string; mask: number; detail: string }
    /** One posting list is the answer (a 3-code-point `contains`), referenced, not decoded. */
    | { op: "postingList"; column: string; index: "trigrams"; list: TrigramIndex; k: number; detail: string }
    /** One list of the search index (store/types.ts `SearchIndex`), referenced, not decoded: a search term's n-gram. */
    | { op: "gramList"; index: string; list: TrigramIndex; k: number; detail: string }
    /** The needle's posting lists intersected (smallest first, while that is cheaper than verifying), the candidates verified. */
    | { op: "trigrams"; column: string; index: "trigrams"; source: TextSource; lists: number[]; textOp: PositiveTextOp; needle: string; detail: string }
    /** A test decided once per distinct value, the passing values' rows taken from the column's order. */
    | { op: "values"; column: string; index: "rowsByValue" | "key order"; stored: StoredColumn; test: ColumnTest; detail: string }
    /** A test checked on every row's value. */
    | { op: "scan"; column: string; index: "folded"; stored: StoredColumn; test: ColumnTest; detail: string }
    /** The column's prebuilt bitmap of blank rows. */
    | { op: "blank"; column: string; index: "blank"; stored: StoredColumn }
    /** Every row its child does not give. */
    | { op: "not"; children: [FilterStep] }
    | { op: "and"; children: FilterStep[] }
    | { op: "or"; children: FilterStep[] }
    /** The global search: its terms (fewest expected rows first), intersected through their lists, then checked; `searched`: the columns its terms look into. */
    | { op: "search"; children: TermStep[]; detail: string; searched: readonly StoredColumn[] }
  );

/**
 * One search term (docs/api.md "Global search"): the rows whose searchable values contain it —
 * those the search index lists for it (store/types.ts `SearchIndex`: the n-gram list of a term of
 * n ≤ 3 code points, exactly; the intersection of its trigrams' lists for a longer one, a
 * superset checked on the values) and those holding an enum value that contains it.
 * `strategy` says how the executor (search.ts) used it: `list` (its lists decoded or read word by
 * word), `lists` (its lists intersected with the candidates, then the candidates checked),
 * `check` (each candidate row tested on its values).
 */
export type TermStep = StepBase & {
  op: "term";
  term: string;
  strategy: "list" | "lists" | "check";
  /** The term folded (collation.ts `fold`). */
  needle: string;
  /** Code points per gram of its lists: the term's length up to 3. */
  gram: 1 | 2 | 3;
  /**
   * The index its `lists` are in: `store.search.grams[gram - 1]` for a search through every
   * covered column, else the one covered column's own (store/types.ts `columnGrams`).
   */
  gramIndex: TrigramIndex;
  /** Its lists in `gramIndex`, fewest rows first; empty when no indexed value holds it, or when `unions` holds its lists. */
  lists: number[];
  /**
   * For a search through two or more, but not every, covered column (an access role's): per
   * column where every n-gram of the term occurs, that column's own lists of them (fewest rows
   * first); the term's text rows are the union over these columns of each one's lists
   * intersected. Empty otherwise.
   */
  unions: { column: StoredColumn; index: TrigramIndex; lists: number[] }[];
  /** True when the lists (intersected; of each column of `unions`) hold exactly the rows whose searched values contain the term. */
  exact: boolean;
  /** Partition codes whose value contains the term (bit c = code c; 0 for none). */
  codes: number;
  /**
   * The searched columns holding a value per row (text columns and the key) whose values a check
   * of the term reads: every one the search index covers, or an access role's of them.
   */
  columns: readonly StoredColumn[];
  /** Other searchable enum columns with a value containing the term: the passing ranks of each (index = rank). */
  ranked: { column: StoredColumn; pass: Uint8Array }[];
  /** What explain prints: the lists and the enum values it reads. */
  children: FilterStep[];
};

/** How the root orders a row set and cuts the window. */
export type WindowOp =
  /** No filter, or one on the partition column: a slice of a stored order (O(limit)). */
  | "slice"
  /** A match set in key order: its first rows, a slice of its rows, or picked from its bitmap. */
  | "keyOrder"
  /** The sort key's stored order walked, testing each row's membership (resumed at the next block). */
  | "walk"
  /** Every match sorted by the sort keys, then sliced (kept in the order cache). */
  | "sort"
  /** The order cache holds the matches sorted: a slice. */
  | "cachedOrder";

/** The root: the filter's rows ordered and cut to the window [offset, offset + limit). */
export type WindowStep = StepBase & {
  op: WindowOp;
  /** The first sort key's column. */
  column: string;
  /** The stored order read (`rowsByValue`, `rowsByValueByPartition`, `rowsByAbsValue`, `key order`, `partition`). */
  index: string;
  offset: number;
  limit: number;
  /** The normalized sort keys. */
  keys: SortKey[];
  children: [FilterStep];
  /** Over a live replica's changes: what the base's rows are merged with (docs/live-replicas.md §4); analyze adds how many match. */
  changes?: string;
  /** `cachedOrder`: the cached order the planner found (every match sorted), held so an eviction meanwhile changes nothing. */
  ordered?: Uint32Array;
};

/** A step as explain prints it (docs/api.md "Explain"). */
export interface PrintedStep {
  op: string;
  column?: string;
  index?: string;
  detail?: string;
  /** Absent in a plan printed for a restricted scope ({@link printScoped}). */
  estimatedRows?: number;
  /** Absent in a plan printed for a restricted scope ({@link printScoped}). */
  estimatedCost?: number;
  rows?: number;
  ms?: number;
  children?: PrintedStep[];
}

/** A step's printable fields and its children, printed the same way (what explain answers). */
export function printStep(step: FilterStep | TermStep | WindowStep): PrintedStep {
  const out: PrintedStep = { op: step.op, estimatedRows: Math.round(step.estimatedRows), estimatedCost: Math.round(step.estimatedCost) };
  const s = step as Partial<{ column: string; index: string; detail: string; term: string; strategy: string; offset: number; limit: number; keys: SortKey[] }>;
  if (s.column !== undefined) out.column = s.column;
  if (s.index !== undefined) out.index = s.index;
  if (step.op === "term") out.detail = `${JSON.stringify(s.term)}: ${s.strategy}`;
  // a term's lists' index as its first list names it (search.<n>, or a column's own)
  if (step.op === "term" && (step as TermStep).lists.length > 0) out.index = ((step as TermStep).children[0] as { index: string }).index;
  else if (s.offset !== undefined && s.keys !== undefined) {
    out.detail = `rows ${s.offset}..${s.offset + (s.limit as number)} by ${s.keys.map((k) => `${k.column} ${k.direction}${k.absolute ? " absolute" : ""}`).join(", ")}`;
    const changes = (step as WindowStep).changes;
    if (changes !== undefined) out.detail += `; merged with the changes since the snapshot: ${changes}`;
  } else if (s.detail !== undefined) out.detail = s.detail;
  if (step.rows !== undefined) out.rows = step.rows;
  if (step.ms !== undefined) out.ms = Math.round(step.ms * 1000) / 1000;
  const children = (step as { children?: (FilterStep | TermStep)[] }).children;
  if (children !== undefined && children.length > 0) out.children = children.map(printStep);
  return out;
}

/** The root's `op` in a plan printed for a restricted scope: the window, whichever path was taken. */
export const SCOPED_ROOT_OP = "window";

/**
 * The plan printed for a scope that sees some rows or columns (an access role's: docs/api.md "Access control"): its root alone, as `{op: "window", column, detail, rows?, ms?}` — the sort
 * column and the window (`rows a..b by …`), which the request alone decides, and with analyze the
 * window's rows and the time taken. Left out, because the whole table decides them: the steps
 * below (their estimates and counts are over every row, a search term's over every column), the
 * estimates, the stored index and the path taken (`walk`, `sort`, `slice`…, chosen by the table's
 * counts), and the changes a live replica merged.
 */
export function printScoped(root: WindowStep): PrintedStep {
  const keys = root.keys;
  const out: PrintedStep = { op: SCOPED_ROOT_OP, column: root.column, detail: `rows ${root.offset}..${root.offset + root.limit} by ${keys.map((k) => `${k.column} ${k.direction}${k.absolute ? " absolute" : ""}`).join(", ")}` };
  if (root.rows !== undefined) out.rows = root.rows;
  if (root.ms !== undefined) out.ms = Math.round(root.ms * 1000) / 1000;
  return out;
}
