/**
 * The key column's own checks (docs/api.md "Any users table", the key): never null, unique, a
 * number within ±2^53 (`-0` and `0` are one key) or a non-empty text of at most
 * {@link MAX_KEY_LENGTH} characters. Uniqueness is checked without a JS value per row: a number
 * key by a native sort of a copy, a text key by a native sort of 53-bit hashes of its bytes, and
 * only the few values that share a hash are compared as strings.
 */
import { type ByteColumn, stringAt } from "../bits/byte-column.ts";
import { inferKeyKind } from "../schema/infer.ts";
import { parseNumberText } from "../schema/values.ts";
import { MAX_KEY_LENGTH } from "./limits.ts";
import { RAW, type RawColumn } from "../schema/raw-column.ts";
import { show } from "./records.ts";

/** A duplicate: the row of the later value, and the row where it was first seen (input order). */
export interface Duplicate {
  index: number;
  firstIndex: number;
}

/**
 * The first duplicate in input order among `values[0..n)`: the first row whose value was already
 * seen, and where it was first seen; or null when all are distinct. NaN (null) never repeats;
 * `-0` equals `0`. Strictly ascending values are recognised in one pass; otherwise a
 * Float64Array copy is sorted (native, O(n log n)) and neighbours compared; only when some value
 * repeats is there a second scan, with a Map of the repeated values only.
 */
export function firstDuplicateNumber(values: Float64Array, n: number): Duplicate | null {
  // Strictly ascending values (generated files, most exports) cannot repeat: no sort needed.
  let ascending = true;
  for (let i = 1; i < n; i++) {
    if (!(values[i - 1] < values[i])) {
      ascending = false;
      break;
    }
  }
  if (ascending) return null;
  const sorted = values.slice(0, n);
  sorted.sort();
  let repeated: Set<number> | null = null;
  for (let i = 1; i < n; i++) {
    if (sorted[i] === sorted[i - 1]) {
      if (repeated === null) repeated = new Set();
      // + 0: -0 and 0 are one value (a Set tells them apart otherwise)
      repeated.add(sorted[i] + 0);
    }
  }
  if (repeated === null) return null;
  const firstSeen = new Map<number, number>();
  for (let i = 0; i < n; i++) {
    const value = values[i] + 0;
    if (!repeated.has(value)) continue;
    const first = firstSeen.get(value);
    if (first !== undefined) return { index: i, firstIndex: first };
    firstSeen.set(value, i);
  }
  return null;
}

/** 2^21: the hash below is a 32-bit FNV-1a times this, plus the length's low 21 bits (53 bits in all: exact in a double). */
const LENGTH_SLOTS = 2 ** 21;

/**
 * The first duplicate in input order among the strings `strings` (n values; rows with
 * `isNull[row]` set are skipped), compared as bytes (well-formed UTF-8: equal bytes are equal
 * strings). Each value is hashed into a double (no JS string per row), the hashes sorted natively,
 * and only values whose hash repeats are compared as strings.
 */
export function firstDuplicateText(strings: ByteColumn, n: number, isNull?: Uint8Array): Duplicate | null {
  const { bytes, offsets } = strings;
  const hashes = new Float64Array(n);
  for (let row = 0; row < n; row++) {
    if (isNull !== undefined && isNull[row] !== 0) {
      hashes[row] = Number.NaN;
      continue;
    }
    const from = offsets[row];
    const to = offsets[row + 1];
    // FNV-1a, 32-bit (inlined for speed)
    let h = 0x811c9dc5;
    for (let p = from; p < to; p++) h = Math.imul(h ^ bytes[p], 0x01000193);
    hashes[row] = (h >>> 0) * LENGTH_SLOTS + ((to - from) % LENGTH_SLOTS);
  }
  const sorted = hashes.slice();
  sorted.sort();
  let repeated: Set<number> | null = null;
  for (let i = 1; i < n; i++) {
    if (sorted[i] === sorted[i - 1]) {
      if (repeated === null) repeated = new Set();
      repeated.add(sorted[i]);
    }
  }
  if (repeated === null) return null;
  const firstSeen = new Map<string, number>();
  for (let row = 0; row < n; row++) {
    if (!repeated.has(hashes[row])) continue;
    const value = stringAt(strings, row);
    const first = firstSeen.get(value);
    if (first !== undefined) return { index: row, firstIndex: first };
    firstSeen.set(value, row);
  }
  return null;
}

/** The reason for a duplicate key: `duplicate key 42 (first seen on line 7)`, a text key quoted. */
export function duplicateKeyReason(value: number | string, firstLine: number): string {
  return `duplicate key ${typeof value === "string" ? show(value) : String(value)} (first seen on line ${firstLine})`;
}

/**
 * Why a text key value is refused, or null: empty, or longer than {@link MAX_KEY_LENGTH}
 * characters (UTF-16 code units, as a filter value is counted). `byteLength` is the value's
 * UTF-8 length: at most 256 bytes is at most 256 characters, so only longer values are decoded.
 */
export function textKeyReason(key: string, value: () => string, byteLength: number): string | null {
  if (byteLength === 0) return `key ${show(key)} is empty (a text key is a non-empty string)`;
  if (byteLength <= MAX_KEY_LENGTH) return null;
  const text = value();
  if (text.length <= MAX_KEY_LENGTH) return null;
  return `key ${show(key)} has ${text.length} characters (${show(text)}); a text key has at most ${MAX_KEY_LENGTH}`;
}

/**
 * The first duplicate among the first `rows` values of the key's raw column, as far as they can
 * be told before the key's kind is decided (the reader uses it so that a duplicate on an earlier
 * line wins over a later bad record): by number when every value so far is one (a CSV field in
 * the JSON number grammar is parsed), else by string. Null when there is none, or when the values
 * do not all fit that reading (the conversion will say why).
 */
export function rawKeyDuplicate(column: RawColumn, rows: number): { duplicate: Duplicate; value: number | string } | null {
  const n = Math.min(rows, column.count);
  const { tags, numbers, strings } = column;
  const view: ByteColumn = { bytes: strings.bytes, offsets: strings.offsets.subarray(0, n + 1) };
  if (inferKeyKind(column.profile) === "number") {
    const values = new Float64Array(n);
    for (let row = 0; row < n; row++) {
      const tag = tags[row];
      if (tag === RAW.NUMBER) values[row] = numbers[row];
      else if (tag === RAW.TEXT) {
        values[row] = parseNumberText(stringAt(view, row));
        if (Number.isNaN(values[row])) return null;
      } else values[row] = Number.NaN;
    }
    const duplicate = firstDuplicateNumber(values, n);
    return duplicate === null ? null : { duplicate, value: values[duplicate.index] + 0 };
  }
  const isNull = new Uint8Array(n);
  for (let row = 0; row < n; row++) if (tags[row] !== RAW.STRING && tags[row] !== RAW.TEXT) isNull[row] = 1;
  const duplicate = firstDuplicateText(view, n, isNull);
  return duplicate === null ? null : { duplicate, value: stringAt(view, duplicate.index) };
}
