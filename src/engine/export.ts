/**
 * Export (docs/api.md "Export"): every matching row of a query in its order, produced batch by
 * batch so that a download of any size holds one batch at a time. One sort key: a walk of the
 * key's order (or the partition's slices without a filter), resumed at a checkpoint for
 * each batch, so memory stays at one bitmap of the matches whatever the row count. Several
 * keys: the matches sorted once (4 bytes a match), then sliced.
 */
import type { Query } from "../query/types.ts";
import { emptyBitmap } from "../bits/bitmap.ts";
import { allCodes } from "../store/types.ts";
import { type Engine, filterResultOf } from "./execute.ts";
import { type FilterResult, matchRows, rowsInMask } from "./row-set.ts";
import { type Checkpoint, buildSegments, normalizeSort, orderAll, windowRows } from "./order.ts";

/** Rows a batch holds by default: about 0.5 MB of CSV, a few milliseconds of work. */
export const EXPORT_BATCH_ROWS = 4096;

/** The rows of an export, batch by batch. */
export interface ExportCursor {
  /** Rows matching the query, in rows. */
  total: number;
  /** The next rows in order (at most the batch size), or null once every row was given. */
  next(): Uint32Array | null;
}

/**
 * Opens an export of `query`'s matches (its window is ignored: every match, in order). The
 * cursor holds the store it started on: a reload meanwhile does not change the rows it gives.
 * @param batchRows rows per batch (> 0)
 */
export function openExport(engine: Engine, query: Query, batchRows = EXPORT_BATCH_ROWS): ExportCursor {
  const store = engine.store;
  let filter = filterResultOf(engine, query.filter);
  const keys = normalizeSort(store, query.sort);
  let total = store.rowCount;
  let mask = allCodes(store);
  if (filter.kind === "codes") {
    mask = filter.mask;
    total = rowsInMask(store, mask);
  } else if (filter.kind === "set") {
    total = filter.set.count;
    mask = filter.set.mask;
  }
  let offset = 0;
  if (keys.length > 1) {
    // several keys: a walk would sort each run of equal first keys it touches, once per batch
    const rows = filter.kind === "all" ? identity(store.rowCount) : filter.kind === "set" ? matchRows(store, filter.set) : rowsOfMask(engine, mask);
    const ordered = orderAll(store, rows, keys);
    return {
      total,
      next() {
        if (offset >= ordered.length) return null;
        const batch = ordered.subarray(offset, offset + batchRows);
        offset += batch.length;
        return batch;
      },
    };
  }
  if (filter.kind === "set") filter = exactSet(engine, filter);
  const segments = buildSegments(store, keys, mask);
  let checkpoint: Checkpoint | null = null;
  return {
    total,
    next() {
      if (offset >= total) return null;
      const walked = windowRows(store, segments, filter, offset, batchRows, checkpoint);
      if (walked.checkpoint !== null) checkpoint = walked.checkpoint;
      offset += walked.rows.length;
      return walked.rows.length === 0 ? null : walked.rows;
    },
  };
}

/** A match set of the export's own whose bitmap holds exactly the matches (what a walk tests). */
function exactSet(engine: Engine, filter: FilterResult & { kind: "set" }): FilterResult {
  const set = filter.set;
  if (set.bits !== null && set.bitsExact) return filter;
  const bits = emptyBitmap(engine.store.rowCount);
  const rows = matchRows(engine.store, set);
  for (let i = 0; i < rows.length; i++) bits[rows[i] >>> 5] |= 1 << (rows[i] & 31);
  return { kind: "set", set: { ...set, bits, bitsExact: true, sharedBits: false } };
}

/** The rows 0…n-1. */
function identity(n: number): Uint32Array {
  const rows = new Uint32Array(n);
  for (let i = 0; i < n; i++) rows[i] = i;
  return rows;
}

/** The rows (ascending) whose partition code is in `mask`. */
function rowsOfMask(engine: Engine, mask: number): Uint32Array {
  const codes = engine.store.partition?.codes;
  if (codes === undefined) return mask & 1 ? identity(engine.store.rowCount) : new Uint32Array(0);
  const out = new Uint32Array(rowsInMask(engine.store, mask));
  let k = 0;
  for (let row = 0; row < codes.length; row++) if ((mask >>> codes[row]) & 1) out[k++] = row;
  return out;
}
