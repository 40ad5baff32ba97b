import { describe, expect, test } from "bun:test";
import fc from "fast-check";
import { orderDoubles, valueRange } from "../../src/kinds/ordered-column.ts";

/** The naive order: nulls (NaN) first, then by value, ties by row. */
function naiveOrder(values: number[]): number[] {
  const rank = (x: number) => (Number.isNaN(x) ? Number.NEGATIVE_INFINITY : x);
  return values.map((_, i) => i).sort((a, b) => rank(values[a]) - rank(values[b]) || a - b);
}

const valuesArb = fc.array(fc.oneof(fc.integer({ min: -5, max: 5 }), fc.constant(Number.NaN), fc.double({ noNaN: true, noDefaultInfinity: true }), fc.constant(-0)), { maxLength: 200 });

describe("orderDoubles", () => {
  test("the permutation is the naive order; ranks are dense with null 0; starts bound each rank", () => {
    fc.assert(
      fc.property(valuesArb, (list) => {
        const values = Float64Array.from(list);
        const o = orderDoubles(values);
        expect(Array.from(o.rowsByValue)).toEqual(naiveOrder(list));
        const distinct = [...new Set(list.filter((x) => !Number.isNaN(x)).map((x) => (x === 0 ? 0 : x)))].sort((a, b) => a - b);
        expect(Array.from(o.distinct)).toEqual(distinct);
        for (let row = 0; row < list.length; row++) {
          const x = list[row];
          expect(o.rankByRow[row]).toBe(Number.isNaN(x) ? 0 : distinct.indexOf(x === 0 ? 0 : x) + 1);
        }
        expect(o.rankStarts.length).toBe(distinct.length + 2);
        for (let r = 0; r <= distinct.length; r++) {
          for (let i = o.rankStarts[r]; i < o.rankStarts[r + 1]; i++) expect(o.rankByRow[o.rowsByValue[i]]).toBe(r);
        }
        expect(o.rankStarts[distinct.length + 1]).toBe(list.length);
      }),
    );
  });

  test("value ranges are the rows between two bounds, open or closed", () => {
    fc.assert(
      fc.property(valuesArb, fc.integer({ min: -6, max: 6 }), fc.integer({ min: -6, max: 6 }), fc.boolean(), fc.boolean(), (list, lo, hi, loOpen, hiOpen) => {
        const o = orderDoubles(Float64Array.from(list));
        const { start, end } = valueRange(o, lo, loOpen, hi, hiOpen);
        const got = Array.from(o.rowsByValue.subarray(start, end)).sort((a, b) => a - b);
        const want = list
          .map((x, i) => [x, i] as const)
          .filter(([x]) => !Number.isNaN(x) && (loOpen ? x > lo : x >= lo) && (hiOpen ? x < hi : x <= hi))
          .map(([, i]) => i);
        expect(got).toEqual(want);
      }),
    );
  });
});
