/**
 * Input readers for user-record files (NDJSON, a JSON array, CSV) with validation of every
 * record. The input is a byte stream ({@link readUserStream}): a plain file read in chunks of
 * {@link READ_CHUNK_BYTES}, a `.gz` file gunzipped as it is read, or standard input (`-`), opened
 * by {@link openInput}. The columns grow as records arrive, and the first bad record stops the
 * read with an {@link IngestError} that names the file (`<stdin>` for standard input) and the
 * line. Duplicate ids are found after the read by sorting a copy of the ids (no 10M-entry Set).
 *
 * Speed: NDJSON lines in the canonical shape that src/generate/users.ts writes are read straight
 * from the bytes, names and emails copied as UTF-8 without a JS string (about 3M rows/s at 10M
 * rows); other lines, JSON arrays and CSV decode the text and use JSON.parse or a string scanner,
 * then encode the two strings (roughly 0.8–1.4M rows/s at 1M rows).
 *
 * Decisions (the seed and docs/api.md leave them open):
 * - An empty input, or one holding only whitespace (and blank lines), a JSON `[]` or a CSV
 *   header alone reads as 0 rows, in every format. The reader returns them; `snapshot build`
 *   refuses them (src/snapshot/build-file.ts: an empty dataset is not built).
 * - The format: `--format` if given; else the extension (`.ndjson`/`.jsonl`, `.json`, `.csv`; for
 *   `.gz` the one before it); else the first character that is not whitespace (`[` JSON array,
 *   `{` NDJSON, anything else CSV), as for standard input ({@link detectFormat}).
 * - A UTF-8 byte-order mark at the start is skipped. Bytes that are not well-formed UTF-8
 *   (including encoded surrogates) are an error; so is a JSON `\uD800`-style escape that leaves a
 *   lone surrogate in `name` or `email`.
 * - Fields beyond `id`, `name`, `email`, `status` are ignored (the seed: "Fields of the user
 *   record beyond the four listed: not shown"), in JSON objects and as extra CSV columns.
 * - `id` is a finite number (any: integer or not, negative or not), unique, with |id| ≤ 2^53
 *   (docs/api.md: "an integer beyond ±2^53 is refused, never rounded"); a literal that parsing
 *   rounds to ±2^53, such as 9007199254740993, is refused too (its source text is checked).
 *   `-0` and `0` are the same id. JSON wants a number (a string "42" is an error); a CSV id must
 *   match the JSON number grammar (no hex, blanks, `_`, `+`, `.5`, `5.` or `Infinity`;
 *   `1e3` is 1000) and an empty field is an error.
 * - `name` and `email` are strings, possibly empty; they are stored as given (no trimming).
 * - `status` is matched case-insensitively against STATUS_VALUES (schema.ts `statusCode`):
 *   "Active" is accepted and stored as code 0.
 * - CSV: RFC 4180 with a header row naming `id`, `name`, `email`, `status` in any order
 *   (compared trimmed and case-insensitively); records end with LF or CRLF; a quoted field may
 *   hold commas, doubled quotes, CR and LF; an empty or blank line is skipped; a quote inside an
 *   unquoted field, text after a closing quote, or a bare CR outside quotes is an error.
 * - gzip data that is corrupt or truncated is an error on the line the decompressed text had
 *   reached.
 */
import { isUtf8 } from "node:buffer";
import { createReadStream } from "node:fs";
import { open } from "node:fs/promises";
import { extname } from "node:path";
import { pipeline } from "node:stream";
import { createGunzip } from "node:zlib";
import { statusCode, STATUS_VALUES } from "../schema.ts";
import { COLUMN_ID } from "../schema/kinds.ts";
import { MAX_EXACT_INTEGER, isExactLiteral } from "../schema/values.ts";
import { type RawColumn, addJsonValue, addTextValue, rawColumn } from "./raw-column.ts";
import { type ByteColumn, appendString, commitValue, copyPlainJsonString, finishByteColumn, growingByteColumn } from "../bits/byte-column.ts";

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

/** The input formats {@link readUsers} understands. */
export type InputFormat = "ndjson" | "json" | "csv";

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

/** Bytes read from the file per read call, by default. */
export const READ_CHUNK_BYTES = 8 << 20;

/** Options of {@link readUsers}. */
export interface ReadOptions {
  /** Bytes per read call of a plain file: an integer ≥ 4, default {@link READ_CHUNK_BYTES} (tests use tiny ones). */
  chunkBytes?: number;
  /** The input's format, overriding detection ({@link detectFormat}). */
  format?: InputFormat;
  /**
   * Called once the format is known (before the first record is parsed): `file` as in error
   * messages (`<stdin>` for `-`), the format, and whether the input is being gunzipped.
   */
  onFormat?: (info: { file: string; format: InputFormat; gzip: boolean }) => void;
}

/** Longest quoted value shown in an error reason, in UTF-16 code units. */
const MAX_SHOWN = 60;

