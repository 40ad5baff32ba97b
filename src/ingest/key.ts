/**
 * The key column as the readers see it, before its kind is decided (docs/api.md "Any users
 * table: from your data to columns", the key): the first duplicate among the values read so far, so that a duplicate on an
 * earlier line wins over a later bad record, and the reason a duplicate is reported with. The
 * key's own checks once its kind is known are the kind's (src/kinds/key.ts).
 */
import { type ByteColumn, stringAt } from "../bits/byte-column.ts";
import { type Duplicate, firstDuplicateNumber, firstDuplicateText } from "../bits/duplicates.ts";
import { allNumbers } from "../schema/infer.ts";
import { parseNumberText } from "../schema/values.ts";
import { RAW, type RawColumn } from "../schema/raw-column.ts";
import { show } from "./records.ts";

/** The reason for a duplicate key: `duplicate key 42 (first seen on line 7)`, a text key quoted. */
export function duplicateKeyReason(value: number | string, firstLine: number): string {
  return `duplicate key ${typeof value === "string" ? show(value) : String(value)} (first seen on line ${firstLine})`;
}

/**
 * The first duplicate among the first `rows` values of the key's raw column, as far as they can
 * be told before the key's kind is decided (the reader uses it so that a duplicate on an earlier
 * line wins over a later bad record): by number when every value so far is one (a CSV field in
 * the JSON number grammar is parsed), else by string. Null when there is none, or when the values
 * do not all fit that reading (the conversion will say why).
 */
export function rawKeyDuplicate(column: RawColumn, rows: number): { duplicate: Duplicate; value: number | string } | null {
  const n = Math.min(rows, column.count);
  const { tags, numbers, strings } = column;
  const view: ByteColumn = { bytes: strings.bytes, offsets: strings.offsets.subarray(0, n + 1) };
  if (allNumbers(column.profile)) {
    const values = new Float64Array(n);
    for (let row = 0; row < n; row++) {
      const tag = tags[row];
      if (tag === RAW.NUMBER) values[row] = numbers[row];
      else if (tag === RAW.TEXT) {
        values[row] = parseNumberText(stringAt(view, row));
        if (Number.isNaN(values[row])) return null;
      } else values[row] = Number.NaN;
    }
    const duplicate = firstDuplicateNumber(values, n);
    return duplicate === null ? null : { duplicate, value: values[duplicate.index] + 0 };
  }
  const isNull = new Uint8Array(n);
  for (let row = 0; row < n; row++) if (tags[row] !== RAW.STRING && tags[row] !== RAW.TEXT) isNull[row] = 1;
  const duplicate = firstDuplicateText(view, n, isNull);
  return duplicate === null ? null : { duplicate, value: stringAt(view, duplicate.index) };
}
