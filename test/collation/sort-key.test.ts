import { describe, expect, test } from "bun:test";
import fc from "fast-check";
import { collator } from "../../src/collation/collation.ts";
import { MAX_DIGIT_RUN, MAX_KEY_BYTES_PER_UNIT, collationKey, encodeCollationKey, encodeCollationKeyUtf8 } from "../../src/collation/sort-key.ts";

/** Timeout of the exhaustive and property tests: seconds of work, more on a loaded machine. */
const HEAVY_TEST_MS = 120_000;

/** Sign of plain code-unit comparison, as native sorts compare key strings. */
function keySign(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

/** Every single UTF-16 code unit that gets a key. */
const KEYED_UNITS: string[] = [];
for (let unit = 0; unit < 0x10000; unit++) {
  const ch = String.fromCharCode(unit);
  if (collationKey(ch) !== null) KEYED_UNITS.push(ch);
}

/**
 * Checks keys against the collator on a whole set of strings with keys: sorted by key, every
 * neighbour pair must compare the same way under the collator; since both orders are total
 * preorders, that makes them agree on every pair of the set.
 * @returns the pairs (as JSON) where they disagree, at most 10
 */
function disagreements(strings: readonly string[]): string[] {
  const keyed = strings.map((s) => ({ s, key: collationKey(s)! }));
  keyed.sort((x, y) => keySign(x.key, y.key));
  const bad: string[] = [];
  for (let k = 1; k < keyed.length && bad.length < 10; k++) {
    const expected = keyed[k - 1].key === keyed[k].key ? 0 : -1;
    if (Math.sign(collator.compare(keyed[k - 1].s, keyed[k].s)) !== expected) {
      bad.push(JSON.stringify([keyed[k - 1].s, keyed[k].s]));
    }
  }
  return bad;
}

describe("collationKey", () => {
  describe("literal cases", () => {
    test("docs/api.md examples: digit runs by value, accents among the plain letters", () => {
      expect(keySign(collationKey("alice.21@x")!, collationKey("alice.111@x")!)).toBe(-1);
      expect(keySign(collationKey("Eli")!, collationKey("Émile")!)).toBe(-1);
      expect(keySign(collationKey("Émile")!, collationKey("Emma")!)).toBe(-1);
    });

    test("case, accents, expansions and leading zeros give equal keys", () => {
      expect(collationKey("ÉMILE")).toBe(collationKey("emile"));
      expect(collationKey("Straße")).toBe(collationKey("STRASSE"));
      expect(collationKey("Æsir")).toBe(collationKey("aesir"));
      expect(collationKey("ﬁnn")).toBe(collationKey("finn"));
      expect(collationKey("a007")).toBe(collationKey("a7"));
      expect(collationKey("0")).toBe(collationKey("000"));
      expect(collationKey("Ёлка")).toBe(collationKey("елка"));
      expect(collationKey("ΣΟΦΟΣ")).toBe(collationKey("σοφος"));
    });

    test("numbers sort after punctuation and before letters", () => {
      const byKey = (a: string, b: string): number => keySign(collationKey(a)!, collationKey(b)!);
      const sorted = ["b", "10", "9", "_", "a", " ", "-1"].sort(byKey);
      expect(sorted).toEqual([" ", "_", "-1", "9", "10", "a", "b"]);
    });

    test("the empty string has the smallest key", () => {
      expect(collationKey("")).toBe("");
    });

    test("no key for characters outside the verified whitelist", () => {
      for (const s of [
        "a\u0001b", // control: ignorable
        "a\u00adb", // soft hyphen: ignorable
        "e\u0301", // combining mark
        "l·l", // middle dot: context-dependent after l
        "日本",
        "カー",
        "😀",
        "\ud800",
        "\udc00x",
        "a\tb",
        "١٢", // Arabic-Indic digits
        "１", // fullwidth digit
        "½",
        "x".padEnd(10, "\u200b"),
      ]) {
        expect(collationKey(s)).toBeNull();
      }
    });

    test("no key for digit runs longer than ICU's 254-digit segments", () => {
      expect(collationKey("1".repeat(MAX_DIGIT_RUN))).not.toBeNull();
      expect(collationKey("0".repeat(MAX_DIGIT_RUN + 1))).toBeNull();
      expect(collationKey(`a${"9".repeat(MAX_DIGIT_RUN + 1)}b`)).toBeNull();
    });

    test("encodeCollationKey writes bytes 1..255 and returns -1 without a key", () => {
      const out = new Uint8Array(64);
      const end = encodeCollationKey("Zoë 42", out, 3);
      expect(end).toBeGreaterThan(3);
      for (let p = 3; p < end; p++) expect(out[p]).toBeGreaterThan(0);
      expect(encodeCollationKey("日", out, 0)).toBe(-1);
    });
  });

  describe("exhaustive checks over the whitelist", () => {
    test("the whitelist covers ASCII printable, Latin-1 letters, basic Greek and Cyrillic", () => {
      const keyed = new Set(KEYED_UNITS);
      for (let unit = 0x20; unit <= 0x7e; unit++) expect(keyed.has(String.fromCharCode(unit))).toBe(true);
      for (const ch of "ÀÉÎÕÜçñøßæœÿĀŁŒŠŽΑΩαωάςАЯаяЁё") expect(keyed.has(ch)).toBe(true);
      expect(KEYED_UNITS.length).toBeGreaterThan(1000);
    });

    test("every pair of single keyed characters compares as the collator does", () => {
      const keys = KEYED_UNITS.map((ch) => collationKey(ch)!);
      let bad = 0;
      for (let a = 0; a < KEYED_UNITS.length; a++) {
        for (let b = 0; b < KEYED_UNITS.length; b++) {
          const expected = Math.sign(collator.compare(KEYED_UNITS[a], KEYED_UNITS[b]));
          if (keySign(keys[a], keys[b]) !== expected) bad++;
        }
      }
      expect(bad).toBe(0);
    }, HEAVY_TEST_MS);

    test("all strings of one or two keyed characters sort as the collator does", () => {
      const strings: string[] = [...KEYED_UNITS];
      for (const a of KEYED_UNITS) for (const b of KEYED_UNITS) strings.push(a + b);
      expect(disagreements(strings)).toEqual([]);
    }, HEAVY_TEST_MS);

    test("all strings of up to three characters of a digit-heavy alphabet sort as the collator does", () => {
      const alphabet = [..."0123456789 .-_@'+,/(aAbzßéÆœΣσяЁﬃ²ŉ"];
      const strings: string[] = [""];
      for (const a of alphabet) {
        strings.push(a);
        for (const b of alphabet) {
          strings.push(a + b);
          for (const c of alphabet) strings.push(a + b + c);
        }
      }
      expect(disagreements(strings)).toEqual([]);
    }, HEAVY_TEST_MS);
  });

  describe("properties", () => {
    /** Pieces that make ties and traps frequent; some have no key by design. */
    const PIECES = [
      "a", "A", "á", "Á", "à", "â", "ä", "Ä", "å", "e", "E", "é", "É", "ê", "i", "İ", "ı", "o", "ö", "ø", "Ø",
      "u", "ü", "n", "ñ", "z", "Z", "s", "ss", "SS", "ß", "ẞ", "æ", "Æ", "ae", "œ", "oe", "ﬁ", "fi", "ﬃ",
      "l", "L", "ł", "đ", "þ", "ð", "ŉ", "ĳ", "ǆ", "²",
      "0", "00", "007", "1", "01", "9", "10", "21", "111", "4294967296", "12345678901234567890",
      " ", ".", "-", "_", "@", "'", ",", "+", "/", "(", ")",
      "д", "Д", "и", "й", "Й", "е", "ё", "Ё", "я", "ӕ", "σ", "ς", "Σ", "α", "ά", "Ω",
      // no key: CJK, emoji, controls, combining marks, lone surrogates, middle dot, other digits
      "日", "本", "カ", "ー", "😀", "\u0001", "\u00ad", "\u0301", "\u0308", "\ud800", "\udc00", "·", "٣", "\t",
    ];
    const piece = fc.constantFrom(...PIECES);
    const digit = fc.constantFrom(..."0123456789");
    const digitRun = fc.oneof(
      fc.string({ unit: digit, minLength: 1, maxLength: 12 }),
      fc.string({ unit: digit, minLength: 200, maxLength: 300, size: "max" }),
    );
    const tricky = fc
      .array(fc.oneof({ weight: 8, arbitrary: piece }, { weight: 1, arbitrary: digitRun }), { maxLength: 8 })
      .map((parts) => parts.join(""));

    test("keys agree with the collator on every pair that has keys", () => {
      fc.assert(
        fc.property(tricky, tricky, (a, b) => {
          const ka = collationKey(a);
          const kb = collationKey(b);
          if (ka === null || kb === null) return true;
          return keySign(ka, kb) === Math.sign(collator.compare(a, b));
        }),
        { numRuns: 20000 },
      );
    }, HEAVY_TEST_MS);

    test("keys agree on strings that differ late (shared prefixes)", () => {
      fc.assert(
        fc.property(tricky, tricky, tricky, (prefix, a, b) => {
          const ka = collationKey(prefix + a);
          const kb = collationKey(prefix + b);
          if (ka === null || kb === null) return true;
          return keySign(ka, kb) === Math.sign(collator.compare(prefix + a, prefix + b));
        }),
        { numRuns: 20000 },
      );
    }, HEAVY_TEST_MS);

    test("arbitrary Unicode strings: a key, when there is one, agrees with the collator", () => {
      const anyString = fc.string({ unit: "binary", maxLength: 6 });
      fc.assert(
        fc.property(anyString, anyString, (a, b) => {
          const ka = collationKey(a);
          const kb = collationKey(b);
          if (ka === null || kb === null) return true;
          return keySign(ka, kb) === Math.sign(collator.compare(a, b));
        }),
        { numRuns: 5000 },
      );
    }, HEAVY_TEST_MS);

    test("random strings over the whole whitelist agree in sorted sets", () => {
      const unit = fc.constantFrom(...KEYED_UNITS, ..."0123456789");
      const strings = fc.array(fc.string({ unit, maxLength: 6 }), { minLength: 2, maxLength: 300, size: "max" });
      fc.assert(
        fc.property(strings, (set) => disagreements(set).length === 0),
        { numRuns: 200 },
      );
    }, HEAVY_TEST_MS);
  });
});

describe("encodeCollationKeyUtf8", () => {
  const encoder = new TextEncoder();

  /** The key bytes from the string and from its UTF-8 (at an offset in both buffers), or null when neither has a key; throws when they differ. */
  function bothKeys(s: string): number[] | null {
    const utf8 = encoder.encode(`xy${s}z`);
    const fromString = new Uint8Array(s.length * MAX_KEY_BYTES_PER_UNIT + 8);
    const fromBytes = new Uint8Array((utf8.length - 3) * MAX_KEY_BYTES_PER_UNIT + 8);
    const end = encodeCollationKey(s, fromString, 3);
    const endBytes = encodeCollationKeyUtf8(utf8, 2, utf8.length - 1, fromBytes, 3);
    expect(endBytes).toBe(end);
    if (end < 0) return null;
    const key = Array.from(fromString.subarray(3, end));
    expect(Array.from(fromBytes.subarray(3, endBytes))).toEqual(key);
    return key;
  }

  test("every code point of the BMP and some astral ones, alone and between digits, as from the string", () => {
    for (let cp = 0; cp < 0x10000; cp++) {
      if (cp >= 0xd800 && cp <= 0xdfff) continue; // not in well-formed UTF-8
      const ch = String.fromCharCode(cp);
      bothKeys(ch);
      bothKeys(`1${ch}02`);
    }
    for (const ch of ["😀", "\u{10400}", "\u{1D400}", "\u{20000}"]) expect(bothKeys(`a${ch}`)).toBeNull();
  }, HEAVY_TEST_MS);

  test("digit runs: leading zeros, odd and even lengths, ICU's limit", () => {
    for (const s of ["0", "00", "007", "a0010b", "1".repeat(MAX_DIGIT_RUN), "1".repeat(MAX_DIGIT_RUN + 1), `${"0".repeat(300)}5`, "ß12ﬃ3"]) bothKeys(s);
  });

  test("random well-formed strings give the same key as from the string", () => {
    const unit = fc.oneof(fc.constantFrom(...KEYED_UNITS, ..."0123456789"), fc.string({ unit: "grapheme", minLength: 1, maxLength: 1 }));
    fc.assert(
      fc.property(fc.string({ unit, maxLength: 12 }), (s) => {
        bothKeys(s);
      }),
      { numRuns: 5000 },
    );
  }, HEAVY_TEST_MS);
});
