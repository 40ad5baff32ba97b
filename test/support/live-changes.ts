/**
 * Test helper: random batches of a live replica's changes over a random table (updates, deletes,
 * inserts, key changes), applied to the oracle's records and returned as a batch holds them; and
 * a record as the service writes it.
 */
import fc from "fast-check";
import type { Change } from "../../src/live/changes.ts";
import type { ColumnSpec } from "../../src/schema/kinds.ts";
import { valueArb } from "./table-arbitraries.ts";
import type { Table, TableRecord } from "./table-oracle.ts";

/** A record as the service writes it: every value as JSON has it (date-times as ISO 8601 UTC). */
export function written(table: Table, record: TableRecord): TableRecord {
  const out: TableRecord = Object.create(null);
  for (const spec of table.specs) {
    const v = record[spec.id] ?? null;
    out[spec.id] = spec.kind === "datetime" && v !== null ? new Date(v as string).toISOString() : v;
  }
  return { ...out };
}

/**
 * One batch of a live replica's changes: updates of rows (new values, same key; a row may be
 * picked twice), deletes, inserts of new keys, and key changes (a row deleted and its new
 * values inserted under a new key).
 */
export interface LiveChanges {
  updates: { pick: number; values: unknown[] }[];
  deletes: number[];
  inserts: { key: number | string; values: unknown[] }[];
  rekeys: { pick: number; key: number | string; values: unknown[] }[];
}

/** Random batches of changes fitting `table` (see {@link LiveChanges}). */
export function changesArb(table: Table): fc.Arbitrary<LiveChanges> {
  const others = table.specs.filter((s) => s.id !== table.key);
  const keySpec = table.specs.find((s) => s.id === table.key) as ColumnSpec;
  const values = fc.tuple(...others.map(valueArb));
  const key: fc.Arbitrary<number | string> = keySpec.kind === "text" ? fc.stringMatching(/^[0-9a-f]{6}-new$/) : fc.integer({ min: 1000, max: 5000 });
  return fc.record({
    updates: fc.array(fc.record({ pick: fc.nat(), values }), { maxLength: 6 }),
    deletes: fc.array(fc.nat(), { maxLength: 3 }),
    inserts: fc.uniqueArray(fc.record({ key, values }), { maxLength: 6, selector: (i) => i.key }),
    rekeys: fc.array(fc.record({ pick: fc.nat(), key, values }), { maxLength: 2 }),
  });
}

/** Applies the changes to the records (the oracle's table) and returns them as a batch holds them. */
export function applyToRecords(table: Table, records: TableRecord[], changes: LiveChanges): Change[] {
  const others = table.specs.filter((s) => s.id !== table.key);
  const out: Change[] = [];
  const make = (key: unknown, values: unknown[]): TableRecord => {
    const record: TableRecord = Object.create(null);
    for (const spec of table.specs) record[spec.id] = spec.id === table.key ? key : values[others.indexOf(spec)];
    return { ...record };
  };
  for (const u of changes.updates) {
    if (records.length === 0) break;
    const i = u.pick % records.length;
    records[i] = make(records[i][table.key], u.values);
    out.push({ op: "upsert", record: records[i] });
  }
  for (const d of changes.deletes) {
    if (records.length <= 1) break;
    const [gone] = records.splice(d % records.length, 1);
    out.push({ op: "delete", key: gone[table.key] as number | string });
  }
  for (const ins of changes.inserts) {
    if (records.some((r) => r[table.key] === ins.key)) continue;
    const record = make(ins.key, ins.values);
    records.push(record);
    out.push({ op: "upsert", record });
  }
  for (const r of changes.rekeys) {
    if (records.length <= 1 || records.some((x) => x[table.key] === r.key)) continue;
    const [gone] = records.splice(r.pick % records.length, 1);
    out.push({ op: "delete", key: gone[table.key] as number | string });
    const record = make(r.key, r.values);
    records.push(record);
    out.push({ op: "upsert", record });
  }
  return out;
}

