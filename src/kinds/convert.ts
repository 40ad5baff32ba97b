/**
 * From raw values (schema/raw-column.ts: each row's JSON value or CSV text) to a kind's typed
 * form: the conversions the kind modules use (kind.ts `convert`), each refusing the first value
 * that does not fit with its row and a reason (docs/api.md "Any users table: the schema", values).
 */
import { appendBytes, appendString, type ByteColumn, finishByteColumn, growingByteColumn, stringAt } from "../bits/byte-column.ts";
import { RAW, type RawColumn } from "../schema/raw-column.ts";
import { allStringsAre } from "../schema/infer.ts";
import type { ColumnSpec } from "../schema/kinds.ts";
import { formatNumber, parseBooleanText, show } from "../schema/values.ts";

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

/**
 * How the kinds of one double-valued layout (kind.ts `ValueType` `double`) read and make their
 * converted columns: {@link DOUBLES} (number, date, datetime) and {@link CODES} (enum, boolean).
 */
export interface DoublesLayout {
  /** Each row's stored value in input order, NaN for null; length n (the column's own array for {@link DOUBLES}). */
  storedValues(converted: ConvertedColumn): Float64Array;
  /** Row `row`'s stored value, NaN for null. */
  valueAt(converted: ConvertedColumn, row: number): number;
  /** The converted column of `spec` holding the stored values `stored` (NaN for null; `nulls` of them; the array is kept). */
  fromDoubles(spec: ColumnSpec, stored: Float64Array, nulls: number): ConvertedColumn;
  /** A build's relative work for the column (store/build.ts spreads columns by it): an order of its doubles. */
  buildWork(converted: ConvertedColumn): number;
}

type Doubles = Extract<ConvertedColumn, { values: Float64Array }>;
type Codes = Extract<ConvertedColumn, { codes: Uint8Array }>;

/** Doubles kept as they are (number, date as day numbers, datetime as UTC ms). */
export const DOUBLES: DoublesLayout = {
  storedValues: (c) => (c as Doubles).values,
  valueAt: (c, row) => (c as Doubles).values[row],
  fromDoubles: (spec, stored, nulls) => ({ kind: spec.kind as Doubles["kind"], values: stored, nulls }),
  buildWork: (c) => (c as Doubles).values.length * 4,
};

/** Value codes (enum: i + 1 for `values[i]`; boolean: 1 false, 2 true), 0 for null, stored as the code's double. */
export const CODES: DoublesLayout = {
  storedValues(c) {
    const codes = (c as Codes).codes;
    const out = new Float64Array(codes.length);
    for (let i = 0; i < codes.length; i++) out[i] = codes[i] === 0 ? Number.NaN : codes[i];
    return out;
  },
  valueAt(c, row) {
    const code = (c as Codes).codes[row];
    return code === 0 ? Number.NaN : code;
  },
  fromDoubles(spec, stored, nulls) {
    const codes = new Uint8Array(stored.length);
    for (let i = 0; i < stored.length; i++) codes[i] = Number.isNaN(stored[i]) ? 0 : stored[i];
    // an enum's values are its spec's; a boolean's are false and true
    return { kind: spec.kind as Codes["kind"], codes, values: [...(spec.values ?? BOOLEAN_VALUES)], nulls };
  },
  // a counting pass: codes are bytes
  buildWork: (c) => (c as Codes).codes.length,
};

/** The value names of a boolean column, code i + 1 for `BOOLEAN_VALUES[i]`. */
export const BOOLEAN_VALUES: readonly string[] = ["false", "true"];

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
 * What every conversion starts from: the row count, the raw tags, numbers and strings (the
 * strings finished into a ByteColumn), and a reason-raising function that throws ConversionError
 * with the column and the kind named.
 */
function begin(column: RawColumn, spec: ColumnSpec) {
  const fail = (row: number, reason: string): never => {
    throw new ConversionError(row, `column "${column.id}" (${spec.kind}): ${reason}`);
  };
  return { n: column.count, tags: column.tags, numbers: column.numbers, strings: finishByteColumn(column.strings), fail };
}

/**
 * Doubles (`number`, `date` as day numbers, `datetime` as UTC ms; NaN for null): JSON numbers
 * (number only), or text read by `parse` (CSV fields; JSON strings for dates), refused with `explain`.
 * A column of JSON numbers only is returned as a view of the raw column's numbers.
 * @throws ConversionError for the first value that does not fit
 */
export function convertDoubles(column: RawColumn, spec: ColumnSpec, parse: (text: string) => number, explain: (text: string) => string): ConvertedColumn {
  // Dates and date-times the profile already parsed (every string was one) are not parsed again.
  const parsed = spec.kind !== "number" && allStringsAre(column.profile, spec.kind as "date" | "datetime");
  const { n, tags, numbers, strings, fail } = begin(column, spec);
  if (spec.kind === "number" && !column.profile.fromText && column.profile.numbers === n) {
    // Every row a JSON number: the read values themselves, when all are finite (no copy).
    let finite = true;
    for (let row = 0; row < n && finite; row++) finite = numbers[row] - numbers[row] === 0;
    if (finite) return { kind: "number", values: numbers.subarray(0, n), nulls: 0 };
  }
  let nulls = 0;
  const values = new Float64Array(n);
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
      if (parsed && !Number.isNaN(numbers[row])) {
        values[row] = numbers[row];
        continue;
      }
      const text = stringAt(strings, row);
      const x = parse(text);
      if (Number.isNaN(x)) fail(row, explain(text));
      values[row] = x;
    } else {
      fail(row, `${typeName(tag)} is not a ${spec.kind === "number" ? "JSON number" : `${spec.kind} string`}`);
    }
  }
  return { kind: spec.kind as "number" | "date" | "datetime", values, nulls };
}

