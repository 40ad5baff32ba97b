/**
 * Filling a raw column (schema/raw-column.ts: a field of the input as the readers collect it,
 * before its kind is known, with the profile its kind is inferred from). Once every record is
 * read, the column is converted to its kind's typed form by its kind (src/kinds:
 * `KINDS[kind].convert`); a value that does not fit the kind stops the build with the record's
 * line.
 *
 * Values are appended in row order. The NDJSON reader's fast path makes room for a line's rows
 * ({@link roomFor}), writes each value of row `count` itself — its tag, number, string bytes and
 * string end `strings.offsets[count + 1]` — then counts it (`count` and `strings.count` one
 * more); it profiles a value at once only where that is a count, the others once the whole line
 * is known to be good ({@link profileRow}), and undoes them otherwise ({@link rollBack}). The
 * other readers append a profiled value at once ({@link addJsonValue}, {@link addTextValue}).
 */
import { MAX_COLUMN_BYTES, appendString, type GrowingByteColumn, growingByteColumn, reserveValue } from "../bits/byte-column.ts";
import { emptyProfile, profileJson, profileText, profileUtf8 } from "../schema/infer.ts";
import { RAW, type RawColumn } from "../schema/raw-column.ts";

/** An empty raw column named `id`, with room for `rows` rows and `bytes` bytes of strings. */
export function rawColumn(id: string, rows = 1024, bytes = rows * 8): RawColumn {
  const capacity = Math.max(2, rows);
  return {
    id,
    count: 0,
    tags: new Uint8Array(capacity),
    numbers: new Float64Array(capacity),
    strings: growingByteColumn(capacity, Math.max(64, bytes)),
    distinctCodes: new Uint8Array(capacity),
    profile: emptyProfile(),
  };
}

/** Makes room for rows up to `rows` (exclusive), doubling the arrays. */
function reserveRows(column: RawColumn, rows: number): void {
  let capacity = column.tags.length;
  if (rows <= capacity) return;
  while (capacity < rows) capacity *= 2;
  growRows(column, capacity);
}

/**
 * Gives the column's per-row arrays (tags, numbers, distinct codes) room for `capacity` rows
 * exactly, keeping its rows; nothing when they have it already.
 */
export function growRows(column: RawColumn, capacity: number): void {
  if (column.tags.length >= capacity) return;
  const tags = new Uint8Array(capacity);
  tags.set(column.tags.subarray(0, column.count));
  column.tags = tags;
  const numbers = new Float64Array(capacity);
  numbers.set(column.numbers.subarray(0, column.count));
  column.numbers = numbers;
  const codes = new Uint8Array(capacity);
  codes.set(column.distinctCodes.subarray(0, column.count));
  column.distinctCodes = codes;
}

/** Gives the string offsets room for `rows` rows exactly (`rows + 1` offsets), keeping its rows'; nothing when they have it already. */
export function growOffsets(strings: GrowingByteColumn, rows: number): void {
  if (strings.offsets.length >= rows + 1) return;
  const offsets = new Uint32Array(rows + 1);
  offsets.set(strings.offsets.subarray(0, strings.count + 1));
  strings.offsets = offsets;
}

/**
 * Gives the string bytes room for `size` bytes exactly, keeping the first `used`; nothing when
 * they have it already.
 */
export function resizeStringBytes(strings: GrowingByteColumn, used: number, size: number): void {
  if (size <= strings.bytes.length) return;
  const bytes = new Uint8Array(size);
  bytes.set(strings.bytes.subarray(0, used));
  strings.bytes = bytes;
}

/**
 * Fills the rows from `count` up to `rows` with nulls (the records before this one that lacked
 * the field), in one step.
 * @throws RangeError when the string offsets cannot grow (4 GiB)
 */
export function padNulls(column: RawColumn, rows: number): void {
  const from = column.count;
  if (from >= rows) return;
  reserveRows(column, rows);
  column.tags.fill(RAW.NULL, from, rows);
  const strings = column.strings;
  while (strings.offsets.length < rows + 1) reserveOffsets(strings);
  const end = strings.offsets[from];
  strings.offsets.fill(end, from + 1, rows + 1);
  strings.count = rows;
  column.count = rows;
  column.profile.nulls += rows - from;
}

/** Doubles a growing byte column's offsets. */
function reserveOffsets(strings: GrowingByteColumn): void {
  growOffsets(strings, strings.offsets.length * 2 - 1);
}

/**
 * Makes room in the column for rows below `rows` (its tags, numbers and string offsets), doubling
 * the arrays as needed.
 * @returns the rows it has room for now (at least `rows`)
 */
