import { describe, expect, test } from "bun:test";
import fc from "fast-check";
import { packStrings } from "../../src/store/byte-column.ts";
import { buildTrigramIndex, postingList } from "../../src/store/trigrams.ts";

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
    expect(Array.from(postingList(index, key("ban")))).toEqual([0, 1]);
    expect(Array.from(postingList(index, key("ana")))).toEqual([0, 5]);
    expect(Array.from(postingList(index, key("nan")))).toEqual([0, 5]);
    expect(Array.from(postingList(index, key("xyz")))).toEqual([]);
    expect(Array.from(index.keys)).toEqual([...index.keys].sort((a, b) => a - b));
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
          expect(Array.from(postingList(index, t))).toEqual(expected);
        }
        expect(index.postings.length).toBe(index.offsets[index.keys.length]);
      }),
      { numRuns: 300 },
    );
  });
});
