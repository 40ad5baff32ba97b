/**
 * The schema decision of a build (docs/api.md "Columns beyond the four"): every field beyond the
 * seed's four gets its kind from the schema file when it lists it, else by inference from all of
 * its values; then each column is converted to its kind, and a value that does not fit stops the
 * build with `file:line: reason`.
 */
import { readFileSync } from "node:fs";
import { type RawColumn, addJsonValue, rawColumn } from "../ingest/raw-column.ts";
import { ConversionError } from "../kinds/convert.ts";
import { convertColumn } from "../kinds/registry.ts";
import { IngestError, type RawColumns } from "../ingest/read.ts";
import { inferKind } from "../schema/infer.ts";
import { type ColumnSpec, SchemaError, parseSchemaFile } from "../schema/kinds.ts";
import type { ColumnInput } from "../store/input.ts";

/**
 * Reads and validates a schema file (`snapshot build --schema F`).
 * @returns the columns it declares beyond the seed's four, in file order
 * @throws SchemaError naming the file and the problem: unreadable, not JSON, or what
 *   schema/kinds.ts `parseSchemaFile` refuses
 */
export function readSchemaFile(path: string): ColumnSpec[] {
  let text: string;
  try {
    text = readFileSync(path, "utf8");
  } catch (error) {
    throw new SchemaError(`${path}: cannot read the schema file (${(error as NodeJS.ErrnoException).code ?? (error as Error).message})`);
  }
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (error) {
    throw new SchemaError(`${path}: the schema file is not JSON (${(error as Error).message})`);
  }
  try {
    return parseSchemaFile(value);
  } catch (error) {
    if (error instanceof SchemaError) throw new SchemaError(`${path}: ${error.message}`);
    throw error;
  }
}

/**
 * Decides each added column's kind and converts it. The columns come in the input's order
 * (first seen; a CSV's header order), then the columns the schema file declares that the input
 * lacks, in the file's order, all null. Releases the raw columns as it goes.
 * @param file the input's name, for errors
 * @param columns the reader's columns (their `extra` is emptied)
 * @param declared the schema file's columns beyond the four (empty without one)
 * @returns the added columns in schema order, each converted (n rows, input order)
 * @throws IngestError `file:line: reason` for the first value that does not fit its column's kind
 */
export function decideColumns(file: string, columns: RawColumns, declared: readonly ColumnSpec[]): ColumnInput[] {
  const n = columns.ids.length;
  const byId = new Map(declared.map((spec) => [spec.id, spec]));
  const raws: RawColumn[] = [...columns.extra];
  columns.extra = [];
  for (const spec of declared) {
    if (raws.some((r) => r.id === spec.id)) continue;
    const empty = rawColumn(spec.id, Math.max(1, n));
    for (let row = 0; row < n; row++) addJsonValue(empty, null);
    raws.push(empty);
  }
  const out: ColumnInput[] = [];
  for (let i = 0; i < raws.length; i++) {
    const raw = raws[i];
    const spec: ColumnSpec = byId.get(raw.id) ?? { id: raw.id, ...inferKind(raw.profile, n) };
    try {
      out.push({ spec, values: convertColumn(raw, spec) });
    } catch (error) {
      if (error instanceof ConversionError) throw new IngestError(file, columns.lines[error.row], error.reason);
      throw error;
    }
    raws[i] = null as unknown as RawColumn;
  }
  return out;
}
