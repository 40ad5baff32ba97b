/**
 * What the three readers share (read.ts): the columns a read produces (the seed's four and every
 * other field, docs/api.md "Columns beyond the four"), the growable columns they are collected in,
 * the validation of one JSON record, the error that names the file and line, and the decoding of
 * the byte stream into text for the text parsers.
 */
import { statusCode, STATUS_VALUES } from "../generate/record.ts";
import { COLUMN_ID } from "../schema/kinds.ts";
import { MAX_EXACT_INTEGER, isExactLiteral } from "../schema/values.ts";
import { type RawColumn, addJsonValue, rawColumn } from "./raw-column.ts";
import { type ByteColumn, appendString, commitValue, finishByteColumn, growingByteColumn } from "../bits/byte-column.ts";

/**
 * The columns read from a file, in file order; every array has length n (the record count).
 */
export interface RawColumns {
  /** Each record's id: finite, unique (no two equal under `===`); length n. */
  ids: Float64Array;
  /** Each record's name as UTF-8 (well-formed), packed; n values (byte-column.ts `stringAt` decodes one). */
  names: ByteColumn;
  /** Each record's email as UTF-8 (well-formed), packed; n values. */
  emails: ByteColumn;
  /** Each record's status code (index into STATUS_VALUES: 0 active, 1 inactive); length n. */
  statusCodes: Uint8Array;
  /**
   * The 1-based line of the file where each record starts; length n. NDJSON: its line; JSON
   * array: the line of its opening `{`; CSV: the physical line where the record starts.
   */
  lines: Uint32Array;
  /**
   * Every field beyond the seed's four, in first-seen order (CSV: header order), each with n
   * rows: a record that lacks the field has a null there (docs/api.md: no field is dropped).
   * Their kinds are decided once every record is read (snapshot/build-file.ts).
   */
  extra: RawColumn[];
}

/**
 * A bad input file: the first bad record (or byte) stops the read.
 * `message` is `${file}:${line}: ${reason}`.
 */
export class IngestError extends Error {
  /** The path as given to {@link readUsers}. */
  readonly file: string;
  /** The 1-based line of the bad record (for a duplicate id, the later of the two). */
  readonly line: number;
  /** What is wrong, e.g. `duplicate id 42 (first seen on line 7)`. */
  readonly reason: string;

  constructor(file: string, line: number, reason: string) {
    super(`${file}:${line}: ${reason}`);
    this.name = "IngestError";
    this.file = file;
    this.line = line;
    this.reason = reason;
  }
}

/** Longest quoted value shown in an error reason, in UTF-16 code units. */
const MAX_SHOWN = 60;

/** A short, quoted description of a bad value for an error reason: `"abc"`, `42`, `null`, `an array`. */
export function show(value: unknown): string {
  if (typeof value === "string") {
    const text = value.length > MAX_SHOWN ? `${value.slice(0, MAX_SHOWN)}…` : value;
    return JSON.stringify(text);
  }
  if (value === null) return "null";
  if (Array.isArray(value)) return "an array";
  if (typeof value === "object") return "an object";
  return String(value);
}

/** The reason for a string with a lone surrogate (not well-formed Unicode). */
export function loneSurrogateReason(field: string, value: string): string {
  for (let i = 0; i < value.length; i++) {
    const c = value.charCodeAt(i);
    if (c >= 0xd800 && c <= 0xdbff) {
      const next = value.charCodeAt(i + 1);
      if (next >= 0xdc00 && next <= 0xdfff) {
        i++;
        continue;
      }
      return `${field} is not well-formed Unicode (lone surrogate U+${c.toString(16).toUpperCase()})`;
    }
    if (c >= 0xdc00 && c <= 0xdfff) {
      return `${field} is not well-formed Unicode (lone surrogate U+${c.toString(16).toUpperCase()})`;
    }
  }
  return `${field} is not well-formed Unicode`;
}

/** The status values as an error message lists them ("active, inactive"). */
export const STATUS_LIST = STATUS_VALUES.join(", ");

/** A guess of the mean bytes per record in a file, to size the columns before reading (too few rows only means the arrays grow). */
export const GUESSED_RECORD_BYTES = 64;

/**
 * Growable columns; `finish` trims them to length n. Names and emails are packed UTF-8 (no JS
 * string per value): the NDJSON fast path copies their bytes straight from the input, the other
 * paths encode the parsed strings.
 */
export class ColumnsBuilder {
  n = 0;
  ids = new Float64Array(1 << 16);
  statusCodes = new Uint8Array(1 << 16);
  lines = new Uint32Array(1 << 16);
  /** Names and emails so far; the NDJSON fast path writes into their free room directly. */
  names = growingByteColumn(1 << 16, 1 << 20);
  emails = growingByteColumn(1 << 16, 1 << 21);

