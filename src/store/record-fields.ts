/**
 * Reading members of a stored record without parsing the whole record: records are
 * `{"<id0>":<v0>,"<id1>":<v1>,…}` with every column in schema order and no white space
 * (store/records.ts), so member i is found by skipping i members, each skipped by scanning its
 * key string and its value (a string, a number or literal, or a nested array or object of the
 * `json` kind) byte by byte. What a live replica reads a base row's text value with
 * (docs/live-replicas.md "Rank²"), in about a tenth of the time `JSON.parse` takes for the record;
 * and what a record is cut to the columns an access role sees with ({@link writeProjected},
 * docs/api.md "Access control"): the kept members copied as they are, in one pass over the record.
 */
import type { RecordValue } from "../kinds/kind.ts";
import { KINDS } from "../kinds/registry.ts";
import type { ColumnSpec, Schema } from "../schema/kinds.ts";
import { recordIn } from "./records.ts";
import type { ExtraRecords, Records } from "./types.ts";

const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const OPEN_BRACE = 0x7b;
const CLOSE_BRACE = 0x7d;
const OPEN_BRACKET = 0x5b;
const CLOSE_BRACKET = 0x5d;
const COMMA = 0x2c;
const COLON = 0x3a;

const decoder = new TextDecoder("utf-8", { ignoreBOM: true });

/** The index just after the JSON string that starts (with its quote) at `at`. */
function skipString(bytes: Uint8Array, at: number): number {
  let i = at + 1;
  for (;;) {
    const b = bytes[i];
    if (b === QUOTE) return i + 1;
    i += b === BACKSLASH ? 2 : 1;
  }
}

/** The index just after the JSON value that starts at `at` (no white space: records have none). */
function skipValue(bytes: Uint8Array, at: number): number {
  const b = bytes[at];
  if (b === QUOTE) return skipString(bytes, at);
  if (b === OPEN_BRACE || b === OPEN_BRACKET) {
    let depth = 0;
    let i = at;
    for (;;) {
      const c = bytes[i];
      if (c === QUOTE) {
        i = skipString(bytes, i);
        continue;
      }
      if (c === OPEN_BRACE || c === OPEN_BRACKET) depth++;
      else if (c === CLOSE_BRACE || c === CLOSE_BRACKET) {
        depth--;
        if (depth === 0) return i + 1;
      }
      i++;
    }
  }
  // a number or a literal: up to the next member separator or the record's end
  let i = at;
  while (bytes[i] !== COMMA && bytes[i] !== CLOSE_BRACE) i++;
  return i;
}

/**
 * Where member `index` (0-based, schema order) of the record `bytes[start .. end)` holds its
 * value: `[from, to)` in bytes.
 * @throws Error when the record has fewer members (a corrupt store)
 */
export function memberSpan(bytes: Uint8Array, start: number, end: number, index: number): { from: number; to: number } {
  let at = start + 1;
  for (let m = 0; ; m++) {
    if (at >= end || bytes[at - 1] === CLOSE_BRACE) throw new Error(`corrupt store: a record has no member ${index}`);
    at = skipString(bytes, at);
    if (bytes[at] !== COLON) throw new Error("corrupt store: a record's member has no value");
    const from = at + 1;
    const to = skipValue(bytes, from);
    if (m === index) return { from, to };
    at = to + 1;
  }
}

/**
 * The JSON value `bytes[from .. to)` decoded: a string without escapes straight from its bytes,
 * anything else through `JSON.parse`.
 */
export function decodeValue(bytes: Uint8Array, from: number, to: number): unknown {
  if (bytes[from] === QUOTE) {
    let plain = true;
    for (let i = from + 1; i < to - 1; i++) {
      if (bytes[i] === BACKSLASH) {
        plain = false;
        break;
      }
    }
    if (plain) return decoder.decode(bytes.subarray(from + 1, to - 1));
  }
  return JSON.parse(decoder.decode(bytes.subarray(from, to)));
}

/**
 * The members of a record that a projection keeps (docs/api.md "Access control": a column a
 * role does not see is absent from its records), made once per role and schema.
 */
