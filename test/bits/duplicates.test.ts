/**
 * The first duplicate among doubles (sorted) and byte strings (hashed), in input order
 * (src/bits/duplicates.ts), against a Map.
 */
import { describe, expect, test } from "bun:test";
import fc from "fast-check";
import { packStrings } from "../../src/bits/byte-column.ts";
import { firstDuplicateNumber, firstDuplicateText } from "../../src/bits/duplicates.ts";

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
});
