import { describe, expect, test } from "bun:test";
import fc from "fast-check";
import { collator } from "../../src/collation/collation.ts";
import { sortByCollation, sortUtf8ByCollation } from "../../src/collation/sort.ts";
import { packStrings } from "../../src/bits/byte-column.ts";

/** Timeout of the exhaustive and property tests: seconds of work, more on a loaded machine. */
const HEAVY_TEST_MS = 120_000;

/** The naive oracle: the collator sort with ties by index, and dense ranks along it. */
function naiveSort(values: readonly string[]): { order: number[]; ranks: number[] } {
  const order = values.map((_, i) => i);
  order.sort((a, b) => collator.compare(values[a], values[b]) || a - b);
  const ranks = new Array<number>(values.length);
  let rank = 0;
  for (let k = 0; k < order.length; k++) {
    if (k > 0 && collator.compare(values[order[k - 1]], values[order[k]]) !== 0) rank++;
    ranks[order[k]] = rank;
  }
  return { order, ranks };
}

/**
 * sortByCollation as plain arrays, for toEqual against the oracle; for well-formed values,
 * checks on the way that sortUtf8ByCollation of their UTF-8 gives the same arrays.
 */
function fastSort(values: readonly string[]): { order: number[]; ranks: number[] } {
  const { order, ranks } = sortByCollation(values);
  expect(order).toBeInstanceOf(Uint32Array);
  expect(ranks).toBeInstanceOf(Uint32Array);
  const result = { order: Array.from(order), ranks: Array.from(ranks) };
  if (values.every((v) => v.isWellFormed())) {
    const fromBytes = sortUtf8ByCollation(packStrings(values.length, (i) => values[i]));
    expect({ order: Array.from(fromBytes.order), ranks: Array.from(fromBytes.ranks) }).toEqual(result);
  }
  return result;
}

