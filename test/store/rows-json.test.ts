import { describe, expect, test } from "bun:test";
import { type RecordField, buildRecords, chooseChunkShift } from "../../src/store/records.ts";
import { packJsonLiterals, packStrings } from "../../src/bits/byte-column.ts";
import fc from "fast-check";
import type { UserRecord } from "../../src/generate/record.ts";
import { buildStoreFromRecords } from "../support/table-store.ts";
import { createBodyBuffer, recordAt, rowsToJson, writeRowsJson, writeRowsJsonInto } from "../../src/store/rows-json.ts";
import type { Store } from "../../src/store/types.ts";
import { recordsArb } from "../support/arbitraries.ts";

const decode = (b: Uint8Array) => new TextDecoder().decode(b);

describe("rows to JSON", () => {
  test("is JSON.stringify of the records, for every key form", () => {
    fc.assert(
      fc.property(recordsArb, fc.array(fc.nat(), { maxLength: 20 }), (records, picks) => {
        if (records.length === 0) return;
        const store = buildStoreFromRecords(records);
        const byId = [...records].sort((a, b) => a.id - b.id);
        const rows = Uint32Array.from(picks, (p) => p % records.length);
        const expected = Array.from(rows, (r) => byId[r]);
        expect(decode(rowsToJson(store, rows))).toBe(JSON.stringify(expected));
      }),
      { numRuns: 300 },
    );
  });

  test("ids of every magnitude and sign, with a prefix and a suffix", () => {
    const ids = [0, -0.5, 7, -7, 10, 99, 100, -1000, 123456789, 2 ** 31 - 1, 2 ** 31, -(2 ** 31 - 1), -(2 ** 31), 1e9, 999999999, 2 ** 53 - 1, -(2 ** 53 - 1), 1e21, 1.5e-7, 999999999999999, 1e15];
    const records: UserRecord[] = ids.map((id, i) => ({ id, name: `n${i}`, email: `e${i}`, status: i % 2 ? "inactive" : "active" }));
    const store = buildStoreFromRecords(records);
    const rows = Uint32Array.from({ length: ids.length }, (_, i) => i);
    const sorted = [...records].sort((a, b) => a.id - b.id);
    const enc = new TextEncoder();
    expect(decode(writeRowsJson(store, rows, enc.encode('{"data":'), enc.encode(',"total":3}')))).toBe(`{"data":${JSON.stringify(sorted)},"total":3}`);
    expect(decode(rowsToJson(store, new Uint32Array(0)))).toBe("[]");
  });

  test("raw values and records decode from the records, escapes included", () => {
    fc.assert(
      fc.property(recordsArb, (records) => {
        const store = buildStoreFromRecords(records);
        const byId = [...records].sort((a, b) => a.id - b.id);
        byId.forEach((r, row) => {
          expect(recordAt(store, row) as unknown).toEqual(r);
        });
      }),
      { numRuns: 200 },
    );
    const tricky: UserRecord[] = [{ id: -12, name: 'a"\\"b\\', email: "\u0000\n\"@x", status: "inactive" }];
    const store = buildStoreFromRecords(tricky);
    expect(recordAt(store, 0) as unknown).toEqual(tricky[0]);
  });

  test("bodies that do not fit the scratch area are written apart, with the same bytes", () => {
    const records: UserRecord[] = Array.from({ length: 50 }, (_, i) => ({ id: i * 3 - 7, name: `Ünïcode "${i}"`, email: `u${i}@example.com`, status: i % 4 ? "active" : "inactive" }));
    const store = buildStoreFromRecords(records);
    const sorted = [...records].sort((a, b) => a.id - b.id);
    const enc = new TextEncoder();
    const prefix = enc.encode('{"data":');
    const suffix = enc.encode(',"total":50}');
    const rows = Uint32Array.from({ length: 50 }, (_, i) => (i * 7) % 50);
    const expected = `{"data":${JSON.stringify(Array.from(rows, (r) => sorted[r]))},"total":50}`;
    const { chunks, scratch } = store.records;
    const bytes = chunks[0];
    // a scratch area too short for the body, in the records' buffer; one in another buffer
    const short: Store = { ...store, records: { ...store.records, scratch: new Uint8Array(bytes.buffer, scratch.byteOffset, 64) } };
    const apart: Store = { ...store, records: { ...store.records, scratch: new Uint8Array(scratch.length) } };
    for (const s of [store, short, apart]) {
      const buffer = createBodyBuffer(16);
      expect(decode(writeRowsJsonInto(buffer, s, rows, prefix, suffix))).toBe(expected);
      expect(decode(writeRowsJson(s, rows, prefix, suffix))).toBe(expected);
    }
    // the scratch area was used only when the body fit
    expect(decode(scratch.subarray(0, 8))).toBe('{"data":');
  });

  test("into a reusable buffer: the same bytes, the buffer growing as needed", () => {
    const records: UserRecord[] = Array.from({ length: 300 }, (_, i) => ({ id: i * 7 - 50, name: `Zoë ${i}`, email: `z${i}@example.com`, status: i % 3 ? "active" : "inactive" }));
    const store = buildStoreFromRecords(records);
    const buffer = createBodyBuffer(16);
    const enc = new TextEncoder();
    for (const count of [0, 1, 5, 300, 2]) {
      const rows = Uint32Array.from({ length: count }, (_, i) => (i * 37) % records.length);
      const prefix = enc.encode('{"data":');
      const suffix = enc.encode(`,"total":${count}}`);
      expect(decode(writeRowsJsonInto(buffer, store, rows, prefix, suffix))).toBe(decode(writeRowsJson(store, rows, prefix, suffix)));
    }
  });
});

