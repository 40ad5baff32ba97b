/**
 * What the key kinds do as the key (docs/api.md "Any users table: the schema", the key): the row
 * order — a number key numerically; a text key by code point, which is the byte order of its
 * UTF-8 (so a UUID orders as its hex string); input already in key order (the generator's, most
 * exports) is kept as is — and the checks of its values: never null, unique (`-0` and `0` are
 * one key), a text non-empty and at most {@link MAX_KEY_LENGTH} characters. Uniqueness is checked
 * without a JS value per row (bits/duplicates.ts). Number keys are within ±2^53 already: the
 * readers refuse a number a double would round.
 */
import { type ByteColumn, stringAt } from "../bits/byte-column.ts";
import { type Duplicate, firstDuplicateNumber, firstDuplicateText } from "../bits/duplicates.ts";
import { show } from "../schema/values.ts";
import type { ConvertedColumn } from "./convert.ts";
import type { KeyProblem, KeyRole } from "./kind.ts";

/** Most characters (UTF-16 code units) a text key may have, as a filter value may (docs/api.md "Any users table: the schema", the key). */
export const MAX_KEY_LENGTH = 256;

/** The reason for a null key value. */
function nullReason(id: string): string {
  return `key ${show(id)} is null or missing (every record needs a key)`;
}

/** The earlier of a bad row and a duplicate (the duplicate at its later row), or null. */
function firstProblem(bad: { row: number; reason: string } | null, duplicate: Duplicate | null, valueAt: (row: number) => number | string): KeyProblem | null {
  if (duplicate !== null && (bad === null || duplicate.index < bad.row)) return { row: duplicate.index, firstRow: duplicate.firstIndex, value: valueAt(duplicate.index) };
  return bad;
}

/**
 * The key role of a kind whose values are doubles (number).
 * @param doubles each row's value of a converted column, NaN for null (the column's own array: `-0` is made `0` in it)
 */
export function doublesKey(doubles: (values: ConvertedColumn) => Float64Array): KeyRole {
  return {
    order: (values) => orderNumbers(doubles(values)),
    check(id, values) {
      const numbers = doubles(values);
      const n = numbers.length;
      let bad: { row: number; reason: string } | null = null;
      for (let row = 0; row < n; row++) {
        const x = numbers[row];
        if (x !== x) {
          // NaN: null
          bad ??= { row, reason: nullReason(id) };
        } else if (x === 0) numbers[row] = 0;
      }
      return firstProblem(bad, firstDuplicateNumber(numbers, n), (row) => numbers[row]);
    },
  };
}

/**
 * The key role of a kind whose values are UTF-8 strings (text).
 * @param strings a converted column's strings and null rows
 */
export function stringsKey(strings: (values: ConvertedColumn) => { strings: ByteColumn; isNull: Uint8Array }): KeyRole {
  return {
    order: (values) => {
      const { bytes, offsets } = strings(values).strings;
      return orderUtf8(bytes, offsets);
    },
    check(id, values) {
      const { strings: column, isNull } = strings(values);
      const offsets = column.offsets;
      const n = isNull.length;
      let bad: { row: number; reason: string } | null = null;
      for (let row = 0; row < n && bad === null; row++) {
        if (isNull[row] !== 0) bad = { row, reason: nullReason(id) };
        else {
          const reason = textKeyReason(id, () => stringAt(column, row), offsets[row + 1] - offsets[row]);
          if (reason !== null) bad = { row, reason };
        }
      }
      return firstProblem(bad, firstDuplicateText(column, n, isNull), (row) => stringAt(column, row));
    },
  };
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
 * Numbers ascending: a native numeric sort of a copy, then each input position placed by
 * binary search — O(n log n) without a comparator callback. -0 and 0 are one key.
 */
function orderNumbers(values: Float64Array): Uint32Array | null {
  const n = values.length;
  let sorted = true;
  for (let i = 1; i < n; i++) {
    if (!(values[i - 1] < values[i])) {
      sorted = false;
      break;
    }
  }
  if (sorted) return null;
  const keys = values.slice().sort();
  for (let i = 1; i < n; i++) if (keys[i] === keys[i - 1]) throw new RangeError(`duplicate key ${keys[i]}`);
  const order = new Uint32Array(n);
  for (let i = 0; i < n; i++) {
    const x = values[i];
    let lo = 0;
    let hi = n - 1;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if (keys[mid] < x) lo = mid + 1;
      else hi = mid;
    }
    order[lo] = i;
  }
  return order;
}

/** Compares values a and b of a packed UTF-8 column by their bytes (= by code point). */
function compareBytes(bytes: Uint8Array, offsets: Uint32Array, a: number, b: number): number {
  let i = offsets[a];
  let j = offsets[b];
  const endA = offsets[a + 1];
  const endB = offsets[b + 1];
  while (i < endA && j < endB) {
    const d = bytes[i++] - bytes[j++];
    if (d !== 0) return d;
  }
  return endA - i - (endB - j);
}

/**
 * Strings ascending by code point (their UTF-8 bytes compared): a sort of the positions with a
 * byte comparator. Text keys are short (at most 256 characters), so the comparator costs a few
 * byte reads.
 */
function orderUtf8(bytes: Uint8Array, offsets: Uint32Array): Uint32Array | null {
  const n = offsets.length - 1;
  let sorted = true;
  for (let i = 1; i < n; i++) {
    if (compareBytes(bytes, offsets, i - 1, i) >= 0) {
      sorted = false;
      break;
    }
  }
  if (sorted) return null;
  const positions = new Array<number>(n);
  for (let i = 0; i < n; i++) positions[i] = i;
  positions.sort((a, b) => compareBytes(bytes, offsets, a, b));
  for (let i = 1; i < n; i++) {
    if (compareBytes(bytes, offsets, positions[i - 1], positions[i]) === 0) {
      const from = offsets[positions[i]];
      throw new RangeError(`duplicate key ${JSON.stringify(new TextDecoder().decode(bytes.subarray(from, offsets[positions[i] + 1])))}`);
    }
  }
  return Uint32Array.from(positions);
}
