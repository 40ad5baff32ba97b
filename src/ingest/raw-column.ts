/**
 * A column beyond the seed's four as the readers collect it, before its kind is known: each
 * row's value with its JSON type (or as CSV text), packed (no JS value per row), plus the
 * profile its kind is inferred from (schema/infer.ts). Once every record is read, the column is
 * converted to its kind's typed form ({@link convertColumn}); a value that does not fit the kind
 * stops the build with the record's line.
 */
import { appendString, type ByteColumn, finishByteColumn, type GrowingByteColumn, growingByteColumn } from "../bits/byte-column.ts";
import { stringAt } from "../bits/byte-column.ts";
import { type ColumnProfile, emptyProfile, profileJson, profileText } from "../schema/infer.ts";
import type { ColumnSpec } from "../schema/kinds.ts";
import {
  explainDate,
  explainDateTime,
  explainNumberText,
  formatNumber,
  parseBooleanText,
  parseDate,
  parseDateTime,
  parseNumberText,
  show,
} from "../schema/values.ts";

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
  /** Per row: the number or boolean (0/1) when that is what it was. */
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
  profileJson(column.profile, value);
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
  profileText(column.profile, text);
  column.tags[row] = text === "" ? RAW.NULL : RAW.TEXT;
  appendString(column.strings, text);
}

/** A column converted to its kind's typed form, rows in input order. */
export type ConvertedColumn =
  /** number, date (day numbers), datetime (ms): NaN is null. */
  | { kind: "number" | "date" | "datetime"; values: Float64Array; nulls: number }
  /** enum (codes: 0 null, i + 1 for values[i]) and boolean (0 null, 1 false, 2 true). */
  | { kind: "enum" | "boolean"; codes: Uint8Array; values: string[]; nulls: number }
  /** text: the strings (UTF-8); `isNull` marks null rows (their string is empty). */
  | { kind: "text"; strings: ByteColumn; isNull: Uint8Array; nulls: number }
  /** json: each row's JSON text, compact (`null` for null). */
  | { kind: "json"; texts: ByteColumn; nulls: number };

/** A value that does not fit its column's kind: the row (input order) and the reason. */
export class ConversionError extends Error {
  constructor(
    readonly row: number,
    readonly reason: string,
  ) {
    super(reason);
    this.name = "ConversionError";
  }
}

/** The JSON type of a raw tag, for a reason. */
function typeName(tag: number): string {
  return tag === RAW.NUMBER ? "a number" : tag === RAW.BOOLEAN ? "a boolean" : tag === RAW.OBJECT ? "an object or array" : "a string";
}

/**
 * Converts a raw column to `spec`'s kind (declared, or inferred from its profile).
 * @throws ConversionError for the first row whose value does not fit: `column "age": "x" is not
 *   a number in JSON syntax`, a JSON string in a number column, a value outside an enum's values…
 */
export function convertColumn(column: RawColumn, spec: ColumnSpec): ConvertedColumn {
  const n = column.count;
  const { tags, numbers } = column;
  const strings = finishByteColumn(column.strings);
  const fail = (row: number, reason: string): never => {
    throw new ConversionError(row, `column "${column.id}" (${spec.kind}): ${reason}`);
  };
  let nulls = 0;
  switch (spec.kind) {
    case "number":
    case "date":
    case "datetime": {
      const values = new Float64Array(n);
      const parse = spec.kind === "number" ? parseNumberText : spec.kind === "date" ? parseDate : parseDateTime;
      const explain = spec.kind === "number" ? explainNumberText : spec.kind === "date" ? explainDate : explainDateTime;
      for (let row = 0; row < n; row++) {
        const tag = tags[row];
        if (tag === RAW.NULL) {
          values[row] = Number.NaN;
          nulls++;
        } else if (tag === RAW.NUMBER && spec.kind === "number") {
          const x = numbers[row];
          if (!Number.isFinite(x)) fail(row, `${x} is not a finite number`);
          values[row] = x;
        } else if (tag === RAW.TEXT || (tag === RAW.STRING && spec.kind !== "number")) {
          const text = stringAt(strings, row);
          const x = parse(text);
          if (Number.isNaN(x)) fail(row, explain(text));
          values[row] = x;
        } else {
          fail(row, `${typeName(tag)} is not a ${spec.kind === "number" ? "JSON number" : `${spec.kind} string`}`);
        }
      }
      return { kind: spec.kind, values, nulls };
    }
    case "boolean": {
      const codes = new Uint8Array(n);
      for (let row = 0; row < n; row++) {
        const tag = tags[row];
        if (tag === RAW.NULL) nulls++;
        else if (tag === RAW.BOOLEAN) codes[row] = numbers[row] + 1;
        else if (tag === RAW.TEXT) {
          const text = stringAt(strings, row);
          const b = parseBooleanText(text);
          if (b < 0) fail(row, `${show(text)} is not true or false`);
          codes[row] = b + 1;
        } else fail(row, `${typeName(tag)} is not a boolean`);
      }
      return { kind: "boolean", codes, values: ["false", "true"], nulls };
    }
    case "enum": {
      const values = spec.values ?? [];
      const codeOf = new Map(values.map((v, i) => [v, i + 1]));
      const codes = new Uint8Array(n);
      for (let row = 0; row < n; row++) {
        const tag = tags[row];
        if (tag === RAW.NULL) nulls++;
        else if (tag === RAW.STRING || tag === RAW.TEXT) {
          const text = stringAt(strings, row);
          const code = codeOf.get(text);
          if (code === undefined) fail(row, `${show(text)} is not one of its values (${values.map((v) => JSON.stringify(v)).join(", ")})`);
          codes[row] = code as number;
        } else fail(row, `${typeName(tag)} is not one of its values`);
      }
      return { kind: "enum", codes, values: [...values], nulls };
    }
    case "text": {
      const isNull = new Uint8Array(n);
      for (let row = 0; row < n; row++) {
        const tag = tags[row];
        if (tag === RAW.NULL) {
          isNull[row] = 1;
          nulls++;
        } else if (tag !== RAW.STRING && tag !== RAW.TEXT) {
          fail(row, `${typeName(tag)} is not a string (give the column the kind json in a schema file to keep mixed values as they are)`);
        }
      }
      return { kind: "text", strings, isNull, nulls };
    }
    case "json": {
      const texts = growingByteColumn(n, strings.bytes.length + n * 4);
      for (let row = 0; row < n; row++) {
        const tag = tags[row];
        let text: string;
        if (tag === RAW.NULL) {
          nulls++;
          text = "null";
        } else if (tag === RAW.NUMBER) text = formatNumber(numbers[row]);
        else if (tag === RAW.BOOLEAN) text = numbers[row] === 1 ? "true" : "false";
        else if (tag === RAW.STRING) text = JSON.stringify(stringAt(strings, row));
        else if (tag === RAW.OBJECT) text = stringAt(strings, row);
        else {
          const source = stringAt(strings, row);
          try {
            text = JSON.stringify(JSON.parse(source));
          } catch {
            return fail(row, `${show(source)} is not JSON`);
          }
        }
        appendString(texts, text);
      }
      return { kind: "json", texts: finishByteColumn(texts), nulls };
    }
  }
}
