import { describe, expect, test } from "bun:test";
import fc from "fast-check";
import { andInPlace, andInto, bitmapOfRows, countRows, emptyBitmap, fullBitmap, hasRow, notInPlace, orInPlace, popcount32, rowsOfBitmap, setRange } from "../../src/bits/bitmap.ts";

describe("bitmap", () => {
  test("literal ranges across word boundaries", () => {
    const bits = emptyBitmap(100);
    setRange(bits, 30, 70);
    expect(rowsOfBitmap(bits)).toEqual(Uint32Array.from({ length: 40 }, (_, i) => 30 + i));
    expect(countRows(bits)).toBe(40);
    expect(Array.from(notInPlace(fullBitmap(33), 33))).toEqual([0, 0]);
    expect(popcount32(0xffffffff)).toBe(32);
    expect(popcount32(0x80000001)).toBe(2);
  });

  test("set algebra agrees with plain sets", () => {
    const n = 200;
    const rowsArb = fc.uniqueArray(fc.nat(n - 1), { maxLength: 120 });
    fc.assert(
      fc.property(rowsArb, rowsArb, fc.nat(n), fc.nat(n), (a, b, lo, hi) => {
        const A = bitmapOfRows(Uint32Array.from(a), n);
        const B = bitmapOfRows(Uint32Array.from(b), n);
        const sa = new Set(a);
        const sb = new Set(b);
        const all = Array.from({ length: n }, (_, i) => i);
        expect(Array.from(rowsOfBitmap(andInPlace(A.slice(), B)))).toEqual(all.filter((r) => sa.has(r) && sb.has(r)));
        expect(Array.from(rowsOfBitmap(orInPlace(A.slice(), B)))).toEqual(all.filter((r) => sa.has(r) || sb.has(r)));
        expect(Array.from(rowsOfBitmap(notInPlace(A.slice(), n)))).toEqual(all.filter((r) => !sa.has(r)));
        const R = emptyBitmap(n);
        setRange(R, lo, hi);
        expect(Array.from(rowsOfBitmap(R))).toEqual(all.filter((r) => r >= lo && r < hi));
        expect(all.filter((r) => hasRow(A, r))).toEqual([...sa].sort((x, y) => x - y));
      }),
      { numRuns: 500 },
    );
  });
});

describe("selectRows and countAnd", () => {
  test("agree with plain arrays, both directions", async () => {
    const { countAnd, selectRows } = await import("../../src/bits/bitmap.ts");
    const n = 300;
    fc.assert(
      fc.property(fc.uniqueArray(fc.nat(n - 1), { maxLength: 200 }), fc.uniqueArray(fc.nat(n - 1), { maxLength: 200 }), fc.nat(250), fc.nat(60), (a, b, offset, limit) => {
        const sorted = [...a].sort((x, y) => x - y);
        const bits = bitmapOfRows(Uint32Array.from(a), n);
        expect(Array.from(selectRows(bits, offset, limit, false))).toEqual(sorted.slice(offset, offset + limit));
        expect(Array.from(selectRows(bits, offset, limit, true))).toEqual([...sorted].reverse().slice(offset, offset + limit));
        const sb = new Set(b);
        expect(countAnd(bits, bitmapOfRows(Uint32Array.from(b), n))).toBe(a.filter((r) => sb.has(r)).length);
      }),
      { numRuns: 500 },
    );
  });
});

describe("andInto", () => {
  test("writes a & b and returns its row count", () => {
    fc.assert(
      fc.property(fc.integer({ min: 0, max: 300 }).chain((n) => fc.tuple(fc.constant(n), fc.uniqueArray(fc.nat(Math.max(0, n - 1)), { maxLength: n }), fc.uniqueArray(fc.nat(Math.max(0, n - 1)), { maxLength: n }))), ([n, a, b]) => {
        const out = emptyBitmap(n);
        const count = andInto(out, bitmapOfRows(Uint32Array.from(a), n), bitmapOfRows(Uint32Array.from(b), n));
        const expected = a.filter((row) => b.includes(row)).sort((x, y) => x - y);
        expect(Array.from(rowsOfBitmap(out))).toEqual(expected);
        expect(count).toBe(expected.length);
      }),
      { numRuns: 200 },
    );
  });
});
