/**
 * The generated users (users.ts) as the table a store build takes (store/input.ts
 * `TableInput`): the default data and the test and benchmark datasets, without a file between.
 * The columns are the seed's shape — the key `id` (number), `name` and `email` (text), `status`
 * (an enum of `active`, `inactive`) — and, for a wide table, the seven of wide.ts with their
 * declared kinds. Each value goes through the same raw column and conversion as a value read
 * from a file, so the table equals the one `snapshot build` makes of the written file with
 * these kinds.
 */
import { addJsonValue, rawColumn } from "../ingest/raw-column.ts";
import { convertColumn } from "../kinds/registry.ts";
import type { ColumnSpec } from "../schema/kinds.ts";
import type { TableInput } from "../store/input.ts";
import { type GenerateOptions, generateUsers } from "./users.ts";
import { WIDE_COLUMN_SPECS } from "./wide.ts";
import { USER_COLUMN_SPECS, USER_KEY } from "./record.ts";

/** The columns of a generated table with `wide`: the seed's shape (record.ts `USER_COLUMN_SPECS`), then wide.ts's seven. */
export function generatedColumns(wide: boolean): ColumnSpec[] {
  return [...USER_COLUMN_SPECS, ...(wide ? WIDE_COLUMN_SPECS : [])].map((spec) => ({ ...spec, ...(spec.values ? { values: [...spec.values] } : {}) }));
}

/**
 * The generated users of `options` (users.ts `generateUsers`, the same rows) as a table.
 * @param onProgress called with the rows generated so far, every 65,536 rows
 * @returns a table of `options.count` rows keyed by `id`, columns as {@link generatedColumns}
 * @throws RangeError for bad options (users.ts `generateUsers`)
 */
export function generatedTable(options: GenerateOptions, onProgress?: (rows: number) => void): TableInput {
  const specs = generatedColumns(options.wide === true);
  const n = options.count;
  const raws = specs.map((spec) => rawColumn(spec.id, Math.max(2, n), Math.max(64, n * (spec.id === "notes" ? 64 : 24))));
  let rows = 0;
  for (const user of generateUsers(options)) {
    const record = user as unknown as Record<string, unknown>;
    for (let c = 0; c < raws.length; c++) addJsonValue(raws[c], record[specs[c].id]);
    rows++;
    if ((rows & 0xffff) === 0) onProgress?.(rows);
  }
  return { rows, key: USER_KEY, columns: specs.map((spec, c) => ({ spec, values: convertColumn(raws[c], spec) })) };
}
