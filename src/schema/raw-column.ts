/**
 * A field of the input as a source read it, before its kind is known (docs/api.md "Any users
 * table: from your data to columns": no field is special, the key included): each row's value with its JSON type (or as CSV
 * text), packed (no JS value per row), and the profile its kind is inferred from (infer.ts). The
 * readers fill it (src/ingest/raw-column.ts); a kind converts it to its typed form (src/kinds:
 * `KINDS[kind].convert`). Here, below both, because both need its shape.
 */
import type { GrowingByteColumn } from "../bits/byte-column.ts";
import type { ColumnProfile } from "./infer.ts";

/** What a row's value was, as read. */
export const RAW = {
  /** JSON null, a missing field, an unquoted empty CSV field. */
  NULL: 0,
  /** A JSON number (in `numbers`). */
  NUMBER: 1,
  /** A JSON string (in `strings`). */
  STRING: 2,
  /** A JSON boolean (1 or 0 in `numbers`). */
  BOOLEAN: 3,
  /** A JSON object or array (its compact JSON text in `strings`). */
  OBJECT: 4,
  /** A CSV field (its text in `strings`; a quoted empty field is the empty text): typed only by the column's kind. */
  TEXT: 5,
} as const;

/** A column being read: per row a tag ({@link RAW}), a number slot and a string slot. */
export interface RawColumn {
  /** The field's name: a column id (`[A-Za-z_][A-Za-z0-9_]{0,63}`, checked by the reader). */
  id: string;
  /** Rows so far. */
  count: number;
  /** Per row: what the value was; grows by doubling. */
  tags: Uint8Array;
  /**
   * Per row: the number or boolean (0/1) when that is what it was; for a string (or CSV text
   * counted as one) the date or date-time it parsed as while the profile tested it
   * (schema/infer.ts `allStringsAre`), else NaN. Same length as `tags`.
   */
  numbers: Float64Array;
  /** Per row: the string, JSON text or CSV text (empty for the other tags), UTF-8. */
  strings: GrowingByteColumn;
  /**
   * Per row of a string (or CSV text counted as one) while the profile tracks the distinct
   * values (`profile.distinct` not null): 1 + the value's index among them, so that an enum is
   * converted without comparing strings again (src/kinds/convert.ts); 0 for a string counted
   * otherwise. Meaningless for the other tags, and once the profile stops tracking. Same length
   * as `tags`.
   */
  distinctCodes: Uint8Array;
  profile: ColumnProfile;
}
