/**
 * A column beyond the seed's four as the readers collect it, before its kind is known: each
 * row's value with its JSON type (or as CSV text), packed (no JS value per row), plus the
 * profile its kind is inferred from (schema/infer.ts). Once every record is read, the column is
 * converted to its kind's typed form by its kind (src/kinds: `KINDS[kind].convert`); a value that
 * does not fit the kind stops the build with the record's line.
 */
import { appendString, type GrowingByteColumn, growingByteColumn } from "../bits/byte-column.ts";
import { type ColumnProfile, emptyProfile, profileJson, profileText } from "../schema/infer.ts";

/** What a row's value was, as read. */
export const RAW = {
  /** JSON null, a missing field, an empty CSV field. */
  NULL: 0,
  /** A JSON number (in `numbers`). */
  NUMBER: 1,
  /** A JSON string (in `strings`). */
  STRING: 2,
  /** A JSON boolean (1 or 0 in `numbers`). */
  BOOLEAN: 3,
  /** A JSON object or array (its JSON text in `strings`). */
  OBJECT: 4,
  /** A CSV field (its text in `strings`): typed only by the column's kind. */
  TEXT: 5,
} as const;

/** A column being read: per row a tag ({@link RAW}), a number slot and a string slot. */
export interface RawColumn {
  id: string;
  /** Rows so far. */
  count: number;
  /** Per row: what the value was; grows by doubling. */
  tags: Uint8Array;
  /**
   * Per row: the number or boolean (0/1) when that is what it was; for a string (or CSV text
   * counted as one) the date or date-time it parsed as while the profile tested it
   * (schema/infer.ts `allStringsAre`), else NaN.
   */
  numbers: Float64Array;
  /** Per row: the string, JSON text or CSV text (empty for the other tags), UTF-8. */
  strings: GrowingByteColumn;
  profile: ColumnProfile;
}

/** An empty raw column named `id`, with room for `rows` rows. */
export function rawColumn(id: string, rows = 1024): RawColumn {
  return { id, count: 0, tags: new Uint8Array(rows), numbers: new Float64Array(rows), strings: growingByteColumn(rows, rows * 8), profile: emptyProfile() };
}

/** Makes room for one more row. */
function reserveRow(column: RawColumn): number {
  const row = column.count;
  if (row === column.tags.length) {
    const tags = new Uint8Array(row * 2);
    tags.set(column.tags);
    column.tags = tags;
    const numbers = new Float64Array(row * 2);
    numbers.set(column.numbers);
    column.numbers = numbers;
  }
  column.count = row + 1;
  return row;
}

/**
 * Adds the next row's JSON value (`undefined`: the field is missing, a null). A number of
 * magnitude 2^53 or more must have been checked against its literal by the reader first
 * (schema/values.ts `isExactLiteral`): a parsed double no longer tells whether it was rounded.
 * @throws RangeError when the strings exceed 4 GiB
 */
export function addJsonValue(column: RawColumn, value: unknown): void {
  const row = reserveRow(column);
  const parsed = profileJson(column.profile, value);
  let text = "";
  if (value === null || value === undefined) column.tags[row] = RAW.NULL;
  else if (typeof value === "number") {
    column.tags[row] = RAW.NUMBER;
    column.numbers[row] = value;
  } else if (typeof value === "boolean") {
    column.tags[row] = RAW.BOOLEAN;
    column.numbers[row] = value ? 1 : 0;
  } else if (typeof value === "string") {
    column.tags[row] = RAW.STRING;
    column.numbers[row] = parsed;
    text = value;
  } else {
    column.tags[row] = RAW.OBJECT;
    text = JSON.stringify(value);
  }
  appendString(column.strings, text);
}

/**
 * Adds the next row's CSV field (`""` is null).
 * @throws RangeError when the strings exceed 4 GiB
 */
export function addTextValue(column: RawColumn, text: string): void {
  const row = reserveRow(column);
  column.numbers[row] = profileText(column.profile, text);
  column.tags[row] = text === "" ? RAW.NULL : RAW.TEXT;
  appendString(column.strings, text);
}
