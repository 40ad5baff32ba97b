/**
 * The one normalized query that both GET and POST /api/users parse into, and the executor
 * answers (STYLE.md: "one normalized query that both GET and POST parse into").
 */

import type { ColumnTest, TextOp } from "../kinds/kind.ts";

export type { ColumnTest, TextOp };

/** One of the seed's four column ids, whose predicates use the seed's own indexes. */
export type SeedColumnId = "id" | "name" | "email" | "status";

/** A sort direction. */
export type SortDirection = "asc" | "desc";

/**
 * One sort key. An array of them orders rows by the first key, ties by the next, and so on;
 * rows still tied after the last key are ordered by `id`, ascending when the last key is
 * ascending and descending when it is descending (so a one-key descending sort is the exact
 * reverse of the ascending one; docs/api.md "Ordering"). An empty array orders by `id` ascending.
 */
export interface SortKey {
  /** A sortable column id of the served schema (any kind but `json`; docs/api.md "Ordering on any column"). */
  column: string;
  direction: SortDirection;
  /**
   * AG Grid's `type: "absolute"` sort: on `id`, order by |id| and, among ids of equal |id|
   * (x and -x), by signed id; a descending key reverses that whole order. Ignored on the other
   * columns (their order has no sign).
   */
  absolute: boolean;
}

/**
 * AG Grid number filter types (docs/api.md, "number"), plus the inclusive comparisons GET's
 * `filter[id]=10,50` needs. `inRange` is exclusive at both ends (AG Grid's default).
 */
export type NumberOp =
  | "equals"
  | "notEqual"
  | "lessThan"
  | "lessThanOrEqual"
  | "greaterThan"
  | "greaterThanOrEqual"
  | "inRange"
  | "blank"
  | "notBlank";

/**
 * A row predicate: a tree whose leaves each test one column.
 * - `text`: `fold(cell) OP fold(value)` where cell is the column's string (for `id`, `String(id)`;
 *   for `status`, its enum value). `blank` matches a value that is empty or white space only (`cell.trim() === ""`,
 *   AG Grid's `isBlank`); `notBlank` any other; `value` is ignored by both (empty string).
 * - `number`: on `id` only; `valueTo` is set for `inRange` (value < id < valueTo).
 *   `blank` matches nothing (ids are never null), `notBlank` everything.
 * - `set`: the cell equals one of `values` (strings compare folded; `id` compares numerically,
 *   `status` case-insensitively). An empty list matches nothing.
 * - `status`: the row's status code is in `codes` (indexes into STATUS_VALUES).
 * - `column`: a {@link ColumnTest} on a column beyond the seed's four.
 * - `search`: the global search (docs/api.md "Global search"): every one of `terms` (non-empty,
 *   split on white space, as given: folded when evaluated) is contained, folded, in some
 *   searchable column's folded string (`id`, `name`, `email`, `status`, every `text` and `enum`
 *   column). Never anyone's own filter: facets keep it for every column.
 * - `and` / `or`: all / any of `children` (at least one child).
 */
export type Predicate =
  | { kind: "text"; column: SeedColumnId; op: TextOp; value: string }
  | { kind: "number"; column: "id"; op: NumberOp; value: number; valueTo?: number }
  | { kind: "set"; column: SeedColumnId; values: string[] }
  | { kind: "column"; column: string; test: ColumnTest }
  | { kind: "status"; codes: number[] }
  | { kind: "search"; terms: string[] }
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
