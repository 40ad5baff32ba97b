/**
 * Column kind inference (docs/api.md "Any users table: from your data to columns"): without a schema file, a
 * column's kind comes from all of its non-null values — all numbers → `number`; all
 * `YYYY-MM-DD` → `date`; all ISO 8601 date-times → `datetime`; all `true`/`false` → `boolean`;
 * objects or arrays → `json`; other strings → `enum` when there are at most 32 distinct values,
 * none of them empty, and at most one distinct value per 10 rows, else `text`. The key column's
 * kind is `number` when all its values are numbers, else `text` ({@link inferKeyKind}).
 *
 * A {@link ColumnProfile} is fed every value as it is read (one pass, constant memory per
 * column: the distinct strings are tracked up to 33), then {@link inferKind} decides.
 * JSON values keep their JSON type (the string "42" is a string); CSV fields are text, and
 * are classified by their syntax (`42` is a number, `TRUE` a boolean, `{"a":1}` an object).
 */
import { collator } from "../collation/collation.ts";
import { type ColumnKind, MAX_INFERRED_ENUM_VALUES, MIN_ROWS_PER_ENUM_VALUE } from "./kinds.ts";
import { JSON_NUMBER, parseBooleanText, parseDate, parseDateTime, parseDateTimeUtf8, parseDateUtf8 } from "./values.ts";

/** Counts of what a column's values were, as read. */
export interface ColumnProfile {
  /** Null values (JSON null, a missing field, an empty CSV field). */
  nulls: number;
  /** JSON numbers, or CSV fields in the JSON number grammar. */
  numbers: number;
  /** JSON booleans, or CSV fields `true`/`false` in any case. */
  booleans: number;
  /** JSON objects and arrays, or CSV fields that are a JSON object or array. */
  objects: number;
  /** Strings (of JSON, or CSV fields that are none of the above). */
  strings: number;
  /** Of the strings: those that are a date (`YYYY-MM-DD`), and those that are a date-time. */
  dates: number;
  datetimes: number;
  /**
   * Distinct strings seen, each with its index in the order first seen, while there are at most
   * {@link MAX_INFERRED_ENUM_VALUES}; null once there are more.
   */
  distinct: Map<string, number> | null;
  /**
   * The same distinct strings as UTF-8, by index (what {@link profileUtf8} compares a value's
   * bytes with, without a JS string); emptied when `distinct` becomes null.
   */
  distinctUtf8: Uint8Array[];
  /**
   * The index of the distinct value counted last: after a string is counted while `distinct` is
   * not null, that string's index (the readers keep it per row: ingest/raw-column.ts
   * `distinctCodes`); compared first, as runs of one value are common.
   */
  lastDistinct: number;
  /** True when the values came as CSV text (untyped) rather than JSON values. */
  fromText: boolean;
}

/** A profile of no values. */
export function emptyProfile(): ColumnProfile {
  return { nulls: 0, numbers: 0, booleans: 0, objects: 0, strings: 0, dates: 0, datetimes: 0, distinct: new Map(), distinctUtf8: [], lastDistinct: 0, fromText: false };
}

/**
 * Counts one string value (dates and date-times are strings of a known shape). A column can still
 * be a date (or datetime) column only while every string so far was one, so a string is tested
 * only then.
 * @returns the value's day number when it was tested and is a date, its milliseconds when it was
 *   tested and is a date-time, else NaN: while {@link allStringsAre} holds for a kind, every
 *   string's parsed value was returned, and the conversion reuses them (src/kinds/convert.ts)
 */