  /**
   * Sizes the empty columns for a file of `fileBytes` bytes, so that they need not grow (each
   * growth copies, and touching fresh memory is what a large read spends most on). Names and
   * emails together are shorter than the file, so each byte array gets the file's size: memory
   * that is reserved but never written costs nothing.
   */
  reserveFor(fileBytes: number): void {
    const rows = Math.ceil(fileBytes / GUESSED_RECORD_BYTES);
    if (rows > this.ids.length) {
      this.ids = new Float64Array(rows);
      this.statusCodes = new Uint8Array(rows);
      this.lines = new Uint32Array(rows);
    }
    // Offsets are 32-bit, so a column holds at most 4 GiB.
    const bytes = Math.min(fileBytes, 0xffffffff);
    if (bytes > this.emails.bytes.length) {
      this.names = growingByteColumn(rows, bytes);
      this.emails = growingByteColumn(rows, bytes);
    }
  }

  /** The columns beyond the seed's four, by field name, and in first-seen order. */
  private extraById = new Map<string, RawColumn>();
  extra: RawColumn[] = [];

  /**
   * The column of field `id` beyond the seed's four, created (null for the records before this
   * one) on first sight.
   * @throws IngestError at `line` when `id` is not a valid column id (docs/api.md: `[A-Za-z_][A-Za-z0-9_]{0,63}`)
   */
  extraColumn(file: string, id: string, line: number): RawColumn {
    let column = this.extraById.get(id);
    if (column === undefined) {
      if (!COLUMN_ID.test(id)) throw new IngestError(file, line, `field ${show(id)} is not a valid column id ([A-Za-z_][A-Za-z0-9_]{0,63}); rename it in the input`);
      column = rawColumn(id, Math.max(1024, this.n + 1));
      for (let row = 0; row < this.n; row++) addJsonValue(column, null);
      this.extraById.set(id, column);
      this.extra.push(column);
    }
    // records before this one that lacked the field
    while (column.count < this.n) addJsonValue(column, null);
    return column;
  }

  /** Adds a record whose name and email are strings (well-formed). */
  add(id: number, name: string, email: string, code: number, line: number): void {
    this.addFixed(id, code, line);
    appendString(this.names, name);
    appendString(this.emails, email);
  }

  /**
   * Adds a record whose name and email bytes (`nameLength` and `emailLength` bytes) were
   * already written into the columns' free room by byte-column.ts `copyPlainJsonString`.
   */
  addCopied(id: number, nameLength: number, emailLength: number, code: number, line: number): void {
    this.addFixed(id, code, line);
    commitValue(this.names, nameLength);
    commitValue(this.emails, emailLength);
  }

  /** Appends the id, status code and line of the next record. */
  private addFixed(id: number, code: number, line: number): void {
    const n = this.n;
    if (n === this.ids.length) this.grow();
    // `+ 0` turns -0 into 0: they are the same id.
    this.ids[n] = id + 0;
    this.statusCodes[n] = code;
    this.lines[n] = line;
    this.n = n + 1;
  }

  private grow(): void {
    const capacity = this.ids.length * 2;
    const ids = new Float64Array(capacity);
    ids.set(this.ids);
    this.ids = ids;
    const codes = new Uint8Array(capacity);
    codes.set(this.statusCodes);
    this.statusCodes = codes;
    const lines = new Uint32Array(capacity);
    lines.set(this.lines);
    this.lines = lines;
  }

  /** The columns, as views of length n (no copy: the spare room was never written). */
  finish(): RawColumns {
    const n = this.n;
    for (const column of this.extra) while (column.count < n) addJsonValue(column, null);
    return {
      extra: this.extra,
      ids: this.ids.subarray(0, n),
      names: finishByteColumn(this.names),
      emails: finishByteColumn(this.emails),
      statusCodes: this.statusCodes.subarray(0, n),
      lines: this.lines.subarray(0, n),
    };
  }
}

/**
 * The first duplicate id in file order among `ids[0..n)`: the index of the first record whose id
 * was already seen, and the index where it was first seen; or null when all ids are distinct.
 * Strictly ascending ids are recognised in one pass; otherwise it sorts a Float64Array copy
 * (native, O(n log n)) and checks neighbours; only when some value repeats does it scan again,
 * keeping a Map of the repeated values only.
 */