/** A short, quoted description of a bad value for an error reason: `"abc"`, `42`, `null`, `an array`. */
function show(value: unknown): string {
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
function loneSurrogateReason(field: string, value: string): string {
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

const STATUS_LIST = STATUS_VALUES.join(", ");

/** A guess of the mean bytes per record in a file, to size the columns before reading (too few rows only means the arrays grow). */
const GUESSED_RECORD_BYTES = 64;

/**
 * Growable columns; `finish` trims them to length n. Names and emails are packed UTF-8 (no JS
 * string per value): the NDJSON fast path copies their bytes straight from the input, the other
 * paths encode the parsed strings.
 */
class ColumnsBuilder {
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
interface FormatParser {
  /** Parses every complete record in `text` (plus what was left over); keeps the rest. */
  push(text: string): void;
  /** The input is complete: parses what is left, or throws if it is incomplete. */
  finish(): void;
  /** The 1-based line of the position right after all text pushed so far. */
  nextLine(): number;
}

/** Counts LF in `text[from..to)`. */
function countNewlines(text: string, from: number, to: number): number {
  let count = 0;
  let at = text.indexOf("\n", from);
  while (at >= 0 && at < to) {
    count++;
    at = text.indexOf("\n", at + 1);
  }
  return count;
}

/** True when `text[from..to)` holds only JSON whitespace (space, tab, CR, LF). */
function isBlank(text: string, from: number, to: number): boolean {
  for (let i = from; i < to; i++) {
    const c = text.charCodeAt(i);
    // ' ' '\t' '\r' '\n'
    if (c !== 32 && c !== 9 && c !== 13 && c !== 10) return false;
  }
  return true;
}

/** The largest magnitude of an id: every integer up to 2^53 is exact in a double (docs/api.md, Columns: |id| ≤ 2^53). */
const MAX_ID_MAGNITUDE = 2 ** 53;

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
function idRangeReason(id: number, source: string | undefined): string | null {
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
function idSourceText(text: string): string | undefined {
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
function addJsonRecord(file: string, columns: ColumnsBuilder, value: unknown, line: number, text: string): void {
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
function parseErrorText(error: unknown): string {
  const message = error instanceof Error ? error.message : String(error);
  return message.replace(/^JSON Parse error:\s*/, "");
}

/**
 * Consumes the bytes of the file chunk by chunk. `consume` gets `bytes` (exactly the unconsumed
 * bytes, from the start of the first unconsumed record) and returns how many bytes from the
 * front it consumed; the rest is offered again, with more bytes, on the next call.
 */
interface ByteConsumer {
  /** `final`: no more bytes follow. `fileOffset`: the file offset of `bytes[0]`. */
  consume(bytes: Buffer, final: boolean, fileOffset: number): number;
  /** The input is complete. */
  finish(): void;
  /** The 1-based line of the first byte not consumed yet (for an error in the byte stream itself). */
  line(): number;
}

/** The reason for invalid UTF-8 at `bytes[at]` (file offset `offset`). */
function invalidUtf8Reason(bytes: Uint8Array, at: number, offset: number): string {
  const shown = at < bytes.length ? bytes[at].toString(16).padStart(2, "0") : "end of file";
  return at < bytes.length ? `invalid UTF-8 (byte 0x${shown} at byte offset ${offset})` : `invalid UTF-8 (truncated at byte offset ${offset})`;
}

/** A text format's parser fed with chunks decoded as (strict) UTF-8. */
function textConsumer(file: string, parser: FormatParser): ByteConsumer {
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

// Byte sequences of the canonical NDJSON record `{"id":…,"name":"…","email":"…","status":"…"}`.
const ID_KEY = new TextEncoder().encode('{"id":');
const NAME_KEY = new TextEncoder().encode(',"name":"');
const EMAIL_KEY = new TextEncoder().encode('","email":"');
const STATUS_KEY = new TextEncoder().encode('","status":"');
const ACTIVE_END = new TextEncoder().encode('active"}');
const INACTIVE_END = new TextEncoder().encode('inactive"}');

/** True when `bytes[at..]` starts with `key`. */
function startsWithBytes(bytes: Uint8Array, at: number, key: Uint8Array): boolean {
  const length = key.length;
  for (let k = 0; k < length; k++) if (bytes[at + k] !== key[k]) return false;
  return true;
}

/**
 * NDJSON: one JSON object per line; blank (whitespace-only) lines are skipped. Lines in the
 * canonical shape this project writes (`{"id":<integer>,"name":"…","email":"…","status":"active"}`,
 * no escapes) are read straight from the bytes; any other line is decoded and JSON.parse'd, so
 * every valid JSON object is accepted and every error is found.
 */
function ndjsonConsumer(file: string, columns: ColumnsBuilder): ByteConsumer {
  const decoder = new TextDecoder("utf-8", { fatal: true, ignoreBOM: true });
  let line = 1;

  /** The general path: decode `bytes[from..to)` strictly and JSON.parse it. */
  const slowLine = (bytes: Buffer, from: number, to: number, fileOffset: number): void => {
    let text: string;
    try {
      text = decoder.decode(bytes.subarray(from, to));
    } catch {
      const sub = bytes.subarray(from, to);
      const bad = Math.max(0, firstInvalidUtf8(sub, sub.length));
      throw new IngestError(file, line, invalidUtf8Reason(sub, bad, fileOffset + from + bad));
    }
    if (isBlank(text, 0, text.length)) return;
    let value: unknown;
    try {
      value = JSON.parse(text);
    } catch (error) {
      throw new IngestError(file, line, `malformed JSON: ${parseErrorText(error)}`);
    }
    addJsonRecord(file, columns, value, line, text);
  };

  /**
   * The fast path for the canonical shape: adds the record and returns the index of the LF that
   * ends the line (or `bytes.length` at the end of the data), or -1 to take the general path.
   */
  const fastLine = (bytes: Buffer, from: number): number => {
    if (!startsWithBytes(bytes, from, ID_KEY)) return -1;
    let p = from + ID_KEY.length;
    // The id: an optional '-' and 1 to 15 digits without a leading zero (exact in a double).
    const negative = bytes[p] === 45;
    if (negative) p++;
    const digitsFrom = p;
    let id = 0;
    let d = bytes[p];
    while (d >= 48 && d <= 57) {
      id = id * 10 + (d - 48);
      d = bytes[++p];
    }
    const digits = p - digitsFrom;
    if (digits === 0 || digits > 15 || (digits > 1 && bytes[digitsFrom] === 48)) return -1;
    if (!startsWithBytes(bytes, p, NAME_KEY)) return -1;
    // Name and email are copied into the columns as they are checked, and added only once the
    // whole line is known to be canonical.
    const nameFrom = p + NAME_KEY.length;
    const nameTo = copyPlainJsonString(columns.names, bytes, nameFrom);
    if (nameTo < 0 || !startsWithBytes(bytes, nameTo, EMAIL_KEY)) return -1;
    const emailFrom = nameTo + EMAIL_KEY.length;
    const emailTo = copyPlainJsonString(columns.emails, bytes, emailFrom);
    if (emailTo < 0 || !startsWithBytes(bytes, emailTo, STATUS_KEY)) return -1;
    p = emailTo + STATUS_KEY.length;
    let code: number;
    if (startsWithBytes(bytes, p, ACTIVE_END)) {
      code = 0;
      p += ACTIVE_END.length;
    } else if (startsWithBytes(bytes, p, INACTIVE_END)) {
      code = 1;
      p += INACTIVE_END.length;
    } else return -1;
    // '\r' before the '\n' (CRLF), then the line end or the end of the data.
    if (bytes[p] === 13) p++;
    if (p !== bytes.length && bytes[p] !== 10) return -1;
    columns.addCopied(negative ? -id : id, nameTo - nameFrom, emailTo - emailFrom, code, line);
    return p;
  };

  return {
    consume(bytes, final, fileOffset) {
      let stop = bytes.length;
      if (!final) {
        // Only whole lines: up to and including the last LF.
        const lastNewline = bytes.lastIndexOf(10);
        if (lastNewline < 0) return 0;
        stop = lastNewline + 1;
      }
      const data = stop === bytes.length ? bytes : bytes.subarray(0, stop);
      // The fast path decodes without checks, so it runs only on valid UTF-8.
      const valid = isUtf8(data);
      let from = 0;
      while (from < stop) {
        let end = valid ? fastLine(data, from) : -1;
        if (end < 0) {
          end = data.indexOf(10, from);
          if (end < 0) end = stop;
          // An empty line is skipped without decoding.
          if (end > from) slowLine(data, from, end, fileOffset);
        }
        line++;
        from = end + 1;
      }
      return stop;
    },
    finish() {},
    line() {
      return line;
    },
  };
}

// JSON-array scanner states.
const BEFORE_ARRAY = 0;
const BEFORE_FIRST = 1; // after '[': a value or ']'
const BEFORE_VALUE = 2; // after ',': a value
const IN_OBJECT = 3;
const AFTER_VALUE = 4; // ',' or ']'
const AFTER_ARRAY = 5;

/** The name of the JSON type whose value starts with char code `c`, for an error reason. */
function jsonTypeAt(c: number): string | null {
  // '[' '"' 't' 'f' 'n' '-' '0'..'9'
  if (c === 91) return "an array";
  if (c === 34) return "a string";
  if (c === 116 || c === 102) return "a boolean";
  if (c === 110) return "null";
  if (c === 45 || (c >= 48 && c <= 57)) return "a number";
  return null;
}

/**
 * A JSON array of objects, streamed: a small scanner finds each top-level object's extent
 * (tracking strings, escapes and nesting) and JSON.parse parses just that object, so the whole
 * array is never held as one string. A record's line is the line of its opening `{`.
 */
function jsonArrayParser(file: string, columns: ColumnsBuilder): FormatParser {
  let state = BEFORE_ARRAY;
  // Unconsumed text: inside an object it starts at the object's '{', else it is empty.
  let rest = "";
  // Where scanning resumes in `rest` (inside an object).
  let scanFrom = 0;
  // Line of the scan position (newlines outside strings are counted), and of the open object's '{'.
  let line = 1;
  let objectLine = 1;
  // Inside an object: nesting depth and whether the scan position is inside a string.
  let depth = 0;
  let inString = false;

  const malformed = (lineNo: number, what: string): never => {
    throw new IngestError(file, lineNo, `malformed JSON: ${what}`);
  };

  return {
    push(text) {
      const s = rest.length === 0 ? text : rest + text;
      const n = s.length;
      let i = state === IN_OBJECT ? scanFrom : 0;
      // Start of the open object in `s` (0 when it was carried over in `rest`).
      let objectStart = 0;
      while (i < n) {
        if (state === IN_OBJECT) {
          // Scan the object body; strings are skipped with indexOf.
          let closed = false;
          while (i < n) {
            if (inString) {
              const q = s.indexOf('"', i);
              if (q < 0) {
                i = n;
                break;
              }
              // A quote preceded by an odd number of backslashes is escaped.
              let backslashes = 0;
              for (let k = q - 1; k > objectStart && s.charCodeAt(k) === 92; k--) backslashes++;
              i = q + 1;
              if ((backslashes & 1) === 0) inString = false;
              continue;
            }
            const c = s.charCodeAt(i++);
            // '"' '{' '[' '}' ']' '\n'
            if (c === 34) inString = true;
            else if (c === 123 || c === 91) depth++;
            else if (c === 125 || c === 93) {
              if (--depth === 0) {
                closed = true;
                break;
              }
            } else if (c === 10) line++;
          }
          if (!closed) break;
          const objectText = s.slice(objectStart, i);
          let value: unknown;
          try {
            value = JSON.parse(objectText);
          } catch (error) {
            malformed(objectLine, parseErrorText(error));
          }
          addJsonRecord(file, columns, value, objectLine, objectText);
          state = AFTER_VALUE;
          continue;
        }
        const c = s.charCodeAt(i);
        // Whitespace between tokens: '\n', then ' ' '\t' '\r'.
        if (c === 10) {
          line++;
          i++;
          continue;
        }
        if (c === 32 || c === 9 || c === 13) {
          i++;
          continue;
        }
        if (state === BEFORE_ARRAY) {
          // '['
          if (c !== 91) malformed(line, `expected '[' to open an array of user objects (got ${JSON.stringify(s.charAt(i))})`);
          state = BEFORE_FIRST;
          i++;
        } else if (state === BEFORE_FIRST || state === BEFORE_VALUE) {
          if (c === 123) {
            // '{': an object starts.
            state = IN_OBJECT;
            objectStart = i;
            objectLine = line;
            depth = 1;
            inString = false;
            i++;
            continue;
          }
          // ']' closes the array right after '[' (an empty array); a trailing comma is an error.
          if (c === 93 && state === BEFORE_FIRST) {
            state = AFTER_ARRAY;
            i++;
            continue;
          }
          const type = jsonTypeAt(c);
          if (type !== null) throw new IngestError(file, line, `record must be a JSON object (got ${type})`);
          malformed(line, `unexpected ${JSON.stringify(s.charAt(i))} where an array element was expected`);
        } else if (state === AFTER_VALUE) {
          // ',' or ']'
          if (c === 44) state = BEFORE_VALUE;
          else if (c === 93) state = AFTER_ARRAY;
          else malformed(line, `expected ',' or ']' after an array element (got ${JSON.stringify(s.charAt(i))})`);
          i++;
        } else {
          malformed(line, `unexpected ${JSON.stringify(s.charAt(i))} after the end of the array`);
        }
      }
      // Keep only the open object's text.
      if (state === IN_OBJECT) {
        rest = objectStart === 0 ? s : s.slice(objectStart);
        scanFrom = i - objectStart;
      } else {
        rest = "";
      }
    },
    finish() {
      if (state === IN_OBJECT) malformed(objectLine, "unexpected end of file inside an object");
      // Only whitespace: an empty dataset.
      if (state === BEFORE_ARRAY) return;
      if (state !== AFTER_ARRAY) malformed(line, "unexpected end of file: the array is not closed with ']'");
    },
    nextLine() {
      return line;
    },
  };
}

/** The JSON number grammar (RFC 8259 §6), which a CSV id must match (docs/api.md: "CSV too"). */
const JSON_NUMBER = /^-?(?:0|[1-9][0-9]*)(?:\.[0-9]+)?(?:[eE][+-]?[0-9]+)?$/;

/** CSV columns the header must name. */
const CSV_COLUMNS = ["id", "name", "email", "status"] as const;

/**
 * CSV per RFC 4180 with a header row; see the module comment for the rules. A record's line is
 * the physical line where it starts (quoted fields may span lines).
 */
function csvParser(file: string, columns: ColumnsBuilder): FormatParser {
  let rest = "";
  // Line number at the start of `rest`.
  let line = 1;
  // Column index of id, name, email, status; -1 until the header is read.
  let idCol = -1;
  let nameCol = -1;
  let emailCol = -1;
  let statusCol = -1;
  let headerWidth = 0;
  // The columns beyond the four: header index and raw column of each.
  let extraCols: { index: number; column: RawColumn }[] = [];
  const fields: string[] = [];

  const fail = (lineNo: number, reason: string): never => {
    throw new IngestError(file, lineNo, reason);
  };

  /** Handles one complete record (its fields are in `fields`). */
  const record = (lineNo: number): void => {
    const width = fields.length;
    // An empty or blank (whitespace-only) line is skipped.
    if (width === 1 && (fields[0] === "" || fields[0].trim() === "")) return;
    if (idCol < 0) {
      const index = [-1, -1, -1, -1];
      for (let f = 0; f < width; f++) {
        const key = fields[f].trim().toLowerCase();
        const c = (CSV_COLUMNS as readonly string[]).indexOf(key);
        if (c < 0) continue;
        if (index[c] >= 0) fail(lineNo, `CSV header names column "${key}" twice`);
        index[c] = f;
      }
      for (let c = 0; c < 4; c++) {
        if (index[c] < 0) fail(lineNo, `CSV header must name the columns id, name, email, status (missing "${CSV_COLUMNS[c]}")`);
      }
      const seen = new Set<string>();
      extraCols = [];
      for (let f = 0; f < width; f++) {
        if (index.includes(f)) continue;
        const id = fields[f].trim();
        if (seen.has(id)) fail(lineNo, `CSV header names column "${id}" twice`);
        seen.add(id);
        extraCols.push({ index: f, column: columns.extraColumn(file, id, lineNo) });
      }
      idCol = index[0];
      nameCol = index[1];
      emailCol = index[2];
      statusCol = index[3];
      headerWidth = width;
      return;
    }
    if (width !== headerWidth) fail(lineNo, `CSV row has ${width} fields, header has ${headerWidth}`);
    const idText = fields[idCol];
    // Exactly the JSON number grammar: `Number` alone would also take hex, blanks, "Infinity", ".5".
    if (!JSON_NUMBER.test(idText)) fail(lineNo, `id must be a number in JSON syntax (got ${show(idText)})`);
    const id = Number(idText);
    if (!Number.isFinite(id)) fail(lineNo, `id must be a finite number (got ${show(idText)})`);
    if (id >= MAX_ID_MAGNITUDE || id <= -MAX_ID_MAGNITUDE) {
      const reason = idRangeReason(id, idText);
      if (reason !== null) fail(lineNo, reason);
    }
    const statusText = fields[statusCol];
    let code = statusText === "active" ? 0 : statusText === "inactive" ? 1 : statusCode(statusText);
    if (code < 0) fail(lineNo, `status must be one of ${STATUS_LIST} (got ${show(statusText)})`);
    for (const { index, column } of extraCols) {
      const value = fields[index];
      if (!value.isWellFormed()) fail(lineNo, loneSurrogateReason(column.id, value));
      addTextValue(column, value);
    }
    columns.add(id, fields[nameCol], fields[emailCol], code, lineNo);
  };

  /**
   * Parses records from `s`; returns the index where the first incomplete record starts
   * (s.length when all were complete). `final`: no more text follows.
   */
  const parse = (s: string, final: boolean): number => {
    const n = s.length;
    let pos = 0;
    // Cached positions of the next ',' and '\n' at or after pos (-1: none left).
    let nextComma = s.indexOf(",");
    let nextNewline = s.indexOf("\n");
    while (pos < n) {
      const recordStart = pos;
      const recordLine = line;
      fields.length = 0;
      let newlinesInRecord = 0;
      let complete = false;
      // One field per iteration.
      for (;;) {
        if (s.charCodeAt(pos) === 34) {
          // '"': a quoted field; "" inside is a literal quote.
          let from = pos + 1;
          let hasDoubled = false;
          let close = -1;
          for (;;) {
            const q = s.indexOf('"', from);
            if (q < 0) break;
            if (s.charCodeAt(q + 1) === 34) {
              hasDoubled = true;
              from = q + 2;
              continue;
            }
            // A quote at the very end may be the first half of "" continued in the next chunk.
            if (q + 1 === n && !final) break;
            close = q;
            break;
          }
          if (close < 0) {
            if (final) fail(recordLine, "unterminated quoted field (missing closing '\"')");
            return recordStart;
          }
          const raw = s.slice(pos + 1, close);
          newlinesInRecord += countNewlines(s, pos + 1, close);
          fields.push(hasDoubled ? raw.replaceAll('""', '"') : raw);
          pos = close + 1;
          const c = s.charCodeAt(pos);
          if (c === 44) {
            // ','
            pos++;
            continue;
          }
          if (c === 10) {
            // '\n'
            pos++;
            complete = true;
            break;
          }
          if (c === 13 && s.charCodeAt(pos + 1) === 10) {
            // '\r\n'
            pos += 2;
            complete = true;
            break;
          }
          if (pos >= n) {
            if (!final) return recordStart;
            complete = true;
            break;
          }
          if (c === 13 && pos + 1 >= n && !final) return recordStart;
          fail(recordLine + newlinesInRecord, `unexpected ${JSON.stringify(s.charAt(pos))} after a closing quote (expected ',' or end of line)`);
        }
        // An unquoted field runs to the next ',' or '\n'.
        if (nextComma >= 0 && nextComma < pos) nextComma = s.indexOf(",", pos);
        if (nextNewline >= 0 && nextNewline < pos) nextNewline = s.indexOf("\n", pos);
        let end: number;
        let endsRecord: boolean;
        if (nextComma >= 0 && (nextComma < nextNewline || nextNewline < 0)) {
          end = nextComma;
          endsRecord = false;
        } else if (nextNewline >= 0) {
          end = nextNewline;
          endsRecord = true;
        } else {
          if (!final) return recordStart;
          end = n;
          endsRecord = true;
        }
        // Strip the CR of a CRLF.
        const valueEnd = endsRecord && end > pos && s.charCodeAt(end - 1) === 13 ? end - 1 : end;
        const value = s.slice(pos, valueEnd);
        if (value.includes('"')) fail(recordLine + newlinesInRecord, `quote inside an unquoted field (${show(value)}); quote the whole field`);
        if (value.includes("\r")) fail(recordLine + newlinesInRecord, "bare carriage return outside quotes (line ends must be LF or CRLF)");
        fields.push(value);
        pos = end + 1;
        if (endsRecord) {
          complete = true;
          break;
        }
        if (pos >= n && !final) return recordStart;
        if (pos >= n) {
          // A trailing ',' at end of file: one more, empty field.
          fields.push("");
          complete = true;
          break;
        }
      }
      if (!complete) return recordStart;
      // The record's own line ends (one per LF that ended it) advance the line count.
      record(recordLine);
      line = recordLine + newlinesInRecord + (pos <= n && s.charCodeAt(pos - 1) === 10 ? 1 : 0);
    }
    return n;
  };

  return {
    push(text) {
      const s = rest.length === 0 ? text : rest + text;
      const consumed = parse(s, false);
      rest = consumed === 0 ? s : s.slice(consumed);
    },
    finish() {
      if (rest.length > 0) parse(rest, true);
      rest = "";
    },
    nextLine() {
      return line + countNewlines(rest, 0, rest.length);
    },
  };
}

/**
 * The format of `path` (for a `.gz` input, its name without `.gz`; "" for standard input): by
 * extension (`.ndjson`/`.jsonl` → ndjson, `.json` → json, `.csv` → csv), else by the first
 * non-whitespace character of `head` (`[` → json, `{` → ndjson, anything else → csv). A `.json`
 * file whose content starts with `{` is read as NDJSON.
 */
export function detectFormat(path: string, head: string): InputFormat {
  const ext = extname(path).toLowerCase();
  let first = "";
  for (let i = 0; i < head.length; i++) {
    const ch = head.charAt(i);
    if (ch !== " " && ch !== "\t" && ch !== "\r" && ch !== "\n" && ch !== "\ufeff") {
      first = ch;
      break;
    }
  }
  if (ext === ".ndjson" || ext === ".jsonl") return "ndjson";
  if (ext === ".json") return first === "{" ? "ndjson" : "json";
  if (ext === ".csv") return "csv";
  if (first === "[") return "json";
  if (first === "{") return "ndjson";
  return "csv";
}

/**
 * The start of an incomplete UTF-8 sequence at the end of `bytes[0..end)`, or `end` when the
 * bytes end on a character boundary.
 */
function utf8CutPoint(bytes: Uint8Array, end: number): number {
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
function firstInvalidUtf8(bytes: Uint8Array, end: number): number {
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

/** A path of `-` stands for standard input. */
export const STDIN_PATH = "-";

/** The name standard input goes by in error messages. */
export const STDIN_NAME = "<stdin>";

/** The name of input `path` in error messages: the path as given, or `<stdin>` for `-`. */
export function inputName(path: string): string {
  return path === STDIN_PATH ? STDIN_NAME : path;
}

/** An input opened by {@link openInput}: its bytes, and what to call it. */
export interface InputSource {
  /** The name in error messages: the path as given, or `<stdin>` for `-`. */
  file: string;
  /** The name whose extension suggests the format ({@link detectFormat}): the path without `.gz`; "" for standard input. */
  formatName: string;
  /** True when the bytes are gunzipped as they are read (a path ending in `.gz`). */
  gzip: boolean;
  /**
   * The input's bytes (decompressed), in order. A chunk is valid only until the next one is
   * requested: the plain-file reader reads every chunk into the same buffer.
   */
  chunks: AsyncIterable<Uint8Array>;
  /** Bytes of the input on disk (compressed, for gzip); undefined for standard input. */
  totalBytes: number | undefined;
  /** Bytes taken from the input so far (compressed, for gzip). */
  bytesRead(): number;
  /** A guess of the decompressed size in bytes, to size the columns before reading; undefined when unknown. */
  sizeHint: number | undefined;
}

/** Bytes per read of a gzip file, and per chunk of its decompressed output. */
const GZIP_CHUNK_BYTES = 1 << 20;

/**
 * Opens an input for {@link readUserStream}: `-` is standard input, a path ending in `.gz`
 * (any case) is gunzipped while it is read (node:zlib; concatenated members are one stream),
 * anything else is a plain file read in chunks of `chunkBytes`.
 * @param options `chunkBytes`: bytes per read of a plain file (default {@link READ_CHUNK_BYTES});
 *   `stdin`: the stream `-` reads (default `process.stdin`).
 * @throws the file system's error when the file cannot be opened (ENOENT, EACCES, EISDIR…).
 */
export async function openInput(path: string, options: { chunkBytes?: number; stdin?: AsyncIterable<Uint8Array> } = {}): Promise<InputSource> {
  const chunkBytes = options.chunkBytes ?? READ_CHUNK_BYTES;
  if (!Number.isInteger(chunkBytes) || chunkBytes < 4) throw new RangeError(`chunkBytes must be an integer >= 4 (got ${chunkBytes})`);
  let bytesRead = 0;
  if (path === STDIN_PATH) {
    const stdin: AsyncIterable<Uint8Array> = options.stdin ?? process.stdin;
    const chunks = (async function* () {
      for await (const chunk of stdin) {
        bytesRead += chunk.length;
        yield chunk;
      }
    })();
    return { file: STDIN_NAME, formatName: "", gzip: false, chunks, totalBytes: undefined, bytesRead: () => bytesRead, sizeHint: undefined };
  }
  const handle = await open(path, "r");
  let totalBytes: number;
  try {
    totalBytes = (await handle.stat()).size;
  } catch (error) {
    await handle.close();
    throw error;
  }
  if (path.toLowerCase().endsWith(".gz")) {
    let sizeHint = totalBytes;
    try {
      // A gzip member ends with its uncompressed size mod 2^32 (RFC 1952 ISIZE): a good guess.
      if (totalBytes >= 18) {
        const trailer = Buffer.alloc(4);
        await handle.read(trailer, 0, 4, totalBytes - 4);
        sizeHint = Math.max(totalBytes, trailer.readUInt32LE(0));
      }
    } finally {
      await handle.close();
    }
    const chunks = (async function* () {
      const file = createReadStream(path, { highWaterMark: GZIP_CHUNK_BYTES });
      const gunzip = createGunzip({ chunkSize: GZIP_CHUNK_BYTES });
      // A read error or bad gzip data destroys `gunzip` with it, which the loop below throws.
      pipeline(file, gunzip, () => {});
      try {
        for await (const chunk of gunzip) {
          bytesRead = file.bytesRead;
          yield chunk as Buffer;
        }
        bytesRead = file.bytesRead;
      } finally {
        file.destroy();
        gunzip.destroy();
      }
    })();
    return { file: path, formatName: path.slice(0, -3), gzip: true, chunks, totalBytes, bytesRead: () => bytesRead, sizeHint };
  }
  const chunks = (async function* () {
    try {
      // One buffer for every read: a chunk is valid until the next is requested.
      const buffer = Buffer.allocUnsafe(chunkBytes);
      for (;;) {
        const { bytesRead: got } = await handle.read(buffer, 0, chunkBytes, null);
        if (got === 0) return;
        bytesRead += got;
        yield buffer.subarray(0, got);
      }
    } finally {
      await handle.close();
    }
  })();
  return { file: path, formatName: path, gzip: false, chunks, totalBytes, bytesRead: () => bytesRead, sizeHint: totalBytes };
}

/** Options of {@link readUserStream}. */
export interface StreamReadOptions {
  /** The format; default: from `formatName`, else the content ({@link detectFormat}). */
  format?: InputFormat;
  /** The name whose extension suggests the format; default: the `file` argument. */
  formatName?: string;
  /** Expected bytes, to size the columns up front (a guess: they grow past it). */
  sizeHint?: number;
  /** Called once the format is known, before the first record is parsed. */
  onFormat?: (format: InputFormat) => void;
  /** Called after each chunk has been parsed. */
  onChunk?: () => void;
}

/** Bytes of a new chunk joined to the bytes carried over from the previous one (more when the carried record is longer). */
const STITCH_BYTES = 64 << 10;

/** The index of the first byte in `bytes[from..]` that is not JSON whitespace (space, tab, CR, LF), or -1. */
function firstNonBlankByte(bytes: Uint8Array, from: number): number {
  for (let i = from; i < bytes.length; i++) {
    const b = bytes[i];
    // ' ' '\t' '\r' '\n'
    if (b !== 32 && b !== 9 && b !== 13 && b !== 10) return i;
  }
  return -1;
}

/** A failure of the byte stream itself as an IngestError when it is bad data (gzip), else the error unchanged. */
function streamError(file: string, line: number, error: unknown): unknown {
  const code = (error as { code?: unknown } | null)?.code;
  if (typeof code !== "string" || !code.startsWith("Z_")) return error;
  const message = error instanceof Error ? error.message : String(error);
  if (code === "Z_BUF_ERROR") return new IngestError(file, line, `the gzip data is truncated (${message})`);
  return new IngestError(file, line, `not valid gzip data (${message})`);
}

/**
 * Reads user records from a byte stream into columns, validating every record; the first bad
 * one stops the read. Chunks may end anywhere (inside a record or a UTF-8 character); the bytes
 * a record left over are joined to the head of the next chunk and the rest of that chunk is
 * parsed where it lies, so a plain file's bytes are not copied. A UTF-8 byte-order mark at the
 * start is skipped; the format is decided at the first byte that is not whitespace.
 *
 * @param chunks the bytes; a chunk need only stay valid until the next one is requested.
 * @param file the name in error messages (`<stdin>` for standard input).
 * @param options format, format name, size hint, and callbacks (see {@link StreamReadOptions}).
 * @returns columns of length n (records in input order); n is 0 for an empty or blank input.
 * @throws IngestError (`file:line: reason`) for the first bad record in input order (see
 *   {@link readUsers}), or for gzip data that is corrupt or truncated (on the line reached);
 *   other errors of the stream unchanged.
 */
export async function readUserStream(chunks: AsyncIterable<Uint8Array>, file: string, options: StreamReadOptions = {}): Promise<RawColumns> {
  const columns = new ColumnsBuilder();
  if (options.sizeHint !== undefined) columns.reserveFor(options.sizeHint);
  const formatName = options.formatName ?? file;
  // Set by `feed` once the format is known (declared so that the checker does not narrow it to null).
  let consumer = null as ByteConsumer | null;
  let bomChecked = false;
  // Bytes not consumed yet, carried over from earlier chunks (a copy): pending[0 .. carried).
  let pending = Buffer.allocUnsafe(STITCH_BYTES);
  let carried = 0;
  // After an offer that did not get past the carried bytes (a record longer than what came so
  // far), the next offer waits until they have doubled: a long record is rescanned O(log) times.
  let offerAt = 0;
  // Input offset of the first byte not consumed yet.
  let offset = 0;

  /** Offers `bytes` (starting at the first unconsumed byte) to the consumer; returns how many it consumed. */
  const feed = (bytes: Buffer, final: boolean): number => {
    let start = 0;
    if (consumer === null) {
      if (!bomChecked) {
        if (bytes.length < 3 && !final) return 0;
        bomChecked = true;
        // Skip a UTF-8 byte-order mark (EF BB BF).
        if (bytes.length >= 3 && bytes[0] === 0xef && bytes[1] === 0xbb && bytes[2] === 0xbf) start = 3;
      }
      // Wait for the first character that is not whitespace: it tells the format.
      if (!final && firstNonBlankByte(bytes, start) < 0) return start;
      const format = options.format ?? detectFormat(formatName, bytes.toString("utf8", start, Math.min(bytes.length, start + 4096)));
      consumer = format === "ndjson" ? ndjsonConsumer(file, columns) : textConsumer(file, format === "json" ? jsonArrayParser(file, columns) : csvParser(file, columns));
      options.onFormat?.(format);
    }
    return start + consumer.consume(start === 0 ? bytes : bytes.subarray(start), final, offset + start);
  };

  /** Makes `pending` hold at least `size` bytes, keeping its first `carried`. */
  const reservePending = (size: number): void => {
    if (pending.length >= size) return;
    const grown = Buffer.allocUnsafe(Math.max(size, pending.length * 2));
    pending.copy(grown, 0, 0, carried);
    pending = grown;
  };

  /** Parses what `chunk` completes; keeps a copy of what is left over. */
  const take = (chunk: Buffer): void => {
    let from = 0;
    // The consumer needs a record's bytes in one piece: join the carried bytes to the chunk's head.
    while (carried > 0 && from < chunk.length) {
      const size = Math.min(chunk.length - from, Math.max(STITCH_BYTES, carried));
      const total = carried + size;
      reservePending(total);
      chunk.copy(pending, carried, from, from + size);
      if (total < offerAt) {
        carried = total;
        from += size;
        continue;
      }
      const used = feed(pending.subarray(0, total), false);
      offset += used;
      if (used >= carried) {
        // Consumed past the carried bytes: the chunk goes on from the first unconsumed byte.
        from += used - carried;
        carried = 0;
        offerAt = 0;
      } else {
        // Still inside the carried record: keep all of it, with the bytes just joined.
        if (used > 0) pending.copyWithin(0, used, total);
        carried = total - used;
        from += size;
        offerAt = 2 * carried;
      }
    }
    if (from < chunk.length) {
      const rest = from === 0 ? chunk : chunk.subarray(from);
      const used = feed(rest, false);
      offset += used;
      const left = rest.length - used;
      reservePending(left);
      rest.copy(pending, 0, used);
      carried = left;
    }
  };

  const iterator = chunks[Symbol.asyncIterator]();
  try {
    for (;;) {
      let next: IteratorResult<Uint8Array>;
      try {
        next = await iterator.next();
      } catch (error) {
        throw streamError(file, consumer?.line() ?? 1, error);
      }
      if (next.done) break;
      const chunk = next.value;
      if (chunk.length === 0) continue;
      take(Buffer.isBuffer(chunk) ? chunk : Buffer.from(chunk.buffer, chunk.byteOffset, chunk.byteLength));
      options.onChunk?.();
    }
    feed(pending.subarray(0, carried), true);
    carried = 0;
    consumer?.finish();
    const duplicate = findFirstDuplicate(columns.ids, columns.n);
    if (duplicate !== null) throw duplicateError(file, columns, duplicate);
    return columns.finish();
  } catch (error) {
    // The first bad record in input order: a duplicate id on an earlier line wins.
    if (error instanceof IngestError && !error.reason.startsWith("duplicate id")) {
      const duplicate = findFirstDuplicate(columns.ids, columns.n);
      if (duplicate !== null) throw duplicateError(file, columns, duplicate);
    }
    throw error;
  } finally {
    // Closes the file (or stops the stream) when the read stopped early; nothing to do after the end.
    try {
      await iterator.return?.();
    } catch {}
  }
}

/**
 * Reads the user records of `path` into columns, validating every record; the first bad one
 * stops the read. `path` is a file, a `.gz` file (gunzipped while read) or `-` for standard
 * input ({@link openInput}). The format is `options.format`, else it comes from the extension
 * (for `.gz`, the one before it) with a content sniff as fallback ({@link detectFormat}); a plain
 * file is read in chunks of `options.chunkBytes` (default {@link READ_CHUNK_BYTES}), and only the
 * columns plus about one chunk are held.
 *
 * @param onProgress called after each chunk with the bytes taken from the input so far and its
 *   size in bytes (both compressed for gzip; the size is undefined for standard input).
 * @param options `chunkBytes`: bytes per read (default 8 MiB); `format`: the format, overriding
 *   detection; `onFormat`: told the format once it is known, and whether the input is gunzipped.
 * @returns columns of length n (records in input order); n is 0 for an empty or blank input
 *   (`snapshot build` refuses that: build-file.ts).
 * @throws IngestError (`file:line: reason`, file `<stdin>` for `-`) for the first bad record in
 *   input order: malformed JSON, a record that is not an object, a missing field, a wrong type,
 *   an id that is not a finite number (in CSV: not in the JSON number grammar), an id beyond
 *   ±2^53 (or one that parsing would round to ±2^53), a status outside STATUS_VALUES
 *   (case-insensitive), a lone surrogate, invalid UTF-8, a CSV header without the four columns,
 *   a CSV row of the wrong width, an unterminated quote, corrupt or truncated gzip data, or a
 *   duplicate id (reported on the later line). Any I/O error as thrown by node:fs.
 */
export async function readUsers(
  path: string,
  onProgress?: (bytesRead: number, totalBytes: number | undefined) => void,
  options?: ReadOptions,
): Promise<RawColumns> {
  const source = await openInput(path, { chunkBytes: options?.chunkBytes });
  const onFormat = options?.onFormat;
  const columns = await readUserStream(source.chunks, source.file, {
    format: options?.format,
    formatName: source.formatName,
    sizeHint: source.sizeHint,
    onFormat: onFormat === undefined ? undefined : (format) => onFormat({ file: source.file, format, gzip: source.gzip }),
    onChunk: onProgress === undefined ? undefined : () => onProgress(source.bytesRead(), source.totalBytes),
  });
  onProgress?.(source.bytesRead(), source.totalBytes);
  return columns;
}

/** The IngestError for a duplicate id found by {@link findFirstDuplicate}. */
function duplicateError(file: string, columns: ColumnsBuilder, duplicate: { index: number; firstIndex: number }): IngestError {
  const id = columns.ids[duplicate.index];
  return new IngestError(file, columns.lines[duplicate.index], `duplicate id ${id} (first seen on line ${columns.lines[duplicate.firstIndex]})`);
}