export interface Projection {
  /** The kept columns, in schema order (what a CSV export's fields are). */
  columns: ColumnSpec[];
  /** Per member of a record (schema order), 1 when kept; length = the schema's columns. */
  keep: Uint8Array;
  /**
   * Per member, the bytes of its key with its quotes and colon (`"id":`, the id's length + 3:
   * column ids are ASCII without escapes); length = the schema's columns.
   */
  keyBytes: Uint32Array;
  /**
   * Per member, how its value is skipped, by its kind's `recordValue` (kind.ts): {@link VALUE_PLAIN}
   * (a number, a boolean or null), {@link VALUE_JSON} (any JSON value, scanned with its nesting:
   * json), or 0 (a string or null: text, enum, date, date-time); length = the schema's columns.
   */
  valueKinds: Uint8Array;
  /** The first member from which on every member is kept: the rest of a record is one run, never scanned (the member count when the last is hidden). */
  tailFrom: number;
  /** The first member from which on every member is left out: a record is never read past it (the member count when the last is kept). */
  stopAt: number;
}

/** A member's value is a number, a boolean or null: no quote, comma or brace in it. */
export const VALUE_PLAIN = 1;

/** The index just after a number or literal that starts at `at`: the next comma or closing brace. */
function skipPlain(bytes: Uint8Array, at: number): number {
  let i = at;
  while (bytes[i] !== COMMA && bytes[i] !== CLOSE_BRACE) i++;
  return i;
}

/** A member's value is a `json` column's (any JSON value): scanned with its nesting. */
export const VALUE_JSON = 2;

/** How a member is skipped, by the JSON its kind's values take in the records (kind.ts `RecordValue`). */
const VALUE_OF_RECORD: Record<RecordValue, number> = { string: 0, bare: VALUE_PLAIN, any: VALUE_JSON };

/** Most runs of kept members a record of `members` members can have, in span ints (2 a run). */
export function maxSpanInts(members: number): number {
  return 2 * (Math.ceil(members / 2) + 1);
}

/**
 * The projection of `schema`'s records onto the columns `ids` (each a column of the schema; the
 * kept members stay in schema order whatever the order of `ids`).
 * @throws Error for an id the schema lacks
 */
export function projectionOf(schema: Schema, ids: readonly string[]): Projection {
  const n = schema.columns.length;
  const keep = new Uint8Array(n);
  const keyBytes = new Uint32Array(n);
  for (const id of ids) {
    const index = schema.columns.findIndex((c) => c.id === id);
    if (index < 0) throw new Error(`internal: a projection names column "${id}", which the schema lacks`);
    keep[index] = 1;
  }
  let tailFrom = n;
  while (tailFrom > 0 && keep[tailFrom - 1] === 1) tailFrom--;
  let stopAt = n;
  while (stopAt > 0 && keep[stopAt - 1] === 0) stopAt--;
  if (tailFrom === n) tailFrom = n + 1;
  const valueKinds = new Uint8Array(n);
  for (let m = 0; m < n; m++) {
    keyBytes[m] = schema.columns[m].id.length + 3;
    valueKinds[m] = VALUE_OF_RECORD[KINDS[schema.columns[m].kind].recordValue];
  }
  return { columns: schema.columns.filter((_, m) => keep[m] === 1), keep, keyBytes, valueKinds, tailFrom, stopAt };
}

/**
 * The runs of kept members of the record `bytes[start .. end)`: `[from, to)` pairs (absolute
 * indices, each run from its first member's key to its last member's value, the commas between
 * them included) written into `spans`, in order. A record is scanned member by member only as
 * far as it must be: the
 * members from {@link Projection.tailFrom} on are one run to the record's end, those from
 * {@link Projection.stopAt} on are never read.
 * @param spans room for {@link maxSpanInts} of the schema's member count
 * @returns the ints written (2 a run)
 * @throws Error when the record is not the layout the store writes (a corrupt store)
 */
