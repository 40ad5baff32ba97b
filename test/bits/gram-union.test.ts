/**
 * The search index's lists across columns as the union of the columns' own lists
 * (src/bits/gram-union.ts) against decoding the columns' values together (bits/trigrams.ts
 * `buildGramIndex` over every source): equal, array for array, for random columns of any code
 * points, row counts that make lists dense and sparse, n = 1, 2, 3, with and without groups.
 */
import { describe, expect, test } from "bun:test";
import fc from "fast-check";
import { unionGramIndexes } from "../../src/bits/gram-union.ts";
import { type GramSource, buildGramIndex } from "../../src/bits/trigrams.ts";

const encoder = new TextEncoder();

/** A column's values as the index reads them: UTF-8 bytes back to back, offsets of length rows + 1. */
function sourceOf(values: readonly string[]): GramSource {
  const parts = values.map((v) => encoder.encode(v));
  const offsets = new Uint32Array(values.length + 1);
  for (let i = 0; i < parts.length; i++) offsets[i + 1] = offsets[i] + parts[i].length;
  const bytes = new Uint8Array(offsets[values.length]);
  parts.forEach((p, i) => bytes.set(p, offsets[i]));
  return { bytes, offsets };
}

// few letters, so that lists repeat and some grow dense; a few beyond ASCII and the BMP
const valueArb = fc.array(fc.constantFrom("a", "b", "c", "é", "中", "😀", "1", " ", "ab", "ba"), { maxLength: 8 }).map((cs) => cs.join(""));

const caseArb = fc.integer({ min: 1, max: 120 }).chain((rows) =>
  fc.record({
    rows: fc.constant(rows),
    columns: fc.array(fc.array(valueArb, { minLength: rows, maxLength: rows }), { minLength: 1, maxLength: 4 }),
    groups: fc.option(fc.integer({ min: 1, max: 5 }).chain((count) => fc.record({ count: fc.constant(count), codes: fc.array(fc.nat(count - 1), { minLength: rows, maxLength: rows }) })), { nil: null }),
    n: fc.constantFrom<1 | 2 | 3>(1, 2, 3),
  }),
);

describe("n-gram lists across columns as the union of each column's", () => {
  test("equal to the lists of the columns decoded together, every array", () => {
    let dense = 0;
    fc.assert(
      fc.property(caseArb, ({ rows, columns, groups, n }) => {
        const grouping = groups === null ? null : { count: groups.count, codes: Uint8Array.from(groups.codes) };
        const sources = columns.map(sourceOf);
        const together = buildGramIndex(sources, rows, n, grouping);
        const union = unionGramIndexes(
          sources.map((s) => buildGramIndex([s], rows, n, grouping)),
          rows,
          grouping,
        );
        for (const field of ["keys", "counts", "groupCounts", "refs", "bitmaps", "gaps"] as const) expect(Array.from(union[field])).toEqual(Array.from(together[field]));
        if (together.bitmaps.length > 0) dense++;
      }),
      { numRuns: 400 },
    );
    // the cases reach dense lists too
    expect(dense).toBeGreaterThan(50);
  });

  test("one column: its own index", () => {
    const only = buildGramIndex([sourceOf(["abc", "bcd"])], 2, 3, null);
    expect(unionGramIndexes([only], 2, null)).toBe(only);
  });
});
