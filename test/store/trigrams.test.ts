import { describe, expect, test } from "bun:test";
import fc from "fast-check";
import { packStrings } from "../../src/store/byte-column.ts";
import { buildTrigramIndex, findList, isDense, listRows } from "../../src/store/trigrams.ts";
import type { TrigramIndex } from "../../src/store/types.ts";

/** A key's rows, decoded (empty when the key is absent). */
function postingList(index: TrigramIndex, key: number, rowCount: number): Uint32Array {
  const k = findList(index, key);
  return k < 0 ? new Uint32Array(0) : listRows(index, k, rowCount);
}

const encoder = new TextEncoder();
const key = (s: string) => {
  const b = encoder.encode(s);
  return (b[0] << 16) | (b[1] << 8) | b[2];
};

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

  test("a row is in a key's list exactly when its bytes contain the key (repeated builds)", () => {
    fc.assert(
      fc.property(fc.array(fc.string({ unit: fc.constantFrom(..."abcé中"), maxLength: 8 }), { maxLength: 30 }), (values) => {
        const col = packStrings(values.length, (i) => values[i]);
        const index = buildTrigramIndex(col.bytes, col.offsets, values.length);
        for (let k = 0; k < index.keys.length; k++) {
          const t = index.keys[k];
          const needle = Buffer.from([t >> 16, (t >> 8) & 255, t & 255]);
          const expected = values.flatMap((v, row) => (Buffer.from(encoder.encode(v)).includes(needle) ? [row] : []));
          expect(Array.from(postingList(index, t, values.length))).toEqual(expected);
          expect(index.counts[k]).toBe(expected.length);
        }
      }),
      { numRuns: 300 },
    );
  });
});