export function roomFor(column: RawColumn, rows: number): number {
  if (rows > column.tags.length) reserveRows(column, rows);
  while (rows + 1 > column.strings.offsets.length) reserveOffsets(column.strings);
  return Math.min(column.tags.length, column.strings.offsets.length - 1);
}

/**
 * Makes room for `bytes` string bytes for the next row's value, from `strings.offsets[count]`.
 * @throws RangeError when the column would exceed 4 GiB
 */
export function reserveString(column: RawColumn, bytes: number): void {
  const strings = column.strings;
  if (strings.offsets[strings.count] + bytes > strings.bytes.length) reserveValue(strings, bytes);
}

/**
 * Grows the column's string bytes to hold at least `size` bytes, keeping the first `used` (a
 * value being copied in may already be partly written past `strings.offsets[count]`).
 * @throws RangeError when the column would exceed 4 GiB
 */
export function growStringBytes(column: RawColumn, used: number, size: number): void {
  const strings = column.strings;
  if (size <= strings.bytes.length) return;
  const capacity = Math.min(MAX_COLUMN_BYTES, Math.max(strings.bytes.length * 2, size));
  if (size > capacity) throw new RangeError("string column exceeds 4 GiB");
  resizeStringBytes(strings, used, capacity);
}

/** Undoes the values from row `row` on (the NDJSON fast path, when a line turns out not to fit it); their profile was not counted yet. */
export function rollBack(column: RawColumn, row: number): void {
  if (column.count <= row) return;
  column.count = row;
  column.strings.count = row;
}

/**
 * Counts the value of `row` (written by the NDJSON fast path) in the column's profile: what
 * {@link addJsonValue} does for the same JSON value. A string's bytes are profiled as they are
 * (schema/infer.ts `profileUtf8`), and the date or date-time it parsed as is kept in `numbers`.
 */
export function profileRow(column: RawColumn, row: number): void {
  const profile = column.profile;
  const tag = column.tags[row];
  if (tag === RAW.STRING) {
    const offsets = column.strings.offsets;
    const parsed = profileUtf8(profile, column.strings.bytes, offsets[row], offsets[row + 1]);
    // NaN is not written: a string's slot is read only when every string parsed (convert.ts)
    if (parsed === parsed) column.numbers[row] = parsed;
    if (profile.distinct !== null) column.distinctCodes[row] = profile.lastDistinct + 1;
  } else if (tag === RAW.NUMBER) profile.numbers++;
  else if (tag === RAW.NULL) profile.nulls++;
  else if (tag === RAW.BOOLEAN) profile.booleans++;
  else profile.objects++;
}

/** Reserves the next row (profiled by the caller). */
function reserveRow(column: RawColumn): number {
  const row = column.count;
  if (row === column.tags.length) reserveRows(column, row + 1);
  column.count = row + 1;
  return row;
}

/**
 * Adds the next row's JSON value (`undefined`: the field is missing, a null) and profiles it. A
 * number of magnitude 2^53 or more must have been checked against its literal by the reader
 * first (schema/values.ts `isExactLiteral`): a parsed double no longer tells whether it was
 * rounded. An object or array is kept as its JSON.stringify text.
 * @returns the bytes of the value's text (its string, or its JSON text; 0 for the other types)
 * @throws RangeError when the strings exceed 4 GiB
 */
export function addJsonValue(column: RawColumn, value: unknown): number {
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
    column.distinctCodes[row] = column.profile.distinct !== null ? column.profile.lastDistinct + 1 : 0;
    text = value;
  } else {
    column.tags[row] = RAW.OBJECT;
    text = JSON.stringify(value);
  }
  return appendText(column.strings, text);
}

/**
 * Adds the next row's CSV field and profiles it. PostgreSQL's CSV rule: an unquoted empty field
 * is null, a quoted one (`""`) is the empty text (a string for a text column, a bad value for
 * the other kinds).
 * @param quoted whether the field was quoted in the file
 * @returns the field's bytes
 * @throws RangeError when the strings exceed 4 GiB
 */
export function addTextValue(column: RawColumn, text: string, quoted = false): number {
  const row = reserveRow(column);
  const profile = column.profile;
  const strings = profile.strings;
  column.numbers[row] = profileText(profile, text, quoted);
  column.tags[row] = text === "" && !quoted ? RAW.NULL : RAW.TEXT;
  // counted as a string while the distinct values are tracked: its code
  column.distinctCodes[row] = profile.strings !== strings && profile.distinct !== null ? profile.lastDistinct + 1 : 0;
  return appendText(column.strings, text);
}

/** Appends `text` as the next string and returns its bytes. */
function appendText(strings: GrowingByteColumn, text: string): number {
  const at = strings.offsets[strings.count];
  appendString(strings, text);
  return strings.offsets[strings.count] - at;
}
