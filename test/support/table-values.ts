/**
 * Test helper: what a read (ingest/records.ts `RawColumns`) or a decided table (store/input.ts
 * `TableInput`) holds, as plain JS records, to compare with literal expectations.
 */
import { stringAt } from "../../src/bits/byte-column.ts";
import { RAW, type RawColumn } from "../../src/schema/raw-column.ts";
import type { RawColumns } from "../../src/ingest/records.ts";
import type { ConvertedColumn } from "../../src/kinds/convert.ts";
import { formatDate, formatDateTime } from "../../src/schema/values.ts";
import type { TableInput } from "../../src/store/input.ts";

/** Row `row` of a raw column as read: null, a number, a boolean, a string (JSON string or CSV text), or an object/array (parsed back from its JSON text). */
export function rawValue(column: RawColumn, row: number): unknown {
  const tag = column.tags[row];
  const view = { bytes: column.strings.bytes, offsets: column.strings.offsets };
  if (tag === RAW.NULL) return null;
  if (tag === RAW.NUMBER) return column.numbers[row];
  if (tag === RAW.BOOLEAN) return column.numbers[row] === 1;
  if (tag === RAW.OBJECT) return JSON.parse(stringAt(view, row));
  return stringAt(view, row);
}

/** Every row of a read as a record of every column, in column order (null where the row has none). */
export function rawRecords(raw: RawColumns): Record<string, unknown>[] {
  const out: Record<string, unknown>[] = [];
  for (let row = 0; row < raw.rows; row++) {
    const record: Record<string, unknown> = {};
    for (const column of raw.columns) Object.defineProperty(record, column.id, { value: rawValue(column, row), enumerable: true, writable: true, configurable: true });
    out.push(record);
  }
  return out;
}

/** Row `row` of a converted column in its kind's output form (a date `YYYY-MM-DD`, a date-time ISO, json parsed). */
export function convertedValue(values: ConvertedColumn, row: number): unknown {
  switch (values.kind) {
    case "number":
      return Number.isNaN(values.values[row]) ? null : values.values[row];
    case "date":
      return Number.isNaN(values.values[row]) ? null : formatDate(values.values[row]);
    case "datetime":
      return Number.isNaN(values.values[row]) ? null : formatDateTime(values.values[row]);
    case "enum":
      return values.codes[row] === 0 ? null : values.values[values.codes[row] - 1];
    case "boolean":
      return values.codes[row] === 0 ? null : values.codes[row] === 2;
    case "text":
      return values.isNull[row] ? null : stringAt(values.strings, row);
    case "json":
      return JSON.parse(stringAt(values.texts, row));
  }
}

/** Every row of a table as a record of every column in table order (own properties, so `__proto__` is a field). */
export function tableRecords(table: TableInput): Record<string, unknown>[] {
  const out: Record<string, unknown>[] = [];
  for (let row = 0; row < table.rows; row++) {
    const record: Record<string, unknown> = {};
    for (const { spec, values } of table.columns) Object.defineProperty(record, spec.id, { value: convertedValue(values, row), enumerable: true, writable: true, configurable: true });
    out.push(record);
  }
  return out;
}
