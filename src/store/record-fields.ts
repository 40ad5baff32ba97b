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
import type { ColumnSpec, Schema } from "../schema/kinds.ts";

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
  /** Members scanned: one past the last kept member (the rest of a record is never read). */
  scanned: number;
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
  let scanned = 0;
  for (let m = 0; m < n; m++) {
    keyBytes[m] = schema.columns[m].id.length + 3;
    if (keep[m] === 1) scanned = m + 1;
  }
  return { columns: schema.columns.filter((_, m) => keep[m] === 1), keep, keyBytes, scanned };
}

/**
 * Writes the record `bytes[start .. end)` cut to the projection's members into `out` at `at`:
 * `{` + each kept member (`"id":value`, its bytes as stored) joined by commas + `}`. `out` must
 * have room for the whole record (a projection is never longer). Returns the index just past the
 * written record.
 * @throws Error when the record is not the layout the store writes (a corrupt store)
 */
export function writeProjected(bytes: Uint8Array, start: number, end: number, projection: Projection, out: Uint8Array, at: number): number {
  const { keep, keyBytes, scanned } = projection;
  out[at++] = OPEN_BRACE;
  let first = true;
  let i = start + 1;
  for (let m = 0; m < scanned; m++) {
    if (bytes[i] !== QUOTE || i >= end) throw new Error(`corrupt store: a record has no member ${m}`);
    const to = skipValue(bytes, i + keyBytes[m]);
    if (keep[m] === 1) {
      if (!first) out[at++] = COMMA;
      first = false;
      // a loop: members are tens of bytes, where a subarray view and a native copy cost more
      for (let k = i; k < to; k++) out[at++] = bytes[k];
    }
    // past the `,` before the next key (or the closing `}`)
    i = to + 1;
  }
  out[at++] = CLOSE_BRACE;
  return at;
}
