import { describe, expect, test } from "bun:test";
import fc from "fast-check";
import { fold } from "../../src/collation/collation.ts";
import { foldColumn } from "../../src/collation/fold-column.ts";
import { packStrings } from "../../src/bits/byte-column.ts";

/** The oracle: `fold` of each string, packed. */
function foldStrings(values: readonly string[]) {
  return packStrings(values.length, (i) => fold(values[i]));
}

/** Expects foldColumn of the packed values to equal the oracle byte for byte. */
function expectSameFold(values: readonly string[]): void {
  const got = foldColumn(packStrings(values.length, (i) => values[i]));
  const want = foldStrings(values);
  expect(Array.from(got.offsets)).toEqual(Array.from(want.offsets));
  expect(Buffer.compare(got.bytes, want.bytes)).toBe(0);
}

/**
 * Pieces that stress the word-by-word fold: accents precomposed and decomposed, combining marks
 * alone (after a space they start a word), Greek capital sigma (final or not by context),
 * Turkish dotted I (lower-cases to i + U+0307), CJK, astral letters (Deseret capitals fold),
 * ligatures and fullwidth forms (NFKD), characters whose NFKD holds a space (¨, NBSP, ﾞ), and
 * spaces, tabs and NBSP as separators.
 */
const PIECES = [
  "a", "A", "Z", "z", "@", ".", "0", "9", "é", "É", "e\u0301", "\u0301", "\u0308", "\u0345", "ñ", "Å",
  "Σ", "σ", "ς", "ΟΔΟΣ", "ΑΣ", "Σ.", "Σ'", "ά", "Ω", "İ", "I", "ı", "ß", "ẞ", "ǅ", "Ǆ",
  "中", "日本", "カ", "ﾞ", "ガ", "한", "😀", "\u{10400}", "\u{10428}", "\u{1D400}", "ﬁ", "ﬃ", "Ａ", "１", "㎏", "½",
  "¨", "\u00a0", "\u2002", " ", " ", " ", "  ", "\t", "\u3000", "\ufeff", "\u0000", "\u001f", "ǰ", "ﬀ",
] as const;

const value = fc.array(fc.constantFrom(...PIECES), { maxLength: 10 }).map((p) => p.join(""));

describe("foldColumn", () => {
  test("literal cases", () => {
    const got = foldColumn(packStrings(6, (i) => ["José GARCÍA", "ΟΔΟΣ ΟΔΟΣ", "", "ABC def", "ﬁle Ａ", " \u0301x Σ"][i]));
    expect(new TextDecoder().decode(got.bytes)).toBe("jose garciaοδος οδοςabc deffile a x σ");
    // Greek letters take 2 bytes; a lone Σ after a space is not final
    expect(Array.from(got.offsets)).toEqual([0, 11, 28, 28, 35, 41, 46]);
  });

  test("equals fold() on words glued from tricky pieces", () => {
    fc.assert(
      fc.property(fc.array(value, { maxLength: 30 }), (values) => {
        expectSameFold(values);
      }),
      { numRuns: 3000 },
    );
  });

  test("equals fold() on arbitrary well-formed strings (any code point)", () => {
    const anyString = fc.string({ unit: "grapheme", maxLength: 12 });
    const withSpaces = fc.array(fc.oneof(anyString, fc.constant(" ")), { maxLength: 6 }).map((p) => p.join(""));
    fc.assert(
      fc.property(fc.array(fc.oneof(anyString, withSpaces), { maxLength: 30 }), (values) => {
        expectSameFold(values);
      }),
      { numRuns: 3000 },
    );
  });

  test("the word cache: many rows repeating a few words, and growing past its first size", () => {
    const values: string[] = [];
    for (let i = 0; i < 20000; i++) values.push(`Émile${i % 3000} ΟΔΟΣ${i % 7} Zoë ${i % 5 === 0 ? "ﬁ" : "x"}`);
    expectSameFold(values);
  });

  test("a column that grows: every value expands (ligatures)", () => {
    const values = Array.from({ length: 5000 }, (_, i) => `${"ﬃ".repeat(i % 40)} ㎏`);
    expectSameFold(values);
  });
});
