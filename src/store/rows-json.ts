/**
 * Serializes rows straight from the columns to JSON bytes: the string columns already hold
 * JSON literals, so a page is byte copies plus the ids' decimal forms, with no parse or
 * stringify of records on the hot path.
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

/**
 * Writes `[record, …]` for `rows` (row numbers, in order) as UTF-8 JSON bytes: each record is
 * `{"id":…,"name":…,"email":…,"status":…}`, the seed's user record.
 * @returns a new byte array of exactly the JSON's length.
 */
export function rowsToJson(store: Store, rows: Uint32Array): Uint8Array {
  const name = store.strings.name;
  const email = store.strings.email;
  const idTexts: string[] = new Array(rows.length);
  let size = 2;
  for (let i = 0; i < rows.length; i++) {
    const row = rows[i];
    const idText = String(store.ids[row]);
    idTexts[i] = idText;
    size +=
      ID_KEY.length +
      idText.length +
      NAME_KEY.length +
      (name.jsonOffsets[row + 1] - name.jsonOffsets[row]) +
      EMAIL_KEY.length +
      (email.jsonOffsets[row + 1] - email.jsonOffsets[row]) +
      STATUS_TAILS[store.statusCodes[row]].length +
      1;
  }
  const out = new Uint8Array(size);
  let at = 0;
  out[at++] = 0x5b; // '['
  for (let i = 0; i < rows.length; i++) {
    const row = rows[i];
    if (i > 0) out[at++] = 0x2c; // ','
    out.set(ID_KEY, at);
    at += ID_KEY.length;
    at += encoder.encodeInto(idTexts[i], out.subarray(at)).written;
    out.set(NAME_KEY, at);
    at += NAME_KEY.length;
    out.set(name.json.subarray(name.jsonOffsets[row], name.jsonOffsets[row + 1]), at);
    at += name.jsonOffsets[row + 1] - name.jsonOffsets[row];
    out.set(EMAIL_KEY, at);
    at += EMAIL_KEY.length;
    out.set(email.json.subarray(email.jsonOffsets[row], email.jsonOffsets[row + 1]), at);
    at += email.jsonOffsets[row + 1] - email.jsonOffsets[row];
    const tail = STATUS_TAILS[store.statusCodes[row]];
    out.set(tail, at);
    at += tail.length;
  }
  out[at++] = 0x5d; // ']'
  return out.subarray(0, at);
}

/** The record of one row, decoded (for tests and tools; the server uses {@link rowsToJson}). */
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
