/**
 * What the readers share (read.ts, postgres.ts): the columns a read produces (every field of the
 * input a column, none special: docs/api.md "Any users table: from your data to columns"), the builder they are collected
 * in, the validation of one JSON record, the error that names the file and line, and the
 * decoding of the byte stream into text for the text parsers.
 */
import { COLUMN_ID } from "../schema/kinds.ts";
import { MAX_EXACT_INTEGER, isExactLiteral } from "../schema/values.ts";
import { MAX_COLUMNS, MAX_VALUE_BYTES } from "./limits.ts";
import { addJsonValue, growOffsets, growRows, padNulls, rawColumn, resizeStringBytes } from "./raw-column.ts";
import type { RawColumn } from "../schema/raw-column.ts";

/**
 * The fields of an input, read: every field a raw column of n rows, none special (the key is
 * chosen and checked afterwards: snapshot/columns.ts). n may be 0.
 */
export interface RawColumns {
  /** Records read, n ≥ 0. */
  rows: number;
  /**
   * The 1-based line of the input where each record starts; length n. NDJSON: its line; JSON
   * array: the line of its opening `{`; CSV: the physical line where the record starts;
   * PostgreSQL: the row's number, from 1.
   */
  lines: Uint32Array;
  /**
   * Every field kept, in first-seen order (a CSV's header order; a PostgreSQL result's column
   * order), each with n rows: a record that lacks the field has a null there. A CSV header
   * alone gives its columns with 0 rows.
   */
  columns: RawColumn[];
  /** The fields that were left out unread (`--exclude`) and that the input has, in first-seen order. */
  excluded: string[];
}

/**
 * A bad input file: the first bad record (or byte) stops the read.
 * `message` is `${file}:${line}: ${reason}`.
 */