function addString(profile: ColumnProfile, value: string): number {
  const canBeDate = profile.dates === profile.strings;
  const canBeDateTime = profile.datetimes === profile.strings;
  profile.strings++;
  let parsed = Number.NaN;
  if (canBeDate && value.length === 10) parsed = parseDate(value);
  if (!Number.isNaN(parsed)) profile.dates++;
  else if (canBeDateTime && value.length >= 16) {
    parsed = parseDateTime(value);
    if (!Number.isNaN(parsed)) profile.datetimes++;
  }
  const distinct = profile.distinct;
  if (distinct !== null) {
    const known = distinct.get(value);
    if (known !== undefined) profile.lastDistinct = known;
    else if (distinct.size === MAX_INFERRED_ENUM_VALUES) dropDistinct(profile);
    else {
      profile.lastDistinct = distinct.size;
      distinct.set(value, distinct.size);
      profile.distinctUtf8.push(encoder.encode(value));
    }
  }
  return parsed;
}

const encoder = new TextEncoder();
const decoder = new TextDecoder();

/** More distinct strings than an inferred enum may have: they are no longer tracked. */
function dropDistinct(profile: ColumnProfile): void {
  profile.distinct = null;
  profile.distinctUtf8 = [];
}

/** True when `a` holds exactly the bytes `bytes[from .. to)`. */
function sameBytes(a: Uint8Array, bytes: Uint8Array, from: number, to: number): boolean {
  if (a.length !== to - from) return false;
  for (let k = 0; k < a.length; k++) if (a[k] !== bytes[from + k]) return false;
  return true;
}

/**
 * Counts one string value given as its UTF-8 bytes `bytes[from .. to)` (well-formed): exactly
 * what {@link profileJson} does for the decoded string, without decoding it — the date and
 * date-time tests read the bytes, and the distinct values are compared as bytes (a JS string is
 * made only for a new distinct value, at most 33 times a column).
 * @returns as {@link profileJson} for that string
 */
export function profileUtf8(profile: ColumnProfile, bytes: Uint8Array, from: number, to: number): number {
  const canBeDate = profile.dates === profile.strings;
  const canBeDateTime = profile.datetimes === profile.strings;
  profile.strings++;
  const length = to - from;
  let parsed = Number.NaN;
  if (canBeDate && length === 10) parsed = parseDateUtf8(bytes, from, to);
  if (!Number.isNaN(parsed)) profile.dates++;
  else if (canBeDateTime && length >= 16) {
    parsed = parseDateTimeUtf8(bytes, from, to);
    if (!Number.isNaN(parsed)) profile.datetimes++;
  }
  if (profile.distinct !== null) {
    const known = profile.distinctUtf8;
    if (!(profile.lastDistinct < known.length && sameBytes(known[profile.lastDistinct], bytes, from, to))) {
      let found = -1;
      for (let k = 0; k < known.length; k++) {
        if (sameBytes(known[k], bytes, from, to)) {
          found = k;
          break;
        }
      }
      if (found >= 0) profile.lastDistinct = found;
      else if (known.length === MAX_INFERRED_ENUM_VALUES) dropDistinct(profile);
      else {
        profile.distinct.set(decoder.decode(bytes.subarray(from, to)), known.length);
        profile.lastDistinct = known.length;
        // a copy (a Buffer's slice would be a view)
        known.push(Uint8Array.prototype.slice.call(bytes, from, to));
      }
    }
  }
  return parsed;
}

/**
 * True when every string of the profiled column was a date (`kind` "date") or a date-time
 * ("datetime"): then the value {@link profileJson} / {@link profileText} returned for each string
 * is its parsed day number or milliseconds.
 */
export function allStringsAre(profile: ColumnProfile, kind: "date" | "datetime"): boolean {
  return (kind === "date" ? profile.dates : profile.datetimes) === profile.strings;
}

/**
 * Counts one JSON value of the column (`undefined`, a missing field, counts as null).
 * @returns for a string, what {@link addString} returns (its parsed date or date-time, or NaN); else NaN
 */
export function profileJson(profile: ColumnProfile, value: unknown): number {
  if (value === null || value === undefined) profile.nulls++;
  else if (typeof value === "number") profile.numbers++;
  else if (typeof value === "boolean") profile.booleans++;
  else if (typeof value === "string") return addString(profile, value);
  else profile.objects++;
  return Number.NaN;
}

