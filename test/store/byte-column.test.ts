import { describe, expect, test } from "bun:test";
import fc from "fast-check";
import { packJsonStrings, packStrings } from "../../src/store/byte-column.ts";

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