export class IngestError extends Error {
  /** The input's name as in messages: the path as given, `<stdin>`, `postgres:<table>`. */
  readonly file: string;
  /** The 1-based line of the bad record (for a duplicate key, the later of the two). */
  readonly line: number;
  /** What is wrong, e.g. `duplicate key 42 (first seen on line 7)`. */
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

/** The reason for a string of field `field` with a lone surrogate (not well-formed Unicode). */
export function loneSurrogateReason(field: string, value: string): string {
  for (let i = 0; i < value.length; i++) {
    const c = value.charCodeAt(i);
    if (c >= 0xd800 && c <= 0xdbff) {
      const next = value.charCodeAt(i + 1);
      if (next >= 0xdc00 && next <= 0xdfff) {
        i++;
        continue;
      }
      return `field ${show(field)} is not well-formed Unicode (lone surrogate U+${c.toString(16).toUpperCase()})`;
    }
    if (c >= 0xdc00 && c <= 0xdfff) {
      return `field ${show(field)} is not well-formed Unicode (lone surrogate U+${c.toString(16).toUpperCase()})`;
    }
  }
  return `field ${show(field)} is not well-formed Unicode`;
}

/** The reason for a value of `bytes` bytes, beyond {@link MAX_VALUE_BYTES}. */
export function valueTooLongReason(field: string, bytes: number): string {
  return `field ${show(field)} has a value of ${bytes} bytes; a value may have at most ${MAX_VALUE_BYTES} bytes (1 MiB)`;
}

/**
 * The reason a JSON number of magnitude 2^53 or more is refused, or null when its literal is
 * exact (2^53 itself, in any spelling). docs/api.md: an integer beyond ±2^53 is refused, never
 * rounded; a literal that a double would round (9007199254740993) is refused too.
 * @param literal the number's source text (JSON number grammar), or null when it was not found
 */
export function bigNumberReason(field: string, x: number, literal: string | null): string | null {
  if (literal !== null && isExactLiteral(literal, x)) return null;
  const text = literal ?? String(x);
  const shown = text.length > MAX_SHOWN ? `${text.slice(0, MAX_SHOWN)}…` : text;
  if (Math.abs(x) === MAX_EXACT_INTEGER && literal !== null && isBelowMaxExact(literal)) {
    return `field ${show(field)}: ${shown} is not exact in a double (it would be rounded to ${x})`;
  }
  return `field ${show(field)}: ${shown} is beyond ±2^53 and would be rounded`;
}

/** True when the JSON number literal's magnitude is below 2^53 (compared exactly, with BigInt on its scaled digits). */
function isBelowMaxExact(literal: string): boolean {
  const m = /^-?(\d+)(?:\.(\d+))?(?:[eE]([+-]?\d+))?$/.exec(literal);
  if (m === null) return false;
  const fraction = m[2] ?? "";
  const exponent = Number(m[3] ?? "0") - fraction.length;
  const digits = BigInt(m[1] + fraction);
  // digits × 10^exponent < 2^53  ⇔  digits < 2^53 × 10^-exponent (exponent < 0), else digits × 10^exponent < 2^53
  if (exponent >= 0) return digits * 10n ** BigInt(exponent) < BigInt(MAX_EXACT_INTEGER);
  return digits < BigInt(MAX_EXACT_INTEGER) * 10n ** BigInt(-exponent);
}

/**
 * The source text of the top-level member `key` of the JSON object `text` (JSON.parse's source
 * text access; the last one when the key repeats, as JSON.parse keeps it), or null. Only called
 * for a number whose parsed magnitude is 2^53 or more, so the slower parse costs nothing in the
 * common case.
 */
export function memberSourceText(text: string, key: string): string | null {
  let found: string | null = null;
  type Reviver = (this: unknown, key: string, value: unknown, context?: { source?: string }) => unknown;
  const holders: unknown[] = [];
  const sources: (string | null)[] = [];
  const reviver: Reviver = function (k, value, context) {
    if (k === key) {
      holders.push(this);
      sources.push(context?.source ?? null);
    }
    return value;
  };
  const root = (JSON.parse as (text: string, reviver: Reviver) => unknown)(text, reviver);
  for (let i = 0; i < holders.length; i++) if (holders[i] === root) found = sources[i];
  return found;
}

/** The fields of an input as a reason lists them: `id, name, email` (the first 20, then how many more). */
export function fieldList(fields: readonly string[]): string {
  if (fields.length === 0) return "(none)";
  const shown = fields.slice(0, 20).join(", ");
  return fields.length > 20 ? `${shown} and ${fields.length - 20} more` : shown;
}

/** The reason an `--exclude` name is refused: it is not a field of the input (a typo must not keep a secret). */
export function unknownExcludeReason(field: string, fields: readonly string[]): string {
  return `--exclude ${show(field)} is not a field of the input; fields: ${fieldList(fields)}`;
}

/** Options of a {@link ColumnsBuilder}. */
export interface BuilderOptions {
  /** Fields left out unread (`--exclude`): never collected, listed in `excluded` when seen. */
  exclude?: Iterable<string>;
}

/**
 * The columns of a read as they grow: a raw column per field (made on first sight, null for the
 * records before), the line of each record. Fields are looked up in a Map, so any name —
 * `__proto__`, `constructor` — is a field like any other.
 */
export class ColumnsBuilder {
  /** Records ended so far. */
  rows = 0;
  /** Each ended record's line; grows by doubling. */
  lines = new Uint32Array(1 << 12);
  /** The kept fields' columns, in first-seen order. */
  readonly columns: RawColumn[] = [];
  /** The excluded fields seen, in first-seen order. */
  readonly excluded: string[] = [];
  /** Every field seen: its column, or null when it is excluded. */
  private readonly byName = new Map<string, RawColumn | null>();
  private readonly exclude: ReadonlySet<string>;
  /** Rows a new column is made with room for. */
  private expected = 1024;

  constructor(
    readonly file: string,
    options: BuilderOptions = {},
  ) {
    this.exclude = new Set(options.exclude ?? []);
  }

  /**
   * Sizes the columns for `rows` records in all (a guess from the input's size and the records
   * read so far): the existing columns grow to it, their strings in proportion to what they
   * hold, and new ones are made with that room, so that a large read does not copy its columns
   * as they double. Memory that is reserved but never written costs nothing.
   */
  expectRows(rows: number): void {
    if (rows <= this.expected) return;
    this.expected = rows;
    if (rows > this.lines.length) this.growLines(rows);
    const seen = Math.max(1, this.rows);
    for (const column of this.columns) {
      growRows(column, rows);
      const strings = column.strings;
      growOffsets(strings, rows);
      const used = strings.offsets[strings.count];
      // the bytes so far, scaled to every row, and a tenth more (at most 4 GiB: offsets are 32-bit)
      resizeStringBytes(strings, used, Math.min(0xffffffff, Math.ceil(((used / seen) * rows * 11) / 10) + 64));
    }
  }

