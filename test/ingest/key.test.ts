/**
 * The key column's checks (src/ingest/key.ts): duplicates found by sorting (numbers) or hashing
 * (texts) and reported in input order, text keys' emptiness and length, and the duplicate a
 * reader reports before the key's kind is decided.
 */
import { describe, expect, test } from "bun:test";
import fc from "fast-check";
import { packStrings } from "../../src/bits/byte-column.ts";
import { duplicateKeyReason, firstDuplicateNumber, firstDuplicateText, rawKeyDuplicate, textKeyReason } from "../../src/ingest/key.ts";
import { addJsonValue, addTextValue, rawColumn } from "../../src/ingest/raw-column.ts";

/** The first duplicate by a Map, in input order: the oracle. */
function naive<T>(values: T[], same: (v: T) => unknown = (v) => v): { index: number; firstIndex: number } | null {
  const seen = new Map<unknown, number>();
  for (let i = 0; i < values.length; i++) {
    const k = same(values[i]);
    if (k === null || (typeof k === "number" && Number.isNaN(k))) continue;
    const first = seen.get(k);
    if (first !== undefined) return { index: i, firstIndex: first };
    seen.set(k, i);
  }
  return null;
}

describe("duplicates", () => {
  test("numbers: the first repeat in input order; -0 is 0; NaN (null) never repeats", () => {
    expect(firstDuplicateNumber(Float64Array.of(1, 7, 3, 4, 7, 3), 6)).toEqual({ index: 4, firstIndex: 1 });
    expect(firstDuplicateNumber(Float64Array.of(0, 5, -0), 3)).toEqual({ index: 2, firstIndex: 0 });
    expect(firstDuplicateNumber(Float64Array.of(Number.NaN, 1, Number.NaN), 3)).toBeNull();
    expect(firstDuplicateNumber(Float64Array.of(1, 2, 3), 3)).toBeNull();
    const ids = new Float64Array(1_000_000);
    for (let i = 0; i < ids.length; i++) ids[i] = (i * 7919) % 1_000_003;
    expect(firstDuplicateNumber(ids, ids.length)).toBeNull();
    ids[900_000] = ids[10];
    ids[950_000] = ids[5];
    expect(firstDuplicateNumber(ids, ids.length)).toEqual({ index: 900_000, firstIndex: 10 });
    fc.assert(
      fc.property(fc.array(fc.oneof(fc.integer({ min: -5, max: 5 }), fc.constant(-0), fc.constant(Number.NaN), fc.double()), { maxLength: 30 }), (values) => {
        expect(firstDuplicateNumber(Float64Array.from(values), values.length)).toEqual(naive(values, (v) => (Number.isNaN(v) ? v : v + 0)));
      }),
    );
  });

  test("texts: compared as bytes, nulls skipped, the first repeat in input order", () => {
    const uuids = Array.from({ length: 100_000 }, (_, i) => `a0eebc99-9c0b-4ef8-bb6d-${i.toString(16).padStart(12, "0")}`);
    const column = packStrings(uuids.length, (i) => uuids[i]);
    expect(firstDuplicateText(column, uuids.length)).toBeNull();
    uuids[70_000] = uuids[123];
    expect(firstDuplicateText(packStrings(uuids.length, (i) => uuids[i]), uuids.length)).toEqual({ index: 70_000, firstIndex: 123 });
    const withNulls = packStrings(3, (i) => ["", "x", ""][i]);
    expect(firstDuplicateText(withNulls, 3, Uint8Array.of(1, 0, 1))).toBeNull();
    expect(firstDuplicateText(withNulls, 3)).toEqual({ index: 2, firstIndex: 0 });
    fc.assert(
      fc.property(fc.array(fc.oneof(fc.constantFrom("a", "b", "é", "Émile", "e\u0301"), fc.string({ maxLength: 3 })), { maxLength: 30 }), (values) => {
        expect(firstDuplicateText(packStrings(values.length, (i) => values[i]), values.length)).toEqual(naive(values));
      }),
    );
  });

  test("reasons: a number as written, a text quoted", () => {
    expect(duplicateKeyReason(42, 7)).toBe("duplicate key 42 (first seen on line 7)");
    expect(duplicateKeyReason("a0ee", 3)).toBe('duplicate key "a0ee" (first seen on line 3)');
  });

  test("text keys: non-empty, at most 256 characters (UTF-16 code units)", () => {
    expect(textKeyReason("user_id", () => "", 0)).toBe('key "user_id" is empty (a text key is a non-empty string)');
    const long = "é".repeat(256);
    expect(textKeyReason("k", () => long, 512)).toBeNull();
    const longer = "x".repeat(257);
    expect(textKeyReason("k", () => longer, 257)).toBe(`key "k" has 257 characters ("${"x".repeat(60)}…"); a text key has at most 256`);
    expect(textKeyReason("k", () => "😀".repeat(129), 516)).toBe(`key "k" has 258 characters ("${"😀".repeat(30)}…"); a text key has at most 256`);
  });

  test("a raw key column: by number when every value so far is one (CSV text parsed), else by string", () => {
    const json = rawColumn("id");
    for (const v of [3, 1, 2, 1]) addJsonValue(json, v);
    expect(rawKeyDuplicate(json, 4)).toEqual({ duplicate: { index: 3, firstIndex: 1 }, value: 1 });
    expect(rawKeyDuplicate(json, 3)).toBeNull();
    const csv = rawColumn("id");
    for (const v of ["1e3", "7", "1000"]) addTextValue(csv, v);
    expect(rawKeyDuplicate(csv, 3)).toEqual({ duplicate: { index: 2, firstIndex: 0 }, value: 1000 });
    const text = rawColumn("k");
    for (const v of ["a", 1, null, "a"]) addJsonValue(text, v);
    expect(rawKeyDuplicate(text, 4)).toEqual({ duplicate: { index: 3, firstIndex: 0 }, value: "a" });
    const nulls = rawColumn("k");
    for (const v of [null, null, "b"]) addJsonValue(nulls, v);
    expect(rawKeyDuplicate(nulls, 3)).toBeNull();
  });
});
