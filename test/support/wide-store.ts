/**
 * Test helper: a store of wide user records (the seed's four fields plus any columns of the
 * given kinds), built the way `snapshot build` builds one: each added column read value by value
 * (ingest/raw-column.ts), converted to its kind and handed to the store builder.
 */
import { addJsonValue, rawColumn } from "../../src/ingest/raw-column.ts";
import { convertColumn } from "../../src/kinds/registry.ts";
import { statusCode } from "../../src/schema.ts";
import { type ColumnSpec, SEED_COLUMNS, type Schema } from "../../src/schema/kinds.ts";
import { packStrings } from "../../src/bits/byte-column.ts";
import { buildStore } from "../../src/store/build.ts";
import type { Store } from "../../src/store/types.ts";

/** A wide record: the four seed fields and any others (JSON values; a missing field is null). */
export type WideRecord = { id: number; name: string; email: string; status: string } & Record<string, unknown>;

/**
 * Builds the store of `records` with the added columns `specs` (in schema order).
 * @throws ConversionError when a value does not fit its column's kind; RangeError as buildStore
 */
export function buildWideStore(records: readonly WideRecord[], specs: readonly ColumnSpec[]): Store {
  const n = records.length;
  const extra = specs.map((spec) => {
    const raw = rawColumn(spec.id, Math.max(1, n));
    for (const r of records) addJsonValue(raw, r[spec.id] ?? null);
    return { spec: { ...spec }, column: convertColumn(raw, spec) };
  });
  return buildStore({
    ids: Float64Array.from(records, (r) => r.id),
    names: packStrings(n, (i) => records[i].name),
    emails: packStrings(n, (i) => records[i].email),
    statusCodes: Uint8Array.from(records, (r) => statusCode(r.status)),
    extra,
  });
}

/**
 * One added column of every kind, for the random-dataset property tests: an enum declared out
 * of collation order, short ids (n, d, t, e, b, s, j).
 */
export const KIND_SPECS: ColumnSpec[] = [
  { id: "n", kind: "number" },
  { id: "d", kind: "date" },
  { id: "t", kind: "datetime" },
  { id: "e", kind: "enum", values: ["zeta", "Alpha", "beta"] },
  { id: "b", kind: "boolean" },
  { id: "s", kind: "text" },
  { id: "j", kind: "json" },
];

/** The schema of the seed's four and {@link KIND_SPECS}. */
export const KIND_SCHEMA: Schema = { columns: [...SEED_COLUMNS, ...KIND_SPECS], partition: "status" };