export function findFirstDuplicate(ids: Float64Array, n: number): { index: number; firstIndex: number } | null {
  // Strictly ascending ids (generated files, most exports) cannot repeat: no sort needed.
  let ascending = true;
  for (let i = 1; i < n; i++) {
    if (!(ids[i - 1] < ids[i])) {
      ascending = false;
      break;
    }
  }
  if (ascending) return null;
  const sorted = ids.slice(0, n);
  sorted.sort();
  let repeated: Set<number> | null = null;
  for (let i = 1; i < n; i++) {
    if (sorted[i] === sorted[i - 1]) {
      if (repeated === null) repeated = new Set();
      repeated.add(sorted[i]);
    }
  }
  if (repeated === null) return null;
  const firstSeen = new Map<number, number>();
  for (let i = 0; i < n; i++) {
    const id = ids[i];
    if (!repeated.has(id)) continue;
    const first = firstSeen.get(id);
    if (first !== undefined) return { index: i, firstIndex: first };
    firstSeen.set(id, i);
  }
  return null;
}

/** A streaming parser of one format: it is pushed decoded text and adds records to the columns. */
export interface FormatParser {
  /** Parses every complete record in `text` (plus what was left over); keeps the rest. */
  push(text: string): void;
  /** The input is complete: parses what is left, or throws if it is incomplete. */
  finish(): void;
  /** The 1-based line of the position right after all text pushed so far. */
  nextLine(): number;
}

/** Counts LF in `text[from..to)`. */
export function countNewlines(text: string, from: number, to: number): number {
  let count = 0;
  let at = text.indexOf("\n", from);
  while (at >= 0 && at < to) {
    count++;
    at = text.indexOf("\n", at + 1);
  }
  return count;
}

/** True when `text[from..to)` holds only JSON whitespace (space, tab, CR, LF). */
export function isBlank(text: string, from: number, to: number): boolean {
  for (let i = from; i < to; i++) {
    const c = text.charCodeAt(i);
    // ' ' '\t' '\r' '\n'
    if (c !== 32 && c !== 9 && c !== 13 && c !== 10) return false;
  }
  return true;
}

/** The largest magnitude of an id: every integer up to 2^53 is exact in a double (docs/api.md, Columns: |id| ≤ 2^53). */
export const MAX_ID_MAGNITUDE = 2 ** 53;

/** The digits of 2^53, to compare a number's decimal digits against. */
const MAX_ID_DIGITS = "9007199254740992";

/**
 * Compares the exact decimal value of the JSON number `text` (its magnitude) with 2^53, from its
 * digits, without rounding: -1 below, 0 equal, 1 above. `text` must match the JSON number
 * grammar.
 */
function compareMagnitudeToMaxId(text: string): number {
  const match = /^-?([0-9]+)(?:\.([0-9]+))?(?:[eE]([+-]?[0-9]+))?$/.exec(text);
  if (match === null) throw new RangeError(`not a JSON number: ${text}`);
  const fraction = match[2] ?? "";
  // The value is digits × 10^exponent.
  let digits = match[1] + fraction;
  let exponent = (match[3] === undefined ? 0 : Number(match[3])) - fraction.length;
  let first = 0;
  while (first < digits.length && digits.charCodeAt(first) === 48) first++;
  let last = digits.length;
  while (last > first && digits.charCodeAt(last - 1) === 48) last--;
  if (first === last) return -1;
  exponent += digits.length - last;
  digits = digits.slice(first, last);
  // Digits before the decimal point: 0.d1d2… × 10^magnitude, with d1 ≠ 0; 2^53 has 16.
  const magnitude = digits.length + exponent;
  if (magnitude !== MAX_ID_DIGITS.length) return magnitude > MAX_ID_DIGITS.length ? 1 : -1;
  const width = Math.max(digits.length, MAX_ID_DIGITS.length);
  const a = digits.padEnd(width, "0");
  const b = MAX_ID_DIGITS.padEnd(width, "0");
  return a < b ? -1 : a > b ? 1 : 0;
}

/**
 * The reason an id outside the exact range is refused, or null when it is in range. `id` is the
 * parsed (finite) value and `source` its JSON number text: when `id` is exactly ±2^53, the text
 * tells whether the input was 2^53 itself or a number that parsing rounded to it
 * (9007199254740993 parses as 9007199254740992). Without the text (undefined), ±2^53 is refused
 * as well, since it cannot be told exact. docs/api.md: an integer beyond ±2^53 is refused,
 * never rounded.
 */
