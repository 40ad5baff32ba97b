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
import { type Engine, filterResultOf, liveFilter } from "./execute.ts";
import type { DeltaVersion } from "../live/delta.ts";
import { liveOrderAll, liveSegments } from "./live-order.ts";
import { type FilterResult, matchRows, rowsInMask } from "./row-set.ts";
import { type Checkpoint, type LiveWalk, type Segment, buildSegments, normalizeSort, orderAll, windowRows } from "./order.ts";

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
  if (engine.live !== null && (engine.live.rows > 0 || engine.live.deaths > 0)) return openLiveExport(engine as Engine & { live: DeltaVersion }, query, batchRows);
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
  if (keys.length > 1) {
    // several keys: a walk would sort each run of equal first keys it touches, once per batch
    const rows = filter.kind === "all" ? identity(store.rowCount) : filter.kind === "set" ? matchRows(store, filter.set) : rowsOfMask(engine, mask);
    return sortedCursor(total, orderAll(store, rows, keys), batchRows);
  }
  if (filter.kind === "set") filter = exactSet(engine, filter);
  return walkCursor(store, total, buildSegments(store, keys, mask), filter, batchRows, null);
}

/** A cursor over rows already in order, `batchRows` at a time. */
function sortedCursor(total: number, ordered: Uint32Array, batchRows: number): ExportCursor {
  let offset = 0;
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

/** A cursor walking the segments of an order (merged with a live engine's overlays when given), each batch resumed at the last one's checkpoint. */
function walkCursor(store: Engine["store"], total: number, segments: Segment[], filter: FilterResult, batchRows: number, live: LiveWalk | null): ExportCursor {
  let offset = 0;
  let checkpoint: Checkpoint | null = null;
  return {
    total,
    next() {
      if (offset >= total) return null;
      const walked = windowRows(store, segments, filter, offset, batchRows, checkpoint, live);
      if (walked.checkpoint !== null) checkpoint = walked.checkpoint;
      offset += walked.rows.length;
      return walked.rows.length === 0 ? null : walked.rows;
    },
  };
}

/**
 * An export over a live engine's rows (docs/live-replicas.md §4): one sort key, the merged walk
 * of its order batch by batch (resumed at a checkpoint); several keys, or a changed row that
 * fits no segment of the order, the rows sorted once.
 */
function openLiveExport(engine: Engine & { live: DeltaVersion }, query: Query, batchRows: number): ExportCursor {
  const store = engine.store;
  const version = engine.live;
  let filter = filterResultOf(engine, query.filter);
  const live = liveFilter(engine, query.filter, filter);
  const keys = normalizeSort(store, query.sort);
  const total = live.total;
  const mask = filter.kind === "codes" ? filter.mask : filter.kind === "set" ? filter.set.mask : allCodes(store);
  const merged = keys.length > 1 ? null : liveSegments(version, live, keys, mask);
  if (merged === null) return sortedCursor(total, liveOrderAll(version, live, keys), batchRows);
  if (filter.kind === "set") filter = exactSet(engine, filter);
  return walkCursor(store, total, merged.segments, filter, batchRows, { dead: version.baseDead, overlays: merged.overlays });
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