describe("sortByCollation", () => {
  describe("literal cases", () => {
    test("docs/api.md examples, a slow-path value and ties by index", () => {
      const values = ["Emma", "alice.111@x", "Émile", "日本", "Eli", "alice.21@x", "emma", "e\u0301mile"];
      expect(fastSort(values)).toEqual({
        // alice.21 < alice.111 < Eli < Émile = émile < Emma = emma < 日本
        order: [5, 1, 4, 2, 7, 0, 6, 3],
        ranks: [4, 1, 3, 5, 2, 0, 4, 3],
      });
    });

    test("empty input and a single value", () => {
      expect(fastSort([])).toEqual({ order: [], ranks: [] });
      expect(fastSort(["x"])).toEqual({ order: [0], ranks: [0] });
      expect(fastSort(["日"])).toEqual({ order: [0], ranks: [0] });
    });

    test("long values: keys longer than a chunk, a growing key buffer, digit runs at ICU's limit", () => {
      const values = [
        "ﬃ".repeat(20000), // 3 key bytes per character: more than the buffer's first estimate
        "ffi".repeat(20000),
        "ﬃ".repeat(19999) + "x",
        `${"1".repeat(254)}a`,
        `${"1".repeat(255)}a`, // no key: ICU splits this run
        `${"0".repeat(100)}${"1".repeat(154)}a`,
        "1".repeat(253),
        "Ǆ".repeat(3000),
        "dz".repeat(3000),
      ];
      for (let i = 0; i < 20; i++) values.push(`${"ﬃ".repeat(20000)}${i}`);
      expect(fastSort(values)).toEqual(naiveSort(values));
    }, HEAVY_TEST_MS);

    test("equal keys of different strings share a rank; the empty string comes first", () => {
      expect(fastSort(["STRASSE", "straße", "", "Straße", "a"])).toEqual({
        order: [2, 4, 0, 1, 3],
        ranks: [2, 2, 0, 2, 1],
      });
    });
  });

  describe("against the naive collator sort", () => {
    /** Values with many ties and near-ties; some without a collation key (slow path). */
    const POOL = [
      "", " ", "a", "A", "á", "Á", "ab", "aB", "Ab", "áb", "a b", "a-b", "a_b", "a.b", "a1", "a01", "a001",
      "a2", "a10", "a9", "a12345678901234567890", "b", "B", "ß", "ss", "SS", "æ", "ae", "AE", "Æ",
      "alice.21@x", "alice.111@x", "Alice.021@X", "Eli", "Émile", "emile", "EMILE", "Emma", "emma",
      "zoë", "zoe", "Zoe", "ﬁnn", "finn", "Finn", "Ёлка", "елка", "ель", "σοφος", "ΣΟΦΟΣ", "Ωmega",
      "4294967296", "4294967297", "0", "000", "00", "1", "01",
      // slow path: CJK, combining marks, controls, emoji, lone surrogates, middle dot
      "日本", "本", "カー", "カア", "e\u0301mile", "a\u0301", "a\u0001", "\u0001", "😀", "a😀", "\ud800", "l·l", "ll",
    ];
    const value = fc.oneof(
      { weight: 6, arbitrary: fc.constantFrom(...POOL) },
      { weight: 1, arbitrary: fc.array(fc.constantFrom(...POOL), { maxLength: 3 }).map((p) => p.join("")) },
    );

    test("order and ranks equal the oracle on random arrays with many ties", () => {
      fc.assert(
        fc.property(fc.array(value, { maxLength: 200, size: "max" }), (values) => {
          expect(fastSort(values)).toEqual(naiveSort(values));
        }),
        { numRuns: 500 },
      );
    }, HEAVY_TEST_MS);

    test("fast path only: large groups sharing long prefixes (radix and insertion sorts)", () => {
      const suffix = fc.array(fc.constantFrom(..."aAáeé0123456789 .-_ßzя"), { maxLength: 14 }).map((p) => p.join(""));
      const prefix = fc.constantFrom("", "aa", "aaaaaaaa", "alice.", "Александра ", "12");
      const value = fc.tuple(prefix, suffix).map(([p, s]) => p + s);
      fc.assert(
        fc.property(fc.array(value, { minLength: 50, maxLength: 3000, size: "max" }), (values) => {
          expect(fastSort(values)).toEqual(naiveSort(values));
        }),
        { numRuns: 30 },
      );
    }, HEAVY_TEST_MS);

    test("from UTF-8: arbitrary well-formed strings, with a leading U+FEFF, equal the oracle", () => {
      // well-formed only: UTF-8 holds no lone surrogate (the pool's "\ud800" would be written as U+FFFD)
      const any = fc.oneof(value.filter((v) => v.isWellFormed()), fc.string({ unit: "grapheme", maxLength: 6 }), fc.constantFrom("\ufeffa", "\ufeff", "a\ufeff"));
      fc.assert(
        fc.property(fc.array(any, { maxLength: 200, size: "max" }), (values) => {
          const fromBytes = sortUtf8ByCollation(packStrings(values.length, (i) => values[i]));
          expect({ order: Array.from(fromBytes.order), ranks: Array.from(fromBytes.ranks) }).toEqual(naiveSort(values));
        }),
        { numRuns: 300 },
      );
    }, HEAVY_TEST_MS);

    test("over 65536 values with one shared first two key bytes (narrow radix digits)", () => {
      const values: string[] = [];
      let seed = 7;
      const next = (): number => (seed = (seed * 1103515245 + 12345) >>> 0) % 1000;
      for (let i = 0; i < 70000; i++) {
        const r = next();
        const letter = String.fromCharCode(97 + (r % 26));
        values.push(r < 5 ? "ab日" : `ab${letter}${r % 7 === 0 ? "É" : "e"}${next()}`);
      }
      expect(fastSort(values)).toEqual(naiveSort(values));
    }, HEAVY_TEST_MS);
  });
});
