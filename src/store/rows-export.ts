/**
 * Rows as export bodies (docs/api.md "Export"): NDJSON (each row's record and a line feed) and
 * CSV (RFC 4180: fields separated by commas, records by CRLF, a field quoted when it holds a
 * comma, a double quote, CR or LF, its double quotes doubled), both written straight from the
 * records' bytes: a CSV field is the record's value with its JSON quoting undone, scanned byte
 * by byte, so an export neither parses nor builds a JS object per row.
 */
import { KINDS } from "../kinds/registry.ts";
import type { Schema } from "../schema/kinds.ts";
import { type Projection, writeProjectedRecords } from "./record-fields.ts";
import { recordsLength } from "./records.ts";
import type { ExtraRecords, Store } from "./types.ts";

const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const COMMA = 0x2c;
const CR = 0x0d;
const LF = 0x0a;
const encoder = new TextEncoder();
const decoder = new TextDecoder();

/**
 * The CSV header line: the column ids in schema order, CRLF-terminated (ids need no quoting:
 * `[A-Za-z0-9_]`); of an access role's schema, its columns alone.
 */
export function csvHeader(schema: Schema): Uint8Array {
  return encoder.encode(`${schema.columns.map((c) => c.id).join(",")}\r\n`);
}

/**
 * The NDJSON lines of `rows`: each row's record (docs/api.md "Export": one record per line),
 * then a line feed.
 * @param rows store rows, in the order written
 * @param into a buffer to write into (reused: the result is a view of it, valid until the next
 *   write into it); a new array when absent
 * @param extra the records of rows beyond the store's (a live replica's changed rows), if any
 * @param projection the columns each record keeps (an access role's: record-fields.ts), or null for every one
 * @throws Error when a record is corrupt (with a projection)
 */
export function rowsNdjson(store: Store, rows: Uint32Array, into?: ExportBuffer, extra: ExtraRecords | null = null, projection: Projection | null = null): Uint8Array {
  const out = room(into, recordsLength(store.records, rows, extra) + rows.length);
  if (projection !== null) return projectedNdjson(store, rows, out, extra, projection);
  const { offsets, chunkShift } = store.records;
  const chunks = chunkBuffers(store);
  let at = 0;
  for (let i = 0; i < rows.length; i++) {
    const row = rows[i];
    if (extra !== null && row >= extra.first) {
      const start = extra.offsets[row - extra.first];
      const end = extra.offsets[row - extra.first + 1];
      out.set(extra.bytes.subarray(start, end), at);
      at += end - start;
      out[at++] = LF;
      continue;
    }
    const c = row >>> chunkShift;
    const start = offsets[row + c];
    const end = offsets[row + c + 1];
    // a native copy by offsets: no view object a row (millions of them outrun the collector)
    chunks[c].copy(out, at, start, end);
    at += end - start;
    out[at++] = LF;
  }
  return out.subarray(0, at);
}

/** The NDJSON lines of `rows` cut to the projection's columns, written into `out` (room for the whole records). */
function projectedNdjson(store: Store, rows: Uint32Array, out: Uint8Array, extra: ExtraRecords | null, projection: Projection): Uint8Array {
  return out.subarray(0, writeProjectedRecords(store.records, extra, rows, projection, out, 0, LF, true));
}

/**
 * The CSV records of `rows`, CRLF-terminated, one field per schema column (or per column of the
 * projection): null as an empty
 * field, the empty string as `""` (so the two stay apart), a string as its characters, a
 * number or boolean as the record writes it, a `json` column's value as its JSON text
 * (docs/api.md "Export").
 * @param rows store rows, in the order written
 * @param into a buffer to write into, as for {@link rowsNdjson}
 * @param extra as for {@link rowsNdjson}
 * @param projection as for {@link rowsNdjson}
 * @throws Error when a record is not the layout the store writes (a corrupt store)
 */
