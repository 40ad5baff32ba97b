/**
 * Test helper: a store of any table (records as plain objects, every column's kind given), built
 * the way `snapshot build` builds one: each column read value by value (ingest/raw-column.ts),
 * converted to its kind and handed to the store builder.
 */
import { tableOfObjects } from "../../src/snapshot/objects.ts";
import type { ColumnSpec, Schema } from "../../src/schema/kinds.ts";
import { buildStore } from "../../src/store/build.ts";
import { recordAt } from "../../src/store/rows-json.ts";
import type { ExtraRecords, Store } from "../../src/store/types.ts";
import type { Table, TableRecord } from "./table-oracle.ts";

export type { Table, TableRecord };

/** A record of the seed's shape and any other fields (JSON values; a missing field is null). */
export type WideRecord = { id: number; name: string; email: string; status: string } & Record<string, unknown>;

/**
 * Builds the store of `records` with the columns `table.specs` (every column, in schema order)
 * keyed by `table.key`.
 * @throws Error when a value does not fit its column's kind; RangeError as buildStore
 */
export function buildTableStore(records: readonly object[], table: Table): Store {
  return buildStore(tableOfObjects(records as readonly TableRecord[], { key: table.key, columns: table.specs }));
}

/**
 * The key of each row, as its record holds it (what a test compares with the oracle's keys);
 * `extra`: a live engine's changed rows (engine/execute.ts `extraRecords`).
 */
export function keysOf(store: Store, rows: Uint32Array, extra: ExtraRecords | null = null): unknown[] {
  return Array.from(rows, (row) => recordAt(store, row, extra)[store.schema.key]);
}

/** The seed's four columns, as the default data declares them (src/generate/record.ts). */
export const SEED_SPECS: ColumnSpec[] = [
  { id: "id", kind: "number" },
  { id: "name", kind: "text" },
  { id: "email", kind: "text" },
  { id: "status", kind: "enum", values: ["active", "inactive"] },
];

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

/** The seed's four and {@link KIND_SPECS}, keyed by `id`. */
export const KIND_TABLE: Table = { specs: [...SEED_SPECS, ...KIND_SPECS], key: "id" };

/** The schema a store of {@link KIND_TABLE} gets (the status column partitions it). */
export const KIND_SCHEMA: Schema = { columns: [...SEED_SPECS, ...KIND_SPECS], key: "id", partition: "status" };

/** Builds the store of wide records: the seed's four and the `specs` after them, keyed by `id`. */
export function buildWideStore(records: readonly TableRecord[], specs: readonly ColumnSpec[]): Store {
  return buildTableStore(records, { specs: [...SEED_SPECS, ...specs], key: "id" });
}

/** Builds the store of generated-user-shaped records (the default data's four columns, keyed by `id`). */
export function buildStoreFromRecords(records: readonly object[]): Store {
  return buildTableStore(records as readonly TableRecord[], { specs: SEED_SPECS, key: "id" });
}

/** The schema of a store of generated-user-shaped records: keyed by `id`, partitioned by `status`. */
export const SEED_SCHEMA: Schema = { columns: SEED_SPECS, key: "id", partition: "status" };