/**
 * Booleans as codes (0 null, 1 false, 2 true): JSON booleans, or `true`/`false` in any case in CSV.
 * @throws ConversionError for the first value that does not fit
 */
export function convertBoolean(column: RawColumn, spec: ColumnSpec): ConvertedColumn {
  const { n, tags, numbers, strings, fail } = begin(column, spec);
  let nulls = 0;
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
  return { kind: "boolean", codes, values: [...BOOLEAN_VALUES], nulls };
}

/** Enums of at most this many values are matched by comparing with each (no hash). */
const FEW_VALUES = 8;

/** 32-bit FNV-1a of `bytes[from .. to)`: how {@link convertEnum} finds a value's code without decoding it. */
function fnv1a(bytes: Uint8Array, from: number, to: number): number {
  let h = 0x811c9dc5;
  for (let p = from; p < to; p++) h = Math.imul(h ^ bytes[p], 0x01000193);
  return h >>> 0;
}

/**
 * An enum's values as codes (0 null, i + 1 for `spec.values[i]`): strings equal to a value.
 * Each row's bytes are matched against the values' UTF-8 (the last value found first, then each
 * of a few values, or by hash), without a JS string per row.
 * @throws ConversionError for the first value outside `spec.values`
 */
export function convertEnum(column: RawColumn, spec: ColumnSpec): ConvertedColumn {
  const { n, tags, numbers, strings, fail } = begin(column, spec);
  let nulls = 0;
  const values = spec.values ?? [];
  const encoded = values.map((v) => new TextEncoder().encode(v));
  const count = encoded.length;
  // hash → the codes of the values with that hash (for enums of more than a few values)
  const codesByHash = new Map<number, number[]>();
  for (let i = 0; i < count; i++) {
    const h = fnv1a(encoded[i], 0, encoded[i].length);
    const list = codesByHash.get(h);
    if (list === undefined) codesByHash.set(h, [i + 1]);
    else list.push(i + 1);
  }
  const { bytes, offsets } = strings;
  const codes = new Uint8Array(n);
  // While the reader tracked the column's distinct values (at most 32), each string row carries
  // its value's index among them: its code is looked up, not compared again.
  const distinct = column.profile.distinct;
  const tracked = distinct !== null ? column.distinctCodes : null;
  const codeOfDistinct = new Uint8Array(distinct === null ? 1 : distinct.size + 1);
  if (distinct !== null) for (const [value, index] of distinct) codeOfDistinct[index + 1] = values.indexOf(value) + 1;
  // the code found last: compared first (runs of one value are common)
  let last = 0;
  for (let row = 0; row < n; row++) {
    const tag = tags[row];
    if (tag === RAW.NULL) {
      nulls++;
      continue;
    }
    if (tag !== RAW.STRING && tag !== RAW.TEXT) fail(row, `${typeName(tag)} is not one of its values`);
    if (tracked !== null) {
      const known = codeOfDistinct[tracked[row]];
      if (known !== 0) {
        codes[row] = known;
        continue;
      }
    }
    const from = offsets[row];
    const length = offsets[row + 1] - from;
    let code = 0;
    if (count <= FEW_VALUES) {
      // inlined for speed: each value's bytes compared, the last code's first
      for (let i = 0; i < count && code === 0; i++) {
        const c = i === 0 ? last : i <= last ? i - 1 : i;
        const value = encoded[c];
        if (value.length !== length) continue;
        let same = true;
        for (let b = 0; same && b < length; b++) same = value[b] === bytes[from + b];
        if (same) code = c + 1;
      }
    } else {
      const candidates = codesByHash.get(fnv1a(bytes, from, from + length));
      if (candidates !== undefined) {
        for (const c of candidates) {
          const value = encoded[c - 1];
          if (value.length !== length) continue;
          let same = true;
          for (let b = 0; same && b < length; b++) same = value[b] === bytes[from + b];
          if (same) code = c;
        }
      }
    }
    if (code === 0) {
      const text = stringAt(strings, row);
      fail(row, `${show(text)} is not one of its values (${values.map((v) => JSON.stringify(v)).join(", ")})`);
    }
    codes[row] = code;
    last = code - 1;
  }
  return { kind: "enum", codes, values: [...values], nulls };
}

/**
 * Strings (JSON strings or CSV text), null apart from "".
 * @throws ConversionError for the first value that is not a string
 */
export function convertText(column: RawColumn, spec: ColumnSpec): ConvertedColumn {
  const { n, tags, numbers, strings, fail } = begin(column, spec);
  let nulls = 0;
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

/**
 * Any JSON value kept as its compact JSON text (`null` for null); CSV text must be JSON.
 * @throws ConversionError for the first CSV field that is not JSON
 */
export function convertJson(column: RawColumn, spec: ColumnSpec): ConvertedColumn {
  const { n, tags, numbers, strings, fail } = begin(column, spec);
  let nulls = 0;
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
    else if (tag === RAW.OBJECT) {
      // already compact JSON text: its bytes as they are
      appendBytes(texts, strings.bytes, strings.offsets[row], strings.offsets[row + 1]);
      continue;
    } else {
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
