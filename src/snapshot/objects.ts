/**
 * A table from JavaScript objects (records already in memory: tests, tools, the default data's
 * generator): every field a column, its kind declared or inferred by the rules of
 * schema/infer.ts, converted by its kind, and the key named. The same decisions as a file's
 * build, without a file.
 */
import { ConversionError } from "../kinds/convert.ts";
import { KINDS } from "../kinds/registry.ts";
import { inferKeyKind, inferKind } from "../schema/infer.ts";
import type { ColumnSpec } from "../schema/kinds.ts";
import type { ColumnInput, TableInput } from "../store/input.ts";
import { addJsonValue, rawColumn } from "../ingest/raw-column.ts";
import { RAW, type RawColumn } from "../schema/raw-column.ts";

/** Options of {@link tableOfObjects}. */
export interface ObjectTableOptions {
  /** The key column's id (default `id`); its kind is declared, else number when every value is a number, else text. */
  key?: string;
  /** Kinds of the columns they list (the others are inferred from their values). */
  columns?: readonly ColumnSpec[];
}

/**
 * The table of `records`: their fields in first-seen order (the declared columns first, in their
 * order, when `columns` lists them), a missing field null.
 * @throws Error naming the record (0-based) and the reason: a key that is missing, null, not a
 *   number or a string, or repeated; a value that does not fit its column's kind
 */
export function tableOfObjects(records: Iterable<Record<string, unknown>>, options: ObjectTableOptions = {}): TableInput {
  const key = options.key ?? "id";
  const declared = new Map((options.columns ?? []).map((c) => [c.id, c]));
  const raws = new Map<string, RawColumn>();
  for (const spec of options.columns ?? []) raws.set(spec.id, rawColumn(spec.id));
  let n = 0;
  for (const record of records) {
    for (const field of Object.keys(record)) {
      if (!raws.has(field)) {
        const column = rawColumn(field, Math.max(1024, n + 1));
        for (let row = 0; row < n; row++) addJsonValue(column, null);
        raws.set(field, column);
      }
    }
    for (const [field, column] of raws) addJsonValue(column, Object.hasOwn(record, field) ? record[field] : null);
    n++;
  }
  const keyRaw = raws.get(key);
  if (keyRaw === undefined) throw new Error(`the key "${key}" is not a field of the records`);
  for (let row = 0; row < n; row++) {
    const tag = keyRaw.tags[row];
    if (tag === RAW.NULL) throw new Error(`record ${row}: the key "${key}" is missing or null`);
    if (tag !== RAW.NUMBER && tag !== RAW.STRING) throw new Error(`record ${row}: the key "${key}" is not a number or a string`);
  }
  const columns: ColumnInput[] = [];
  for (const [id, raw] of raws) {
    let spec = declared.get(id);
    if (spec === undefined) {
      if (id === key) spec = { id, kind: inferKeyKind(raw.profile) };
      else spec = { id, ...inferKind(raw.profile, n) };
    }
    try {
      columns.push({ spec, values: KINDS[spec.kind].convert(raw, spec) });
    } catch (error) {
      if (error instanceof ConversionError) throw new Error(`record ${error.row}: ${error.reason}`);
      throw error;
    }
  }
  return { rows: n, columns, key };
}