export function idRangeReason(id: number, source: string | undefined): string | null {
  const magnitude = Math.abs(id);
  if (magnitude < MAX_ID_MAGNITUDE) return null;
  const text = source ?? String(id);
  const shown = text.length > MAX_SHOWN ? `${text.slice(0, MAX_SHOWN)}…` : text;
  const beyond = `id ${shown} is beyond ±2^53 (ids must be exact in a double)`;
  if (magnitude > MAX_ID_MAGNITUDE) return beyond;
  if (source === undefined) return `id ${shown} is ±2^53 after parsing, and its source text is not available to tell whether it was exact`;
  const order = compareMagnitudeToMaxId(source);
  if (order === 0) return null;
  if (order > 0) return beyond;
  return `id ${shown} is not exact in a double (it would be rounded to ${id}; ids must be exact, |id| ≤ 2^53)`;
}

/**
 * The source text of the top-level `id` member of the JSON object `text` (JSON.parse's source
 * text access), or undefined. Only called for an id whose parsed magnitude is 2^53 or more, so
 * the slower parse with a reviver costs nothing in the common case.
 */
export function idSourceText(text: string): string | undefined {
  const found: Array<[unknown, string | undefined]> = [];
  type Reviver = (this: unknown, key: string, value: unknown, context?: { source?: string }) => unknown;
  const reviver: Reviver = function (key, value, context) {
    if (key === "id") found.push([this, context?.source]);
    return value;
  };
  const root = (JSON.parse as (text: string, reviver: Reviver) => unknown)(text, reviver);
  for (let i = 0; i < found.length; i++) if (found[i][0] === root) return found[i][1];
  return undefined;
}

/**
 * Validates one parsed JSON value as a user record and adds it; throws IngestError at `line`.
 * Shared by the NDJSON and JSON-array parsers. `text` is the JSON text `value` was parsed from
 * (the id's source text is looked up in it when the id is at or beyond ±2^53).
 */
export function addJsonRecord(file: string, columns: ColumnsBuilder, value: unknown, line: number, text: string): void {
  if (typeof value !== "object" || value === null || Array.isArray(value)) {
    throw new IngestError(file, line, `record must be a JSON object (got ${show(value)})`);
  }
  const record = value as Record<string, unknown>;
  const id = record.id;
  const name = record.name;
  const email = record.email;
  const status = record.status;
  if (typeof id !== "number" || !Number.isFinite(id)) {
    if (id === undefined) throw new IngestError(file, line, `missing field "id"`);
    throw new IngestError(file, line, `id must be a finite number (got ${show(id)})`);
  }
  if (id >= MAX_ID_MAGNITUDE || id <= -MAX_ID_MAGNITUDE) {
    const reason = idRangeReason(id, idSourceText(text));
    if (reason !== null) throw new IngestError(file, line, reason);
  }
  if (typeof name !== "string") {
    if (name === undefined) throw new IngestError(file, line, `missing field "name"`);
    throw new IngestError(file, line, `name must be a string (got ${show(name)})`);
  }
  if (typeof email !== "string") {
    if (email === undefined) throw new IngestError(file, line, `missing field "email"`);
    throw new IngestError(file, line, `email must be a string (got ${show(email)})`);
  }
  if (!name.isWellFormed()) throw new IngestError(file, line, loneSurrogateReason("name", name));
  if (!email.isWellFormed()) throw new IngestError(file, line, loneSurrogateReason("email", email));
  // Fast path for the exact enum spellings; statusCode is case-insensitive.
  let code = status === "active" ? 0 : status === "inactive" ? 1 : -1;
  if (code < 0) {
    if (status === undefined) throw new IngestError(file, line, `missing field "status"`);
    code = typeof status === "string" ? statusCode(status) : -1;
    if (code < 0) throw new IngestError(file, line, `status must be one of ${STATUS_LIST} (got ${show(status)})`);
  }
  for (const key in record) {
    if (key === "id" || key === "name" || key === "email" || key === "status") continue;
    const v = record[key];
    if (typeof v === "number" && (v >= MAX_EXACT_INTEGER || v <= -MAX_EXACT_INTEGER)) {
      const literal = fieldLiteral(text, key);
      if (literal === null || !isExactLiteral(literal, v)) {
        throw new IngestError(file, line, `field "${key}": ${literal ?? v} is beyond ±2^53 and would be rounded`);
      }
    }
    if (typeof v === "string" && !v.isWellFormed()) throw new IngestError(file, line, loneSurrogateReason(key, v));
    addJsonValue(columns.extraColumn(file, key, line), v);
  }
  columns.add(id, name, email, code, line);
}

/**
 * The number literal of top-level field `key` in a record's JSON text, or null: what a number of
 * magnitude 2^53 or more is checked against (a parsed double no longer tells whether it was rounded).
 */
