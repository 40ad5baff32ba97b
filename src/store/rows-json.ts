/**
 * Serializes rows straight from the columns to JSON bytes: the string columns already hold
 * JSON literals, so a page is byte copies plus the ids' decimal forms, with no parse or
 * stringify of records and no allocation per row on the hot path.
 */
import { STATUS_VALUES, type UserRecord } from "../schema.ts";
import type { Store } from "./types.ts";

const encoder = new TextEncoder();
const decoder = new TextDecoder();

/** `,"status":"<value>"}` per status code, pre-encoded. */
const STATUS_TAILS = STATUS_VALUES.map((v) => encoder.encode(`,"status":"${v}"}`));
const NAME_KEY = encoder.encode(',"name":');
const EMAIL_KEY = encoder.encode(',"email":');
const ID_KEY = encoder.encode('{"id":');
/** Fixed bytes of one record: keys and punctuation, without the values. */
const RECORD_FIXED = ID_KEY.length + NAME_KEY.length + EMAIL_KEY.length;

/** Largest integer whose digits are written by hand (beyond it, String() decides the form). */
const MAX_PLAIN_INTEGER = 1e15;

/** Decimal length of an id as JSON writes it (String(id)). */
function idLength(id: number): number {
  if (Number.isInteger(id) && id > -MAX_PLAIN_INTEGER && id < MAX_PLAIN_INTEGER) {
    let x = id < 0 ? -id : id;
    let len = id < 0 ? 2 : 1;
    while (x >= 10) {
      x = Math.floor(x / 10);
      len++;
    }
    return id === 0 ? 1 : len;
  }
  return String(id).length;
}

/** Writes String(id) as ASCII at `at`; returns the new end. */
function writeId(out: Uint8Array, at: number, id: number): number {
  if (Number.isInteger(id) && id > -MAX_PLAIN_INTEGER && id < MAX_PLAIN_INTEGER) {
    if (id === 0) {
      out[at++] = 0x30; // '0' (also for -0, as String(-0) is "0")
      return at;
    }
    if (id < 0) {
      out[at++] = 0x2d; // '-'
      id = -id;
    }
    const end = at + idLength(id);
    for (let p = end - 1; p >= at; p--) {
      out[p] = 0x30 + (id % 10);
      id = Math.floor(id / 10);
    }
    return end;
  }
  const text = String(id);
  for (let i = 0; i < text.length; i++) out[at++] = text.charCodeAt(i);
  return at;
}

/**
 * Writes `prefix + [record, …] + suffix` as one UTF-8 JSON byte array for `rows` (row
 * numbers, in order); each record is `{"id":…,"name":…,"email":…,"status":…}`, the seed's
 * user record.
 * @param prefix bytes before the array (e.g. `{"data":`), or empty
 * @param suffix bytes after it (e.g. `,"total":42}`), or empty
 * @returns a new byte array of exactly the body's length
 */
export function writeRowsJson(store: Store, rows: Uint32Array, prefix: Uint8Array, suffix: Uint8Array): Uint8Array<ArrayBuffer> {
  const name = store.strings.name;
  const email = store.strings.email;
  const nameOffsets = name.jsonOffsets;
  const emailOffsets = email.jsonOffsets;
  const ids = store.ids;
  const codes = store.statusCodes;
  let size = prefix.length + suffix.length + 2 + Math.max(0, rows.length - 1);
  for (let i = 0; i < rows.length; i++) {
    const row = rows[i];
    size +=
      RECORD_FIXED +
      idLength(ids[row]) +
      (nameOffsets[row + 1] - nameOffsets[row]) +
      (emailOffsets[row + 1] - emailOffsets[row]) +
      STATUS_TAILS[codes[row]].length;
  }
  const out = new Uint8Array(size);
  out.set(prefix, 0);
  let at = prefix.length;
  out[at++] = 0x5b; // '['
  const nameBytes = name.json;
  const emailBytes = email.json;
  for (let i = 0; i < rows.length; i++) {
    const row = rows[i];
    if (i > 0) out[at++] = 0x2c; // ','
    // inlined byte copies: cheaper than subarray + set for values of tens of bytes
    for (let j = 0; j < ID_KEY.length; j++) out[at++] = ID_KEY[j];
    at = writeId(out, at, ids[row]);
    for (let j = 0; j < NAME_KEY.length; j++) out[at++] = NAME_KEY[j];
    for (let j = nameOffsets[row], end = nameOffsets[row + 1]; j < end; j++) out[at++] = nameBytes[j];
    for (let j = 0; j < EMAIL_KEY.length; j++) out[at++] = EMAIL_KEY[j];
    for (let j = emailOffsets[row], end = emailOffsets[row + 1]; j < end; j++) out[at++] = emailBytes[j];
    const tail = STATUS_TAILS[codes[row]];
    for (let j = 0; j < tail.length; j++) out[at++] = tail[j];
  }
  out[at++] = 0x5d; // ']'
  out.set(suffix, at);
  return out;
}

const EMPTY = new Uint8Array(0);

/** `[record, …]` for `rows` as UTF-8 JSON bytes ({@link writeRowsJson} without prefix or suffix). */
export function rowsToJson(store: Store, rows: Uint32Array): Uint8Array<ArrayBuffer> {
  return writeRowsJson(store, rows, EMPTY, EMPTY);
}

/** The record of one row, decoded (for tests and tools; the server uses {@link writeRowsJson}). */
export function recordAt(store: Store, row: number): UserRecord {
  const name = store.strings.name;
  const email = store.strings.email;
  return {
    id: store.ids[row],
    name: JSON.parse(decoder.decode(name.json.subarray(name.jsonOffsets[row], name.jsonOffsets[row + 1]))),
    email: JSON.parse(decoder.decode(email.json.subarray(email.jsonOffsets[row], email.jsonOffsets[row + 1]))),
    status: STATUS_VALUES[store.statusCodes[row]],
  };
}
