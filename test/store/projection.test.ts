/**
 * Records cut to a projection of their columns (store/record-fields.ts; docs/api.md "Access
 * control": a column a role does not see is absent from its records and exports), against
 * independent expectations on random tables of every kind: a page is the JSON of each record
 * with only the kept members, in schema order; NDJSON and CSV exports are byte for byte those of
 * a store built with the kept columns alone; a live replica's changed rows are cut the same way.
 */
import { describe, expect, test } from "bun:test";
import fc from "fast-check";
import { applyChanges, createEngine, extraRecords } from "../../src/engine/execute.ts";
import { projectionOf, writeProjected } from "../../src/store/record-fields.ts";
import { rowsCsv, rowsNdjson } from "../../src/store/rows-export.ts";
import { createBodyBuffer, rowsToJson, writeRowsJsonInto } from "../../src/store/rows-json.ts";
import { tableArb } from "../support/table-arbitraries.ts";
import type { TableRecord } from "../support/table-oracle.ts";
import { buildTableStore } from "../support/table-store.ts";

const encoder = new TextEncoder();
const decoder = new TextDecoder();

/** A table, a subset of its columns (the key and some others) and some rows in some order. */
const caseArb = tableArb.chain(({ table, records }) =>
  fc.record({
    table: fc.constant(table),
    records: fc.constant(records),
    kept: fc.subarray(table.specs.map((s) => s.id), { minLength: 1 }),
    picks: fc.array(fc.nat({ max: records.length - 1 }), { maxLength: 30 }),
  }),
);

/** A record with only `kept` members, in the record's own order. */
function cut(record: Record<string, unknown>, kept: readonly string[]): Record<string, unknown> {
  const out: Record<string, unknown> = Object.create(null);
  for (const [id, value] of Object.entries(record)) if (kept.includes(id)) out[id] = value;
  return { ...out };
}

describe("records cut to a projection", () => {
  test("a page holds each record's kept members in schema order, for any rows and prefix and suffix", () => {
    fc.assert(
      fc.property(caseArb, ({ table, records, kept, picks }) => {
        const store = buildTableStore(records, table);
        const projection = projectionOf(store.schema, kept);
        const rows = Uint32Array.from(picks);
        const full = JSON.parse(decoder.decode(rowsToJson(store, rows))) as Record<string, unknown>[];
        const text = decoder.decode(rowsToJson(store, rows, null, projection));
        expect(JSON.parse(text)).toEqual(full.map((r) => cut(r, kept)));
        // the members in schema order: the projected record is the full one's text with the others left out
        expect(text).toBe(JSON.stringify(full.map((r) => cut(r, kept))));
        const buffer = createBodyBuffer(16);
        const body = decoder.decode(writeRowsJsonInto(buffer, store, rows, encoder.encode('{"data":'), encoder.encode("}"), null, projection));
        expect(body).toBe(`{"data":${text}}`);
      }),
      { numRuns: Number(process.env.PROPERTY_RUNS ?? 200) },
    );
  });

  test("NDJSON and CSV exports are those of a store of the kept columns alone", () => {
    fc.assert(
      fc.property(caseArb, ({ table, records, kept, picks }) => {
        const store = buildTableStore(records, table);
        const keptSpecs = table.specs.filter((s) => kept.includes(s.id));
        const projection = projectionOf(store.schema, kept);
        const rows = Uint32Array.from(picks);
        const ndjson = decoder.decode(rowsNdjson(store, rows, undefined, null, projection));
        const fullLines = decoder.decode(rowsNdjson(store, rows)).split("\n").filter((l) => l !== "");
        expect(ndjson).toBe(fullLines.map((l) => `${JSON.stringify(cut(JSON.parse(l), kept))}\n`).join(""));
        // with the key kept, a store of the kept columns alone numbers its rows in the same key order
        if (kept.includes(table.key)) {
          const alone = buildTableStore(
            records.map((r) => cut(r as TableRecord, kept)),
            { specs: keptSpecs, key: table.key },
          );
          expect(decoder.decode(rowsCsv(store, rows, undefined, null, projection))).toBe(decoder.decode(rowsCsv(alone, rows)));
        }
      }),
      { numRuns: Number(process.env.PROPERTY_RUNS ?? 200) },
    );
  });

  test("a live replica's changed rows are cut the same way", () => {
    fc.assert(
      fc.property(caseArb, ({ table, records, kept }) => {
        let engine = createEngine(buildTableStore(records, table));
        // every row rewritten as a changed row with its own values: the changed records are the base's
        const changes = records.map((record) => ({ op: "upsert" as const, record }));
        engine = applyChanges(engine, { lsn: "0/1", commitTime: Date.now(), changes });
        const extra = extraRecords(engine);
        if (extra === null) throw new Error("no changed rows");
        const n = engine.store.rowCount;
        const rows = Uint32Array.from({ length: records.length }, (_, i) => n + i);
        const projection = projectionOf(engine.store.schema, kept);
        const base = JSON.parse(decoder.decode(rowsToJson(engine.store, Uint32Array.from({ length: n }, (_, i) => i)))) as Record<string, unknown>[];
        const changed = JSON.parse(decoder.decode(rowsToJson(engine.store, rows, extra, projection))) as Record<string, unknown>[];
        // changed row n + i is the i-th change: the record of that key, as the base writes it
        const written = new Map(base.map((r) => [JSON.stringify(r[table.key]), r]));
        expect(changed).toEqual(records.map((r) => cut(written.get(JSON.stringify(r[table.key])) as Record<string, unknown>, kept)));
        expect(decoder.decode(rowsNdjson(engine.store, rows, undefined, extra, projection)).split("\n").filter((l) => l !== "").map((l) => JSON.parse(l))).toEqual(changed);
      }),
      { numRuns: Number(process.env.PROPERTY_RUNS ?? 100) },
    );
  });

  test("a record that is not the layout the store writes is refused, never read past", () => {
    const projection = projectionOf({ columns: [{ id: "id", kind: "number" }, { id: "name", kind: "text" }], key: "id", partition: null }, ["name"]);
    const out = new Uint8Array(64);
    const bytes = encoder.encode('{"id":1}');
    expect(() => writeProjected(bytes, 0, bytes.length, projection, out, 0)).toThrow(/^corrupt store: /);
    const ok = encoder.encode('{"id":1,"name":"a\\"b"}');
    const end = writeProjected(ok, 0, ok.length, projection, out, 0);
    expect(decoder.decode(out.subarray(0, end))).toBe('{"name":"a\\"b"}');
  });
});