  private growLines(rows: number): void {
    const lines = new Uint32Array(rows);
    lines.set(this.lines.subarray(0, this.rows));
    this.lines = lines;
  }

  /** The column of field `name`: the column, null when it is excluded, undefined when the field was not seen yet. */
  lookup(name: string): RawColumn | null | undefined {
    return this.byName.get(name);
  }

  /**
   * The column of field `name`, made on first sight (null for the records before this one); null
   * when the field is excluded.
   * @throws IngestError at `line` when `name` is not a column id (docs/api.md:
   *   `[A-Za-z_][A-Za-z0-9_]{0,63}`), or when it would be column {@link MAX_COLUMNS} + 1
   */
  column(name: string, line: number): RawColumn | null {
    const known = this.byName.get(name);
    if (known !== undefined) return known;
    if (this.exclude.has(name)) {
      this.byName.set(name, null);
      this.excluded.push(name);
      return null;
    }
    if (!COLUMN_ID.test(name)) throw new IngestError(this.file, line, `field ${show(name)} is not a valid column id ([A-Za-z_][A-Za-z0-9_]{0,63}); rename it in the input, or leave it out with --exclude`);
    if (this.columns.length === MAX_COLUMNS) {
      throw new IngestError(this.file, line, `field ${show(name)} would be column ${MAX_COLUMNS + 1}; a table has at most ${MAX_COLUMNS} columns (leave some out with --exclude)`);
    }
    const column = rawColumn(name, Math.max(this.expected, this.rows + 1), Math.max(this.expected, this.rows + 1) * 8);
    padNulls(column, this.rows);
    this.byName.set(name, column);
    this.columns.push(column);
    return column;
  }

  /** Ends the record being added, which starts on `line`. */
  endRecord(line: number): void {
    const row = this.rows;
    if (row === this.lines.length) this.growLines(row * 2);
    this.lines[row] = line;
    this.rows = row + 1;
  }

  /** The columns, as views of length n (no copy); the columns a record lacked at the end are padded with nulls. */
  finish(): RawColumns {
    const n = this.rows;
    for (const column of this.columns) padNulls(column, n);
    return { rows: n, lines: this.lines.subarray(0, n), columns: this.columns, excluded: this.excluded };
  }
}

/**
 * Adds one parsed JSON value as a record: every member a field (a missing one is null), none
 * special; throws IngestError at `line`. Shared by the NDJSON, JSON-array and PostgreSQL readers.
 * `text` is the JSON text `value` was parsed from: a number of magnitude 2^53 or more is checked
 * against its literal there.
 * @throws IngestError for a value that is not an object, a field name that is not a column id, a
 *   number that a double would round, a string that is not well-formed Unicode (a lone
 *   surrogate escape), a value over {@link MAX_VALUE_BYTES}, too many columns
 */
export function addJsonRecord(file: string, columns: ColumnsBuilder, value: unknown, line: number, text: string): void {
  if (typeof value !== "object" || value === null || Array.isArray(value)) {
    throw new IngestError(file, line, `record must be a JSON object (got ${show(value)})`);
  }
  const record = value as Record<string, unknown>;
  const row = columns.rows;
  const keys = Object.keys(record);
  for (let k = 0; k < keys.length; k++) {
    const key = keys[k];
    const column = columns.column(key, line);
    if (column === null) continue;
    const v = record[key];
    if (typeof v === "number" && (v >= MAX_EXACT_INTEGER || v <= -MAX_EXACT_INTEGER)) {
      const reason = bigNumberReason(key, v, memberSourceText(text, key));
      if (reason !== null) throw new IngestError(file, line, reason);
    } else if (typeof v === "string" && !v.isWellFormed()) throw new IngestError(file, line, loneSurrogateReason(key, v));
    padNulls(column, row);
    const bytes = addJsonValue(column, v);
    if (bytes > MAX_VALUE_BYTES) throw new IngestError(file, line, valueTooLongReason(key, bytes));
  }
  columns.endRecord(line);
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
