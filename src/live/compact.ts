/**
 * Compaction (docs/live-replicas.md §6): a base and the changes applied to it, folded into the
 * table a new snapshot is built from, without reading the source again. Rows come in key order:
 * the base's live rows and the live changed rows merged by the key. Values are taken from what
 * the store holds, each column written by its kind: the kinds whose values are doubles from their
 * distinct values by rank (a changed row from the delta's doubles), text and json from the
 * records' literals (the base's records, or a changed row's) — so the new snapshot holds exactly
 * what a build of the same rows would.
 */
import { KINDS } from "../kinds/registry.ts";
import type { StoredColumn } from "../kinds/kind.ts";
import type { TableInput } from "../store/input.ts";
import { memberSpans } from "../store/record-fields.ts";
import { storedColumn } from "../store/types.ts";
import { type DeltaVersion, baseRowDead, compareKeys, deltaRowDead } from "./delta.ts";

/**
 * The live rows of a version in key order, as extended rows (base row r, or N + d for changed
 * row d); length = base rows − deaths + live changed rows.
 */
export function liveRowsInKeyOrder(version: DeltaVersion): Uint32Array {
  const delta = version.delta;
  const n = delta.base.rowCount;
  const changed: number[] = [];
  for (let d = 0; d < version.rows; d++) if (!deltaRowDead(version, d)) changed.push(d);
  changed.sort((a, b) => delta.keyOrd[a] - delta.keyOrd[b] || compareKeys(delta.keys[a], delta.keys[b]));
  const out = new Uint32Array(n - version.deaths + changed.length);
  let k = 0;
  let c = 0;
  for (let row = 0; row < n; row++) {
    // changed rows whose key is below base row `row`'s (at 2·row + 1)
    while (c < changed.length && delta.keyOrd[changed[c]] <= 2 * row) out[k++] = n + changed[c++];
    if (!baseRowDead(version, row)) out[k++] = row;
  }
  while (c < changed.length) out[k++] = n + changed[c++];
  return out;
}

/** A stored double of base row `row` in `column`, one whose values are doubles (NaN for null). */
function baseDouble(column: StoredColumn, row: number): number {
  const distinct = column.distinct as Float64Array;
  if (column.key) return distinct[row];
  const rank = (column.rankByRow as Uint32Array)[row];
  return rank === 0 ? Number.NaN : distinct[rank - 1];
}

/**
 * The table of a version's live rows (see the module comment): what store/build.ts builds the
 * compacted snapshot from. Each column is written by its kind (kind.ts `ColumnWriter`): from
 * stored doubles, or from the records' literals.
 * @throws Error when a record is corrupt (not the layout the store writes)
 */
export function compactTable(version: DeltaVersion): TableInput {
  const delta = version.delta;
  const store = delta.base;
  const n = store.rowCount;
  const rows = liveRowsInKeyOrder(version);
  const m = rows.length;
  const specs = store.schema.columns;
  const spans = new Uint32Array(2 * specs.length);
  const writers = specs.map((spec) => KINDS[spec.kind].writer(spec, m));
  const fromLiterals = writers.some((w) => w.from === "literal");
  // per column written from doubles: the base's column and the changed rows' doubles
  const stored = specs.map((spec) => storedColumn(store, spec.id));
  const changed = specs.map((spec) => delta.columns.get(spec.id)?.doubles ?? null);
  const { chunks, offsets: recordOffsets, chunkShift } = store.records;
  for (let i = 0; i < m; i++) {
    const row = rows[i];
    // the row's record: its members' spans, when a column is written from its literal
    let bytes = delta.recordBytes;
    if (fromLiterals) {
      if (row < n) {
        const c = row >>> chunkShift;
        bytes = chunks[c];
        memberSpans(bytes, recordOffsets[row + c], recordOffsets[row + c + 1], spans);
      } else memberSpans(bytes, delta.recordOffsets[row - n], delta.recordOffsets[row - n + 1], spans);
    }
    for (let f = 0; f < specs.length; f++) {
      const writer = writers[f];
      if (writer.from === "literal") writer.put(bytes, spans[2 * f], spans[2 * f + 1]);
      else writer.put(row < n ? baseDouble(stored[f], row) : (changed[f] as Float64Array)[row - n]);
    }
  }
  return { rows: m, columns: specs.map((spec, f) => ({ spec, values: writers[f].finish() })), key: store.schema.key };
}
