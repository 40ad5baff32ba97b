import { describe, expect, test } from "bun:test";
import fc from "fast-check";
import {
  appendBytes,
  appendString,
  commitValue,
  copyPlainJsonString,
  finishByteColumn,
  gatherByteColumn,
  growingByteColumn,
  packJsonLiterals,
  packJsonStrings,
  packStrings,
  stringAt,
  unpackStrings,
} from "../../src/bits/byte-column.ts";

const encoder = new TextEncoder();

describe("packJsonStrings", () => {
  test("is byte for byte TextEncoder(JSON.stringify(s)), lone surrogates and controls included", () => {
    fc.assert(
      fc.property(fc.array(fc.string({ unit: "binary", maxLength: 16 }), { maxLength: 20 }), (values) => {
        const packed = packJsonStrings(values.length, (i) => values[i]);
        const expected = packStrings(values.length, (i) => JSON.stringify(values[i]));
        expect(Array.from(packed.offsets)).toEqual(Array.from(expected.offsets));
        expect(Buffer.compare(packed.bytes, expected.bytes)).toBe(0);
      }),
      { numRuns: 2000 },
    );
  });

  test("literal cases", () => {
    const p = packJsonStrings(3, (i) => ["a\"b", "é\n", "\u0001😀"][i]);
    expect(new TextDecoder().decode(p.bytes)).toBe('"a\\"b""é\\n""\\u0001😀"');
    expect(Array.from(p.offsets)).toEqual([0, 6, 12, 24]);
    expect(encoder.encode('"\\u0001😀"').length).toBe(12);
  });
});

/** Well-formed strings rich in what JSON escapes: quotes, backslashes, every control character. */
const jsonTricky = fc.string({
  unit: fc.oneof(
    { weight: 4, arbitrary: fc.constantFrom('"', "\\", "\b", "\f", "\n", "\r", "\t", "\u0000", "\u001f", "\u007f", "/", "\u2028", "é", "😀", "a") },
    { weight: 1, arbitrary: fc.integer({ min: 0, max: 0x1f }).map((c) => String.fromCharCode(c)) },
    { weight: 2, arbitrary: fc.string({ unit: "grapheme", minLength: 1, maxLength: 1 }) },
  ),
  maxLength: 16,
});

describe("packJsonLiterals", () => {
  test("is byte for byte packJsonStrings of the decoded strings", () => {
    fc.assert(
      fc.property(fc.array(fc.oneof(jsonTricky, fc.string({ unit: "grapheme", maxLength: 8 })), { maxLength: 20 }), (values) => {
        const packed = packJsonLiterals(packStrings(values.length, (i) => values[i]));
        const expected = packJsonStrings(values.length, (i) => values[i]);
        expect(Array.from(packed.offsets)).toEqual(Array.from(expected.offsets));
        expect(Buffer.compare(packed.bytes, expected.bytes)).toBe(0);
      }),
      { numRuns: 2000 },
    );
  });

  test("literal cases: no escapes (one pass) and escapes", () => {
    const plain = packJsonLiterals(packStrings(3, (i) => ["ab", "", "é"][i]));
    expect(new TextDecoder().decode(plain.bytes)).toBe('"ab""""é"');
    expect(Array.from(plain.offsets)).toEqual([0, 4, 6, 10]);
    const escaped = packJsonLiterals(packStrings(3, (i) => ['a"b', "é\n", "\u0001\\"][i]));
    expect(new TextDecoder().decode(escaped.bytes)).toBe('"a\\"b""é\\n""\\u0001\\\\"');
  });
});

describe("growing columns", () => {
  test("appendString and appendBytes grow past their first size", () => {
    const values = Array.from({ length: 3000 }, (_, i) => (i % 3 === 0 ? "é".repeat(i % 100) : i % 3 === 1 ? `v${i}` : "x".repeat(i % 90)));
    const a = growingByteColumn(1, 16);
    const b = growingByteColumn(1, 16);
    for (const v of values) {
      appendString(a, v);
      const bytes = encoder.encode(`[${v}]`);
      appendBytes(b, bytes, 1, bytes.length - 1);
    }
    const fa = finishByteColumn(a);
    const fb = finishByteColumn(b);
    const expected = packStrings(values.length, (i) => values[i]);
    for (const f of [fa, fb]) {
      expect(Array.from(f.offsets)).toEqual(Array.from(expected.offsets));
      expect(Buffer.compare(f.bytes, expected.bytes)).toBe(0);
    }
    expect(unpackStrings(fa)).toEqual(values);
    expect(finishByteColumn(growingByteColumn()).offsets).toEqual(new Uint32Array(1));
  });

  test("stringAt keeps a leading U+FEFF", () => {
    expect(stringAt(packStrings(2, (i) => ["x", "\ufeffy"][i]), 1)).toBe("\ufeffy");
  });
});

describe("copyPlainJsonString and commitValue", () => {
  test("copy a string body up to its closing quote; add it only on commit", () => {
    const source = encoder.encode('"ab é","x\\y","c\nd","tail');
    const column = growingByteColumn(1, 64);
    // byte offsets: "ab é" is 1..5 (é takes 2 bytes), then x\y from 9, c LF d from 15, tail from 21
    expect(copyPlainJsonString(column, source, 1)).toBe(6);
    expect(column.count).toBe(0);
    commitValue(column, 6 - 1);
    expect(copyPlainJsonString(column, source, 9)).toBe(-1); // a backslash
    expect(copyPlainJsonString(column, source, 15)).toBe(-1); // a control character (LF)
    expect(copyPlainJsonString(column, source, 21)).toBe(-1); // no closing quote before the end
    expect(unpackStrings(finishByteColumn(column))).toEqual(["ab é"]);
  });

  test("too little free room: -1, and nothing is added", () => {
    const column = growingByteColumn(1, 16);
    const source = encoder.encode(`${"x".repeat(20)}"`);
    expect(copyPlainJsonString(column, source, 0)).toBe(-1);
    expect(copyPlainJsonString(column, source, 10)).toBe(20);
    commitValue(column, 10);
    expect(unpackStrings(finishByteColumn(column))).toEqual(["x".repeat(10)]);
  });

  test("many commits grow the offsets", () => {
    const column = growingByteColumn(1, 4096);
    const source = encoder.encode('a"');
    for (let i = 0; i < 1000; i++) {
      expect(copyPlainJsonString(column, source, 0)).toBe(1);
      commitValue(column, 1);
    }
    expect(finishByteColumn(column).offsets.length).toBe(1001);
  });
});

describe("gatherByteColumn", () => {
  test("value k is value rows[k] of the input", () => {
    fc.assert(
      fc.property(
        fc.array(fc.string({ unit: "grapheme", maxLength: 70 }), { minLength: 1, maxLength: 30 }).chain((values) =>
          fc.tuple(fc.constant(values), fc.array(fc.nat(values.length - 1), { maxLength: 40 })),
        ),
        ([values, rows]) => {
          const got = gatherByteColumn(packStrings(values.length, (i) => values[i]), Uint32Array.from(rows));
          const expected = packStrings(rows.length, (k) => values[rows[k]]);
          expect(Array.from(got.offsets)).toEqual(Array.from(expected.offsets));
          expect(Buffer.compare(got.bytes, expected.bytes)).toBe(0);
        },
      ),
      { numRuns: 500 },
    );
  });
});