export function keptRuns(bytes: Uint8Array, start: number, end: number, projection: Projection, spans: Uint32Array): number {
  const { keep, keyBytes, valueKinds, tailFrom, stopAt } = projection;
  let n = 0;
  // the run being gathered: from its first member's key to its last member's value
  let runFrom = -1;
  let runTo = -1;
  let i = start + 1;
  const members = keep.length;
  for (let m = 0; m < members; m++) {
    if (i >= end || bytes[i] !== QUOTE) throw new Error(`corrupt store: a record has no member ${m}`);
    if (m === tailFrom) {
      // every member from here on is kept: up to the record's closing brace
      spans[n++] = runFrom < 0 ? i : runFrom;
      spans[n++] = end - 1;
      return n;
    }
    if (m === stopAt) break;
    const valueAt = i + keyBytes[m];
    // a string, a number or literal, or a json value (skipped with its nesting); measured: short
    // loops over the bytes cost less than a native search each (its call), records being tens of bytes
    const to = valueKinds[m] === VALUE_JSON ? skipValue(bytes, valueAt) : bytes[valueAt] === QUOTE ? skipString(bytes, valueAt) : skipPlain(bytes, valueAt);
    if (to >= end) throw new Error(`corrupt store: member ${m} of a record does not end`);
    if (keep[m] === 1) {
      if (runFrom < 0) runFrom = i;
      runTo = to;
    } else if (runFrom >= 0) {
      spans[n++] = runFrom;
      spans[n++] = runTo;
      runFrom = -1;
    }
    // past the `,` before the next key (or the closing `}`)
    i = to + 1;
  }
  if (runFrom >= 0) {
    spans[n++] = runFrom;
    spans[n++] = runTo;
  }
  return n;
}

/** Spans of one record, reused by {@link writeProjected} (a record has at most 255 + 1 runs' worth of members here: grown when needed). */
let spanScratch = new Uint32Array(64);

/**
 * Writes the record `bytes[start .. end)` cut to the projection's members into `out` at `at`:
 * `{` + each kept member (`"id":value`, its bytes as stored) joined by commas + `}`, each run of
 * kept members copied whole ({@link keptRuns}). `out` must have room for the whole record (a
 * projection is never longer). Returns the index just past the written record.
 * @throws Error when the record is not the layout the store writes (a corrupt store)
 */
export function writeProjected(bytes: Uint8Array, start: number, end: number, projection: Projection, out: Uint8Array, at: number): number {
  const need = maxSpanInts(projection.keep.length);
  if (spanScratch.length < need) spanScratch = new Uint32Array(need);
  const spans = spanScratch;
  const n = keptRuns(bytes, start, end, projection, spans);
  out[at++] = OPEN_BRACE;
  for (let k = 0; k < n; k += 2) {
    if (k > 0) out[at++] = COMMA;
    out.set(bytes.subarray(spans[k], spans[k + 1]), at);
    at += spans[k + 1] - spans[k];
  }
  out[at++] = CLOSE_BRACE;
  return at;
}

/** The span of one record, reused by {@link writeProjectedRecords}. */
const recordSpanScratch = new Float64Array(2);

/**
 * Writes the records of `rows` (the store's, or `extra`'s from `extra.first` on) cut to the
 * projection's members ({@link writeProjected}) into `out` from `at`, `separator` between two
 * records (and after the last too when `terminated`: NDJSON's line feeds). `out` must have room
 * for the whole records and the separators.
 * @returns the index just past what was written
 * @throws Error when a record is not the layout the store writes (a corrupt store)
 */
export function writeProjectedRecords(records: Records, extra: ExtraRecords | null, rows: Uint32Array, projection: Projection, out: Uint8Array, at: number, separator: number, terminated: boolean): number {
  const span = recordSpanScratch;
  for (let i = 0; i < rows.length; i++) {
    if (i > 0 && !terminated) out[at++] = separator;
    const bytes = recordIn(records, extra, rows[i], span);
    at = writeProjected(bytes, span[0], span[1], projection, out, at);
    if (terminated) out[at++] = separator;
  }
  return at;
}

/**
 * Where every member of the record `bytes[start .. end)` holds its value, in one pass:
 * member i's value is `bytes[spans[2i] .. spans[2i + 1])`.
 * @param spans room for 2 × the record's members
 * @throws Error when the record has fewer members than `spans` has room for (a corrupt store)
 */
export function memberSpans(bytes: Uint8Array, start: number, end: number, spans: Uint32Array): void {
  let at = start + 1;
  const members = spans.length >>> 1;
  for (let m = 0; m < members; m++) {
    if (at >= end) throw new Error(`corrupt store: a record has no member ${m}`);
    at = skipString(bytes, at);
    if (bytes[at] !== COLON) throw new Error("corrupt store: a record's member has no value");
    const from = at + 1;
    const to = skipValue(bytes, from);
    spans[2 * m] = from;
    spans[2 * m + 1] = to;
    at = to + 1;
  }
}
