/**
 * Compaction (docs/live-replicas.md §6): a base and the changes applied to it, folded into the
 * table a new snapshot is built from, without reading the source again. Rows come in key order:
 * the base's live rows and the live changed rows merged by the key. Values are taken from what
 * the store holds: ordered kinds from their distinct values by rank, text and json from the
 * records' literals (a string without escapes copied as its bytes), changed rows from the
 * delta's values and records — so the new snapshot holds exactly what a build of the same rows
 * would.
 */
import { appendBytes, appendString, finishByteColumn, growingByteColumn } from "../bits/byte-column.ts";
import type { ConvertedColumn } from "../kinds/convert.ts";
import type { ColumnSpec } from "../schema/kinds.ts";
import type { ColumnInput, TableInput } from "../store/input.ts";
import { memberSpans } from "../store/record-fields.ts";
import type { Store } from "../store/types.ts";
import { type DeltaColumn, type DeltaVersion, baseRowDead, compareKeys, deltaRowDead } from "./delta.ts";

const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const decoder = new TextDecoder("utf-8", { ignoreBOM: true });

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

/** A stored double of base row `row` in an ordered column (NaN for null). */
function baseDouble(store: Store, spec: ColumnSpec, row: number): number {
  const column = store.columns.get(spec.id);
  if (column === undefined) throw new Error(`internal: the store has no column "${spec.id}"`);
  const distinct = column.distinct as Float64Array;
  if (column.key) return distinct[row];
  const rank = (column.rankByRow as Uint32Array)[row];
  return rank === 0 ? Number.NaN : distinct[rank - 1];
}

/**
 * The table of a version's live rows (see the module comment): what store/build.ts builds the
 * compacted snapshot from.
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
  const needsRecords = specs.some((s) => s.kind === "text" || s.kind === "json");
  const columns: ColumnInput[] = specs.map((spec) => ({ spec, values: startColumn(spec, m) }));
  const text = specs.map((spec) => (spec.kind === "text" || spec.kind === "json" ? growingByteColumn(Math.max(16, m), Math.max(1024, m * 16)) : null));
  const { chunks, offsets: recordOffsets, chunkShift } = store.records;
  for (let i = 0; i < m; i++) {
    const row = rows[i];
    if (row < n) {
      if (needsRecords) {
        const c = row >>> chunkShift;
        const bytes = chunks[c];
        memberSpans(bytes, recordOffsets[row + c], recordOffsets[row + c + 1], spans);
        specs.forEach((spec, f) => {
          const out = text[f];
          if (out === null) return;
          const from = spans[2 * f];
          const to = spans[2 * f + 1];
          const values = columns[f].values as Extract<ConvertedColumn, { kind: "text" | "json" }>;
          if (spec.kind === "json") {
            appendBytes(out, bytes, from, to);
            if (bytes[from] === 0x6e) values.nulls++;
          } else if (bytes[from] !== QUOTE) {
            // null
            appendBytes(out, bytes, from, from);
            (values as Extract<ConvertedColumn, { kind: "text" }>).isNull[i] = 1;
            values.nulls++;
          } else {
            let plain = true;
            for (let j = from + 1; j < to - 1; j++) if (bytes[j] === BACKSLASH) plain = false;
            if (plain) appendBytes(out, bytes, from + 1, to - 1);
            else appendString(out, JSON.parse(decoder.decode(bytes.subarray(from, to))) as string);
          }
        });
      }
      specs.forEach((spec, f) => {
        if (text[f] === null) setDouble(columns[f].values, i, baseDouble(store, spec, row));
      });
    } else {
      const d = row - n;
      let recordSpansRead = false;
      specs.forEach((spec, f) => {
        const out = text[f];
        const column = delta.columns.get(spec.id) as DeltaColumn | undefined;
        if (out === null) {
          setDouble(columns[f].values, i, (column?.doubles as Float64Array)[d]);
          return;
        }
        const values = columns[f].values as Extract<ConvertedColumn, { kind: "text" | "json" }>;
        if (spec.kind === "text") {
          const value = (column?.strings as (string | null)[])[d];
          if (value === null) {
            appendBytes(out, new Uint8Array(0), 0, 0);
            (values as Extract<ConvertedColumn, { kind: "text" }>).isNull[i] = 1;
            values.nulls++;
          } else appendString(out, value);
          return;
        }
        // json: the literal as the changed row's record holds it
        if (!recordSpansRead) {
          memberSpans(delta.recordBytes, delta.recordOffsets[d], delta.recordOffsets[d + 1], spans);
          recordSpansRead = true;
        }
        appendBytes(out, delta.recordBytes, spans[2 * f], spans[2 * f + 1]);
        if (delta.recordBytes[spans[2 * f]] === 0x6e) values.nulls++;
      });
    }
  }
  specs.forEach((spec, f) => {
    const out = text[f];
    if (out === null) return;
    const values = columns[f].values as Extract<ConvertedColumn, { kind: "text" | "json" }>;
    if (values.kind === "text") values.strings = finishByteColumn(out);
    else values.texts = finishByteColumn(out);
  });
  return { rows: m, columns, key: store.schema.key };
}

/** An empty converted column of `m` rows of `spec`'s kind. */
function startColumn(spec: ColumnSpec, m: number): ConvertedColumn {
  switch (spec.kind) {
    case "number":
    case "date":
    case "datetime":
      return { kind: spec.kind, values: new Float64Array(m), nulls: 0 };
    case "enum":
      return { kind: "enum", codes: new Uint8Array(m), values: [...(spec.values ?? [])], nulls: 0 };
    case "boolean":
      return { kind: "boolean", codes: new Uint8Array(m), values: ["false", "true"], nulls: 0 };
    case "text":
      return { kind: "text", strings: { bytes: new Uint8Array(0), offsets: new Uint32Array(1) }, isNull: new Uint8Array(m), nulls: 0 };
    case "json":
      return { kind: "json", texts: { bytes: new Uint8Array(0), offsets: new Uint32Array(1) }, nulls: 0 };
  }
}

/** Sets row `i` of an ordered converted column from a stored double (NaN for null; a code for enum and boolean). */
function setDouble(values: ConvertedColumn, i: number, x: number): void {
  if (values.kind === "enum" || values.kind === "boolean") {
    values.codes[i] = Number.isNaN(x) ? 0 : x;
    if (Number.isNaN(x)) values.nulls++;
  } else if (values.kind === "number" || values.kind === "date" || values.kind === "datetime") {
    values.values[i] = x;
    if (Number.isNaN(x)) values.nulls++;
  }
}