/** True when CSV text is a JSON object or array (`{…}` or `[…]` that parses). */
export function isJsonContainerText(text: string): boolean {
  const first = text.charCodeAt(0);
  // '{' or '['
  if (first !== 123 && first !== 91) return false;
  try {
    const value: unknown = JSON.parse(text);
    return typeof value === "object" && value !== null;
  } catch {
    return false;
  }
}

/**
 * Counts one CSV field of the column. PostgreSQL's CSV rule: an unquoted empty field is null, a
 * quoted one (`""`) is the empty string; otherwise quoting changes nothing.
 * @param quoted whether the field was quoted in the file
 * @returns for a field counted as a string, what {@link addString} returns; else NaN
 */
export function profileText(profile: ColumnProfile, text: string, quoted = false): number {
  profile.fromText = true;
  if (text === "") {
    if (!quoted) {
      profile.nulls++;
      return Number.NaN;
    }
    return addString(profile, text);
  }
  if (JSON_NUMBER.test(text)) profile.numbers++;
  else if (parseBooleanText(text) >= 0) profile.booleans++;
  else if (isJsonContainerText(text)) profile.objects++;
  else return addString(profile, text);
  return Number.NaN;
}

/** What {@link inferKind} decides: the kind, and an inferred enum's values in collation order (marked inferred). */
export interface InferredKind {
  kind: ColumnKind;
  values?: string[];
  /** True on an enum whose values were inferred (kinds.ts `ColumnSpec.inferred`). */
  inferred?: true;
}

/**
 * The kind of a column from its profile (docs/api.md rules, see the module comment).
 * @param rows rows in the dataset (an enum has at most one distinct value per 10 of them)
 * @returns the kind; for an enum its values in collation order (`Intl.Collator` "en", base,
 *   numeric). A column with no non-null value is `text`. Values of another type than the kind
 *   decided (a number among strings, say) are refused when the column is built, not here.
 */
export function inferKind(profile: ColumnProfile, rows: number): InferredKind {
  const { numbers, booleans, objects, strings, dates, datetimes } = profile;
  const nonNull = numbers + booleans + objects + strings;
  if (nonNull === 0) return { kind: "text" };
  // Objects or arrays make it json, which keeps every value as given; CSV text that is not JSON
  // (a plain string) cannot be kept so: such a column is text.
  if (objects > 0 && !(profile.fromText && strings > 0)) return { kind: "json" };
  if (numbers === nonNull) return { kind: "number" };
  if (booleans === nonNull) return { kind: "boolean" };
  if (strings === nonNull && dates === nonNull) return { kind: "date" };
  if (strings === nonNull && datetimes === nonNull) return { kind: "datetime" };
  const distinct = profile.distinct;
  // An enum's values are non-empty strings (as a schema file declares them): "" makes text.
  if (strings === nonNull && distinct !== null && distinct.size * MIN_ROWS_PER_ENUM_VALUE <= rows && !distinct.has("")) {
    return { kind: "enum", values: [...distinct.keys()].sort(collator.compare), inferred: true };
  }
  return { kind: "text" };
}

/**
 * The kind of the key column from its profile (docs/api.md "Any users table: from your data to columns", the key):
 * `number` when every non-null value is a number (CSV: in the JSON number grammar), else `text`
 * (also for a column without a value). Values that do not fit are refused when it is converted.
 */
export function inferKeyKind(profile: ColumnProfile): "number" | "text" {
  return allNumbers(profile) ? "number" : "text";
}

/** True when the profile counted a value and every non-null value was a number (CSV: in the JSON number grammar). */
export function allNumbers(profile: ColumnProfile): boolean {
  const nonNull = profile.numbers + profile.booleans + profile.objects + profile.strings;
  return nonNull > 0 && profile.numbers === nonNull;
}