function fieldLiteral(text: string, key: string): string | null {
  const m = new RegExp(`"${key}"\\s*:\\s*(-?[0-9][0-9.eE+-]*)`).exec(text);
  return m === null ? null : m[1];
}

/** The text of a JSON.parse failure, for a "malformed JSON: …" reason. */
export function parseErrorText(error: unknown): string {
  const message = error instanceof Error ? error.message : String(error);
  return message.replace(/^JSON Parse error:\s*/, "");
}

/**
 * Consumes the bytes of the file chunk by chunk. `consume` gets `bytes` (exactly the unconsumed
 * bytes, from the start of the first unconsumed record) and returns how many bytes from the
 * front it consumed; the rest is offered again, with more bytes, on the next call.
 */
export interface ByteConsumer {
  /** `final`: no more bytes follow. `fileOffset`: the file offset of `bytes[0]`. */
  consume(bytes: Buffer, final: boolean, fileOffset: number): number;
  /** The input is complete. */
  finish(): void;
  /** The 1-based line of the first byte not consumed yet (for an error in the byte stream itself). */
  line(): number;
}

/** The reason for invalid UTF-8 at `bytes[at]` (file offset `offset`). */
export function invalidUtf8Reason(bytes: Uint8Array, at: number, offset: number): string {
  const shown = at < bytes.length ? bytes[at].toString(16).padStart(2, "0") : "end of file";
  return at < bytes.length ? `invalid UTF-8 (byte 0x${shown} at byte offset ${offset})` : `invalid UTF-8 (truncated at byte offset ${offset})`;
}

/** A text format's parser fed with chunks decoded as (strict) UTF-8. */
export function textConsumer(file: string, parser: FormatParser): ByteConsumer {
  const decoder = new TextDecoder("utf-8", { fatal: true, ignoreBOM: true });
  return {
    consume(bytes, final, fileOffset) {
      const end = bytes.length;
      const cut = final ? end : utf8CutPoint(bytes, end);
      let text: string;
      let bad = -1;
      try {
        text = decoder.decode(bytes.subarray(0, cut));
      } catch {
        bad = firstInvalidUtf8(bytes, cut);
        if (bad < 0) bad = 0;
        text = decoder.decode(bytes.subarray(0, bad));
      }
      // Records before the bad byte come first: they may hold an earlier error.
      if (text.length > 0) parser.push(text);
      if (bad >= 0) throw new IngestError(file, parser.nextLine(), invalidUtf8Reason(bytes, bad, fileOffset + bad));
      return cut;
    },
    finish() {
      parser.finish();
    },
    line() {
      return parser.nextLine();
    },
  };
}

/**
 * The start of an incomplete UTF-8 sequence at the end of `bytes[0..end)`, or `end` when the
 * bytes end on a character boundary.
 */
export function utf8CutPoint(bytes: Uint8Array, end: number): number {
  // Look back at most 3 bytes for a lead byte.
  for (let back = 1; back <= 3 && end - back >= 0; back++) {
    const b = bytes[end - back];
    // 10xxxxxx: a continuation byte; keep looking.
    if ((b & 0xc0) === 0x80) continue;
    // 110xxxxx (2 bytes), 1110xxxx (3), 11110xxx (4).
    const length = b >= 0xf0 ? 4 : b >= 0xe0 ? 3 : b >= 0xc0 ? 2 : 1;
    return back < length ? end - back : end;
  }
  return end;
}

/** The offset of the first byte of the first ill-formed UTF-8 sequence in `bytes[0..end)`, or -1. */
export function firstInvalidUtf8(bytes: Uint8Array, end: number): number {
  let i = 0;
  while (i < end) {
    const b = bytes[i];
    if (b < 0x80) {
      i++;
      continue;
    }
    let length: number;
    let min: number;
    if (b >= 0xc2 && b <= 0xdf) {
      length = 2;
      min = 0x80;
    } else if (b >= 0xe0 && b <= 0xef) {
      length = 3;
      min = 0x800;
    } else if (b >= 0xf0 && b <= 0xf4) {
      length = 4;
      min = 0x10000;
    } else return i;
    if (i + length > end) return i;
    let cp = b & (0xff >> (length + 1));
    for (let k = 1; k < length; k++) {
      const c = bytes[i + k];
      if ((c & 0xc0) !== 0x80) return i;
      cp = (cp << 6) | (c & 0x3f);
    }
    // Overlong, surrogate (U+D800..U+DFFF), or beyond U+10FFFF.
    if (cp < min || (cp >= 0xd800 && cp <= 0xdfff) || cp > 0x10ffff) return i;
    i += length;
  }
  return -1;
}
