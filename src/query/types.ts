/**
 * The one normalized query that both GET and POST /api/users parse into, and the executor
 * answers (STYLE.md: "one normalized query that both GET and POST parse into").
 */

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

/** AG Grid text filter types (docs/api.md, "text"). Compared on folded strings. */
export type TextOp =
  | "contains"
  | "notContains"
  | "equals"
  | "notEqual"
  | "startsWith"
  | "endsWith"
  | "blank"
  | "notBlank";

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
 * A test on one column beyond the seed's four, in the terms its kind evaluates (src/kinds):
 * what the operator registry (src/kinds/operators.ts) compiles an AG Grid model or a GET
 * `filter[col]` into. Values are the column's stored doubles (numbers; day numbers for `date`;
 * UTC milliseconds for `datetime`; codes for `enum` and `boolean`, see src/kinds).
 * - `range`: non-null values in the interval (`lo`/`hi` may be ±Infinity; open ends excluded);
 *   `negate`: the non-null values outside it (null never matches either: AG Grid's rule that
 *   null passes only `blank`).
 * - `null`: the null rows (`negate`: the non-null ones).
 * - `text`: an AG Grid text condition on the value's output string, folded (docs/api.md
 *   "Filtering on any column"); null passes only `notEqual`, `notContains` and `blank`.
 * - `set`: the value's folded output string is one of `values` (folded, distinct); `nulls`:
 *   null rows match too.
 */
export type ColumnTest =
  | { op: "range"; lo: number; loOpen: boolean; hi: number; hiOpen: boolean; negate: boolean }
  | { op: "null"; negate: boolean }
  | { op: "text"; type: TextOp; value: string }
  | { op: "set"; values: string[]; nulls: boolean };

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
 * - `and` / `or`: all / any of `children` (at least one child).
 */
export type Predicate =
  | { kind: "text"; column: SeedColumnId; op: TextOp; value: string }
  | { kind: "number"; column: "id"; op: NumberOp; value: number; valueTo?: number }
  | { kind: "set"; column: SeedColumnId; values: string[] }
  | { kind: "column"; column: string; test: ColumnTest }
  | { kind: "status"; codes: number[] }
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
