/**
 * What the key kinds do as the key (src/kinds/key.ts): the row order (numbers numerically, texts
 * by code point) against a sort, and the checks of the values — null, a text empty or too long,
 * a duplicate — reported at the first problem in input order.
 */
import { describe, expect, test } from "bun:test";
import fc from "fast-check";
import { packStrings } from "../../src/bits/byte-column.ts";
import type { ConvertedColumn } from "../../src/kinds/convert.ts";
import { textKeyReason } from "../../src/kinds/key.ts";
import { KINDS } from "../../src/kinds/registry.ts";

const numberKey = KINDS.number.key;
const textKey = KINDS.text.key;

/** A number column's converted values (NaN for null). */
const numbers = (values: number[]): ConvertedColumn => ({ kind: "number", values: Float64Array.from(values), nulls: values.filter(Number.isNaN).length });

/** A text column's converted values (null for null). */
function texts(values: (string | null)[]): ConvertedColumn {
  return { kind: "text", strings: packStrings(values.length, (i) => values[i] ?? ""), isNull: Uint8Array.from(values, (v) => (v === null ? 1 : 0)), nulls: values.filter((v) => v === null).length };
}

/** Code point order of two strings: what a text key orders by (docs/api.md "The key"). */
function byCodePoint(a: string, b: string): number {
  const x = [...a].map((c) => c.codePointAt(0) as number);
  const y = [...b].map((c) => c.codePointAt(0) as number);
  for (let i = 0; i < Math.min(x.length, y.length); i++) if (x[i] !== y[i]) return x[i] - y[i];
  return x.length - y.length;
}

/** The input positions in key order, from an order (null: the identity). */
const positions = (order: Uint32Array | null, n: number) => (order === null ? Array.from({ length: n }, (_, i) => i) : [...order]);

describe("the key kinds", () => {
  test("only number and text may be the key", () => {
    expect(Object.values(KINDS).filter((k) => k.key !== null).map((k) => k.kind)).toEqual(["number", "text"]);
  });

  test("a number key orders numerically, a text key by code point; input in order is kept (null)", () => {
    expect(numberKey?.order(numbers([1, 2, 30]))).toBeNull();
    expect(textKey?.order(texts(["a", "b", "é"]))).toBeNull();
    fc.assert(
      fc.property(fc.uniqueArray(fc.integer({ min: -1e6, max: 1e6 }), { maxLength: 40 }), (values) => {
        const sorted = values.map((v, i) => [v, i]).sort((a, b) => a[0] - b[0]);
        expect(positions((numberKey?.order(numbers(values)) ?? null) as Uint32Array | null, values.length)).toEqual(sorted.map(([, i]) => i));
      }),
    );
    fc.assert(
      fc.property(fc.uniqueArray(fc.string({ unit: "grapheme", maxLength: 4 }), { maxLength: 40 }), (values) => {
        const sorted = values.map((v, i) => [v, i] as const).sort((a, b) => byCodePoint(a[0], b[0]));
        expect(positions((textKey?.order(texts(values)) ?? null) as Uint32Array | null, values.length)).toEqual(sorted.map(([, i]) => i));
      }),
    );
    expect(() => numberKey?.order(numbers([3, 1, 3]))).toThrow(new RangeError("duplicate key 3"));
    expect(() => textKey?.order(texts(["b", "a", "b"]))).toThrow(new RangeError('duplicate key "b"'));
  });

  test("checks: the first problem in input order, a duplicate at its later row", () => {
    expect(numberKey?.check("id", numbers([3, 1, 2]))).toBeNull();
    expect(numberKey?.check("id", numbers([3, Number.NaN, 3]))).toEqual({ row: 1, reason: 'key "id" is null or missing (every record needs a key)' });
    expect(numberKey?.check("id", numbers([3, 1, 3, Number.NaN]))).toEqual({ row: 2, firstRow: 0, value: 3 });
    // -0 and 0 are one key, and -0 is written 0
    const zeros = numbers([0, 5, -0]);
    expect(numberKey?.check("id", zeros)).toEqual({ row: 2, firstRow: 0, value: 0 });
    expect(Object.is((zeros as { values: Float64Array }).values[2], 0)).toBe(true);
    expect(textKey?.check("user_id", texts(["a", "b"]))).toBeNull();
    expect(textKey?.check("user_id", texts(["a", null, "a"]))).toEqual({ row: 1, reason: 'key "user_id" is null or missing (every record needs a key)' });
    expect(textKey?.check("user_id", texts(["a", "", "a"]))).toEqual({ row: 1, reason: 'key "user_id" is empty (a text key is a non-empty string)' });
    expect(textKey?.check("user_id", texts(["a", "b", "a", ""]))).toEqual({ row: 2, firstRow: 0, value: "a" });
  });

  test("text keys: non-empty, at most 256 characters (UTF-16 code units)", () => {
    expect(textKeyReason("user_id", () => "", 0)).toBe('key "user_id" is empty (a text key is a non-empty string)');
    const long = "é".repeat(256);
    expect(textKeyReason("k", () => long, 512)).toBeNull();
    const longer = "x".repeat(257);
    expect(textKeyReason("k", () => longer, 257)).toBe(`key "k" has 257 characters ("${"x".repeat(60)}…"); a text key has at most 256`);
    expect(textKeyReason("k", () => "😀".repeat(129), 516)).toBe(`key "k" has 258 characters ("${"😀".repeat(30)}…"); a text key has at most 256`);
  });

});
