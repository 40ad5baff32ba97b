import { describe, expect, test } from "bun:test";
import fc from "fast-check";
import { packStrings } from "../../src/bits/byte-column.ts";
import { MAX_KEY_CODE_POINT, buildTrigramIndex, findList, isDense, listRows, needleTrigrams, trigramKey } from "../../src/bits/trigrams.ts";
import type { TrigramIndex } from "../../src/store/types.ts";

/** A key's rows, decoded (empty when the key is absent). */
function postingList(index: TrigramIndex, key: number, rowCount: number): Uint32Array {
  const k = findList(index, key);
  return k < 0 ? new Uint32Array(0) : listRows(index, k, rowCount);
}

/** The key of a 3-code-point string. */
const key = (s: string) => {
  const cps = Array.from(s, (ch) => ch.codePointAt(0) as number);
  expect(cps.length).toBe(3);
  return trigramKey(cps[0], cps[1], cps[2]);
};

/** Every trigram (3 consecutive code points, clamped as keys clamp them) of a string. */
function trigramsOf(s: string): number[] {
  const cps = Array.from(s, (ch) => ch.codePointAt(0) as number);
  const out: number[] = [];
  for (let i = 0; i + 2 < cps.length; i++) out.push(trigramKey(cps[i], cps[i + 1], cps[i + 2]));
  return out;
}

describe("trigram index", () => {
  test("literal posting lists, each row once", () => {
    const values = ["banana", "ban", "nab", "", "an", "ananas"];
    const col = packStrings(values.length, (i) => values[i]);
    const index = buildTrigramIndex(col.bytes, col.offsets, values.length);
    expect(Array.from(postingList(index, key("ban"), values.length))).toEqual([0, 1]);
    expect(Array.from(postingList(index, key("ana"), values.length))).toEqual([0, 5]);
    expect(Array.from(postingList(index, key("nan"), values.length))).toEqual([0, 5]);
    expect(Array.from(postingList(index, key("xyz"), values.length))).toEqual([]);
    expect(Array.from(index.keys)).toEqual([...index.keys].sort((a, b) => a - b));
  });

  test("trigrams are code points: a 3-letter word in any script is one list", () => {
    const values = ["иванова", "ова", "σοφία", "王小明", "ов", "a😀bc"];
    const col = packStrings(values.length, (i) => values[i]);
    const index = buildTrigramIndex(col.bytes, col.offsets, values.length);
    expect(Array.from(postingList(index, key("ова"), values.length))).toEqual([0, 1]);
    expect(Array.from(postingList(index, key("οφί"), values.length))).toEqual([2]);
    expect(Array.from(postingList(index, key("小明"[0] + "小明"[1] + "x"), values.length))).toEqual([]);
    expect(Array.from(postingList(index, key("王小明"), values.length))).toEqual([3]);
    expect(Array.from(postingList(index, key("a😀b"), values.length))).toEqual([5]);
    // "ов" has 2 code points: no trigram; "иванова" has 5 distinct ones.
    expect(index.counts.reduce((s, c) => s + c, 0)).toBe(5 + 1 + 3 + 1 + 0 + 2);
  });

  test("needle trigrams: null under 3 code points; code points past U+1FFFF share a key and are not exact", () => {
    expect(needleTrigrams("ов")).toBeNull();
    expect(needleTrigrams("ова")).toEqual({ keys: [key("ова")], codePoints: 3, exact: true });
    expect(needleTrigrams("aaaa")).toEqual({ keys: [key("aaa")], codePoints: 4, exact: true });
    expect(needleTrigrams("a😀b")?.exact).toBe(true);
    const rare = String.fromCodePoint(0x20000); // CJK Extension B
    const other = String.fromCodePoint(0x20001);
    expect(needleTrigrams(`a${rare}b`)).toEqual({ keys: [trigramKey(97, MAX_KEY_CODE_POINT, 98)], codePoints: 3, exact: false });
    expect(needleTrigrams(`a${other}b`)?.keys).toEqual(needleTrigrams(`a${rare}b`)?.keys as number[]);
  });

  test("dense lists are bitmaps, sparse ones LEB128 gaps (multi-byte gaps included)", () => {
    // 5000 rows: "zzz" in every row (dense); "qqq" in rows 0, 200 and 4999 (gaps of 2 bytes).
    const values = Array.from({ length: 5000 }, (_, i) => (i === 0 || i === 200 || i === 4999 ? "zzzqqq" : "zzz"));
    const col = packStrings(values.length, (i) => values[i]);
    const index = buildTrigramIndex(col.bytes, col.offsets, values.length);
    const dense = findList(index, key("zzz"));
    const sparse = findList(index, key("qqq"));
    expect(isDense(index.counts[dense], 5000)).toBe(true);
    expect(isDense(index.counts[sparse], 5000)).toBe(false);
    expect(index.bitmaps.length).toBe(Math.ceil(5000 / 32));
    expect(listRows(index, dense, 5000).length).toBe(5000);
    expect(Array.from(listRows(index, sparse, 5000))).toEqual([0, 200, 4999]);
    // 0 → 1 byte; 200 → 2 bytes (0xc8 0x01); 4799 → 2 bytes.
    expect(Array.from(index.gaps.subarray(index.refs[sparse], index.refs[sparse] + 5))).toEqual([0x00, 0xc8, 0x01, 0xbf, 0x25]);
  });

  test("a row is in a key's list exactly when the value holds the trigram (repeated builds)", () => {
    const rare = String.fromCodePoint(0x20000);
    const rare2 = String.fromCodePoint(0x2a6d6);
    fc.assert(
      fc.property(fc.array(fc.string({ unit: fc.constantFrom("a", "b", "c", "é", "ж", "中", "😀", rare, rare2), maxLength: 8 }), { maxLength: 40 }), (values) => {
        const col = packStrings(values.length, (i) => values[i]);
        const index = buildTrigramIndex(col.bytes, col.offsets, values.length);
        const expectedKeys = [...new Set(values.flatMap(trigramsOf))].sort((a, b) => a - b);
        expect(Array.from(index.keys)).toEqual(expectedKeys);
        for (let k = 0; k < index.keys.length; k++) {
          const t = index.keys[k];
          const expected = values.flatMap((v, row) => (trigramsOf(v).includes(t) ? [row] : []));
          expect(Array.from(postingList(index, t, values.length))).toEqual(expected);
          expect(index.counts[k]).toBe(expected.length);
        }
      }),
      { numRuns: 300 },
    );
  });

  test("dense and sparse lists agree with a direct count over many rows and gaps", () => {
    fc.assert(
      fc.property(fc.array(fc.constantFrom("abc", "abcd", "xyz", "ова", "", "bcd", "zabc"), { minLength: 64, maxLength: 600 }), (values) => {
        const col = packStrings(values.length, (i) => values[i]);
        const index = buildTrigramIndex(col.bytes, col.offsets, values.length);
        for (const t of ["abc", "bcd", "xyz", "ова", "zab"]) {
          const expected = values.flatMap((v, row) => (v.includes(t) ? [row] : []));
          expect(Array.from(postingList(index, key(t), values.length))).toEqual(expected);
        }
      }),
      { numRuns: 100 },
    );
  });
});