/** The four fields of sorted generated-user records as record fields (JSON literals in row order). */
function fieldsOf(sorted: UserRecord[]): RecordField[] {
  const n = sorted.length;
  const literal = (f: (r: UserRecord) => string) => packStrings(n, (i) => f(sorted[i]));
  return [
    { id: "id", literals: literal((r) => JSON.stringify(r.id)) },
    { id: "name", literals: packJsonLiterals(packStrings(n, (i) => sorted[i].name)) },
    { id: "email", literals: packJsonLiterals(packStrings(n, (i) => sorted[i].email)) },
    { id: "status", literals: literal((r) => JSON.stringify(r.status)) },
  ];
}

describe("records in several chunks (store/records.ts: no 32-bit limit on the row count)", () => {
  test("chunks of 2^k rows, each under the byte limit, give the same records and bodies", () => {
    const records: UserRecord[] = Array.from({ length: 37 }, (_, i) => ({ id: i * 5 - 40, name: `Nöme ${i}`, email: `n${i}@x.org`, status: i % 3 ? "active" : "inactive" }));
    const one = buildStoreFromRecords(records);
    const sorted = [...records].sort((a, b) => a.id - b.id);
    const enc = new TextEncoder();
    // at most 200 bytes a chunk: about 3 records, so 2^1 rows a chunk
    const chunked = buildRecords(fieldsOf(sorted), 37, 4096, 200);
    expect(chunked.chunks.length).toBeGreaterThan(1);
    expect(chunked.chunks.length).toBe(Math.ceil(37 / 2 ** chunked.chunkShift));
    for (const chunk of chunked.chunks) expect(chunk.length).toBeLessThanOrEqual(200);
    expect(chunked.offsets.length).toBe(37 + chunked.chunks.length);
    const store: Store = { ...one, records: chunked };
    for (let row = 0; row < 37; row++) expect(recordAt(store, row) as unknown).toEqual(sorted[row]);
    const rows = Uint32Array.from({ length: 37 }, (_, i) => (i * 11) % 37);
    const prefix = enc.encode('{"data":');
    const suffix = enc.encode("}");
    expect(decode(writeRowsJson(store, rows, prefix, suffix))).toBe(`{"data":${JSON.stringify(Array.from(rows, (r) => sorted[r]))}}`);
    expect(decode(writeRowsJsonInto(createBodyBuffer(8), store, rows, prefix, suffix))).toBe(decode(writeRowsJson(one, rows, prefix, suffix)));
  });

  test("records written through a moving window (indexes below 2^31) are the same bytes", () => {
    const records: UserRecord[] = Array.from({ length: 60 }, (_, i) => ({ id: i * 7 - 100, name: `Wïndow ${i}`, email: `w${i}@x.org`, status: i % 2 ? "active" : "inactive" }));
    const one = buildStoreFromRecords(records);
    const sorted = [...records].sort((a, b) => a.id - b.id);
    const whole = buildRecords(fieldsOf(sorted), 60, 1024);
    expect(Buffer.compare(whole.chunks[0], one.records.chunks[0])).toBe(0);
    // a 160-byte window moving on past 80 bytes: several moves per chunk, one chunk
    const windowed = buildRecords(fieldsOf(sorted), 60, 1024, undefined, 160);
    expect(windowed.chunks.length).toBe(1);
    expect(Buffer.compare(windowed.chunks[0], whole.chunks[0])).toBe(0);
    expect(Array.from(windowed.offsets)).toEqual(Array.from(whole.offsets));
    expect(() => buildRecords(fieldsOf(sorted), 60, 1024, undefined, 40)).toThrow(RangeError);
  });

  test("the chunk shift is the largest at which every chunk fits", () => {
    expect(chooseChunkShift(Uint32Array.from([10, 10, 10, 10]), 40)).toBe(31);
    expect(chooseChunkShift(Uint32Array.from([10, 10, 10, 10]), 39)).toBe(1);
    expect(chooseChunkShift(Uint32Array.from([10, 30, 10, 10]), 39)).toBe(0);
    expect(() => chooseChunkShift(Uint32Array.from([10, 50]), 40)).toThrow(RangeError);
  });
});

