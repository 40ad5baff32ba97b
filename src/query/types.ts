/**
 * The one normalized query that both GET and POST /api/users parse into, and the planner and
 * the executor answer (src/engine).
 */

import type { ColumnTest, TextOp } from "../kinds/kind.ts";

export type { ColumnTest, TextOp };

/** A sort direction. */
export type SortDirection = "asc" | "desc";

/**
 * One sort key. An array of them orders rows by the first key, ties by the next, and so on;
 * rows still tied after the last key are ordered by the key column, ascending when the last key
 * is ascending and descending when it is descending (so a one-key descending sort is the exact
 * reverse of the ascending one; docs/api.md "Ordering"). An empty array orders by the key ascending.
 */
export interface SortKey {
  /** A sortable column id of the served schema (any kind but `json`; docs/api.md "Ordering"). */
  column: string;
  direction: SortDirection;
  /**
   * AG Grid's `type: "absolute"` sort: on a number column, order by |value| and, among values of
   * equal |value| (x and -x), by signed value; a descending key reverses that whole order.
   * Ignored on the other kinds (their order has no sign).
   */
  absolute: boolean;
}

/**
 * A row predicate: a tree whose leaves each test one column (docs/api.md "Filter
 * model"), or search.
 * - `column`: a {@link ColumnTest} on one column of the served schema, as the operator registry
 *   (src/kinds/operators.ts) compiled it from an AG Grid model or a GET `filter[col]`.
 * - `search`: the global search (docs/api.md "Global search"): every one of `terms` (non-empty,
 *   split on white space, as given: folded when evaluated) is contained, folded, in some
 *   searchable column's folded output string (every `text` and `enum` column, and the key).
 *   `columns`, when given, names the searchable columns it looks into instead of every one (the
 *   columns an access role sees: docs/api.md "Access control"; ids of searchable columns, in any
 *   order). Never anyone's own filter: facets keep it for every column.
 * - `and` / `or`: all / any of `children` (at least one child).
 */
export type Predicate =
  | { kind: "column"; column: string; test: ColumnTest }
  | { kind: "search"; terms: string[]; columns?: string[] }
  | { kind: "and"; children: Predicate[] }
  | { kind: "or"; children: Predicate[] };

/**
 * A normalized listing query: rows matching `filter` (all rows when null), ordered by `sort`,
 * then the row window [offset, offset + limit).
 */
export interface Query {
  filter: Predicate | null;
  sort: SortKey[];
  /** First row of the window, in rows, >= 0 (a safe integer). */
  offset: number;
  /** Rows in the window, >= 0 (at most the configured max page size once validated). */
  limit: number;
}
