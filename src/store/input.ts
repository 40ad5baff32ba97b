/**
 * What a store build takes: a table whose every column is converted to its kind, and which of
 * them is the key (docs/api.md "Any users table: from your data to columns"). Every source — a data file, a PostgreSQL
 * table or query, the generator of the default data — produces one; the build knows nothing of
 * where it came from.
 */
import type { ConvertedColumn } from "../kinds/convert.ts";
import type { ColumnSpec } from "../schema/kinds.ts";

/** One column as a build takes it: its spec and its values converted to its kind, rows in input order. */
export interface ColumnInput {
  spec: ColumnSpec;
  /** The column's values, n rows in input order (src/kinds/convert.ts). */
  values: ConvertedColumn;
}

/**
 * A table as a store build takes it.
 * - `columns` holds every column kept (none excluded), in schema order: the input's field order
 *   (a CSV's header order, first-seen order for JSON), the key wherever it stands.
 * - The key column (`key`) is of kind `number` or `text`; its values are non-null and unique
 *   (a number: finite, |n| ≤ 2^53; a text: a non-empty string of at most 256 characters), as the
 *   source checked them (docs/api.md "Any users table: from your data to columns", "The key").
 */
export interface TableInput {
  /** Rows in the table, n ≥ 0 (0 only when the source allowed an empty table). */
  rows: number;
  /** Every column, in schema order, each of n rows in input order. */
  columns: ColumnInput[];
  /** The key column's id: one of `columns`. */
  key: string;
}