export function rowsCsv(store: Store, rows: Uint32Array, into?: ExportBuffer, extra: ExtraRecords | null = null, projection: Projection | null = null): Uint8Array {
  const columns = projection === null ? store.schema.columns : projection.columns;
  const fields = columns.length;
  const raw = new Uint8Array(fields);
  // bytes of each field's key with its quotes and colon: `"id":`
  const keyBytes = new Uint32Array(fields);
  for (let f = 0; f < fields; f++) {
    // a value of any JSON (json) is written as its JSON text, a string's quotes included
    raw[f] = KINDS[columns[f].kind].recordValue === "any" ? 1 : 0;
    keyBytes[f] = columns[f].id.length + 3;
  }
  // each byte at most doubled (quotes), plus two quotes a field and the separators
  let out: Uint8Array = room(into, 2 * recordsLength(store.records, rows, extra) + rows.length * (3 * fields + 2));
  let at = 0;
  // The batch's records gathered first (native copies, as NDJSON lines) into a small buffer that
  // the byte loop below reads: read in place, the mapped records (one chunk can pass 2 GiB) sent
  // the loop down the runtime's slow path for large typed arrays (measured: 10M wide rows at
  // 0.19M rows/s, against 1.2M from a gathered copy).
  const src = rowsNdjson(store, rows, gathered, extra, projection);
  const bytes = src;
  let next = 0;
  for (let r = 0; r < rows.length; r++) {
    const row = rows[r];
    const end = src.indexOf(LF, next);
    let i = next + 1;
    next = end + 1;
    for (let f = 0; f < fields; f++) {
      if (f > 0) out[at++] = COMMA;
      // the key: `"id":` (column ids are ASCII without escapes: their length is known)
      i += keyBytes[f];
      const b = bytes[i];
      if (b === QUOTE && raw[f] === 0) {
        // a string: its content, unescaped when it has escapes, quoted when CSV needs it
        let j = i + 1;
        let escaped = false;
        let comma = false;
        while (bytes[j] !== QUOTE) {
          if (bytes[j] === BACKSLASH) {
            escaped = true;
            j += 2;
          } else {
            if (bytes[j] === COMMA) comma = true;
            j++;
          }
        }
        if (escaped) {
          // decoded from a copy of the literal: a view into the mapped records made the decoder touch far more of them
          const text = JSON.parse(decoder.decode(bytes.slice(i, j + 1))) as string;
          const encoded = encoder.encode(text);
          if (at + 2 * encoded.length + 2 > out.length) {
            out = grown(out, at + 2 * encoded.length + 2);
            if (into !== undefined) into.bytes = out;
          }
          at = writeQuoted(out, at, encoded, 0, encoded.length, /[",\r\n]/.test(text));
        } else if (j === i + 1) {
          out[at++] = QUOTE;
          out[at++] = QUOTE;
        } else {
          at = writeQuoted(out, at, bytes, i + 1, j, comma);
        }
        i = j + 1;
      } else if (b === 0x6e) {
        // null: an empty field
        i += 4;
      } else {
        // a number, true or false, or a json value: its JSON text up to the field's end
        let j = i;
        let depth = 0;
        let quoteOrComma = false;
        while (j < end) {
          const c = bytes[j];
          if (c === QUOTE) {
            quoteOrComma = true;
            j++;
            while (bytes[j] !== QUOTE) j += bytes[j] === BACKSLASH ? 2 : 1;
          } else if (c === 0x7b || c === 0x5b) depth++;
          else if (c === 0x7d || c === 0x5d) {
            if (depth === 0) break;
            depth--;
          } else if (c === COMMA) {
            if (depth === 0) break;
            quoteOrComma = true;
          }
          j++;
        }
        at = writeQuoted(out, at, bytes, i, j, quoteOrComma);
        i = j;
      }
      // past the `,` before the next key, or the closing `}`
      i++;
    }
    if (i !== end) throw new Error(`corrupt store: record ${row} does not have the schema's ${fields} fields`);
    out[at++] = CR;
    out[at++] = LF;
  }
  return out.subarray(0, at);
}

/** Writes `src[from, to)` at `at`, inside double quotes with its quotes doubled when `quote`; returns the new end. */
function writeQuoted(out: Uint8Array, at: number, src: Uint8Array, from: number, to: number, quote: boolean): number {
  if (!quote) {
    // a loop: a subarray view per field (of the mapped records) costs more than the copy, and
    // millions of them outrun the collector (measured: GBs of heap at 10M rows)
    for (let k = from; k < to; k++) out[at++] = src[k];
    return at;
  }
  out[at++] = QUOTE;
  for (let k = from; k < to; k++) {
    const c = src[k];
    if (c === QUOTE) out[at++] = QUOTE;
    out[at++] = c;
  }
  out[at++] = QUOTE;
  return at;
}

/** Per records chunk, a Buffer over the same bytes (for `Buffer#copy`, which takes offsets). */
const chunkBufferCache = new WeakMap<Uint8Array, Buffer>();

/** The store's records chunks as Buffers over the same memory (no copy). */
function chunkBuffers(store: Store): Buffer[] {
  return store.records.chunks.map((chunk) => {
    let buffer = chunkBufferCache.get(chunk);
    if (buffer === undefined) {
      buffer = Buffer.from(chunk.buffer, chunk.byteOffset, chunk.byteLength);
      chunkBufferCache.set(chunk, buffer);
    }
    return buffer;
  });
}

/** A reusable output buffer of {@link rowsCsv} and {@link rowsNdjson}: grown as needed, never shrunk. */
export interface ExportBuffer {
  bytes: Uint8Array;
}

/** Where {@link rowsCsv} gathers a batch's records before reading them (one per process). */
const gathered: ExportBuffer = { bytes: new Uint8Array(1 << 20) };

/** `into`'s bytes when they hold `bytes` (grown otherwise), or a new array. */
function room(into: ExportBuffer | undefined, bytes: number): Uint8Array {
  if (into === undefined) return new Uint8Array(bytes);
  if (into.bytes.length < bytes) into.bytes = new Uint8Array(Math.max(bytes, into.bytes.length * 2));
  return into.bytes;
}

/** A copy of `a` with room for `capacity` bytes. */
function grown(a: Uint8Array, capacity: number): Uint8Array {
  const out = new Uint8Array(Math.max(capacity, a.length * 2));
  out.set(a);
  return out;
}
