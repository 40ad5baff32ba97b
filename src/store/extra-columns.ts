/**
 * The columns beyond the seed's four, built by their kinds (src/kinds): each column's stored
 * parts (ranks, rows by value, distinct values or folded bytes) and its JSON literals in row
 * order, for the records. Runs on the main thread (build.ts `buildStore`) or in a worker
 * (`buildStoreParallel`, column-worker.ts).
 */
import { gatherByteColumn } from "../bits/byte-column.ts";
import type { StoredColumn } from "../kinds/kind.ts";
import { KINDS } from "../kinds/registry.ts";
import type { ExtraInput } from "./build.ts";
import type { RecordField } from "./records.ts";
import { buildTrigramIndex } from "./trigrams.ts";

/** The built columns beyond the four: by id, and their record fields in schema order. */
export interface ExtraColumnsBuilt {
  columns: Record<string, StoredColumn>;
  fields: RecordField[];
}

/**
 * Builds every column of `extra` (schema order), and a trigram index over each column that has
 * folded strings (`text`: what substring filters and search terms read).
 * @param byId store row → input position (ascending id), or null when input order is row order
 * @param statusCodes each store row's partition code (length rowCount): the trigram lists' groups
 */
export function buildExtraColumns(extra: readonly ExtraInput[], byId: Uint32Array | null, statusCodes: Uint8Array, onColumn?: () => void): ExtraColumnsBuilt {
  const columns: Record<string, StoredColumn> = {};
  const fields: RecordField[] = [];
  for (const { spec, column } of extra) {
    onColumn?.();
    const kind = KINDS[spec.kind];
    const built = kind.build(spec, column, byId);
    if (built.folded !== null && built.foldedOffsets !== null) built.trigrams = buildTrigramIndex(built.folded, built.foldedOffsets, statusCodes.length, statusCodes);
    columns[spec.id] = built;
    const literals = kind.literals(spec, column);
    fields.push({ id: spec.id, literals: byId === null ? literals : gatherByteColumn(literals, byId) });
  }
  return { columns, fields };
}

/** Every typed array's buffer in `value` (objects and arrays walked), for a transfer list. */
export function buffersOf(value: unknown, out: Set<ArrayBuffer> = new Set()): ArrayBuffer[] {
  if (ArrayBuffer.isView(value)) out.add(value.buffer as ArrayBuffer);
  else if (Array.isArray(value)) for (const v of value) buffersOf(v, out);
  else if (typeof value === "object" && value !== null) for (const v of Object.values(value)) buffersOf(v, out);
  return [...out];
}
