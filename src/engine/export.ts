/**
 * Export (docs/api.md "Export"): every matching row of a query in its order, produced batch by
 * batch so that a download of any size holds one batch at a time. One sort key: a walk of the
 * key's order (or the partition's slices without a filter), resumed at a checkpoint for
 * each batch, so memory stays at one bitmap of the matches whatever the row count. Several
 * keys: the matches sorted once (4 bytes a match), then sliced.
 */
import type { Query, SortKey } from "../query/types.ts";
import { emptyBitmap } from "../bits/bitmap.ts";
import { allCodes } from "../store/types.ts";
import { type Engine, filterCacheKey, liveFilter, planContextOf, runFilter } from "./execute.ts";
import type { FilterStep } from "./plan.ts";
import { type Work, finish } from "../bits/work.ts";
import { codesOf, gatherCost, planFilter, stepMask } from "./planner.ts";
import type { DeltaVersion } from "../live/delta.ts";
import { liveOrderAll, liveSegments } from "./live-order.ts";
import { type FilterResult, matchRows, rowsInMask } from "./row-set.ts";
import { type Checkpoint, type LiveWalk, type Segment, buildSegments, normalizeSort, orderAllWork, windowRows } from "./order.ts";

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
  return finish(openExportWork(engine, query, batchRows));
}

/**
 * An export planned (planner.ts): its filter step (a cached result, or the steps that evaluate
 * it) and how its matches are put in order — `walk`, the one sort key's stored order walked batch
 * by batch (merged with a live version's changed rows), or `sort`, every match sorted once (several
 * keys, or a changed row without a place in the order walked) — and what opening it costs.
 */
export interface ExportPlan {
  query: Query;
  filter: FilterStep;
  /** The filter's cache key ("" for none). */
  filterKey: string;
  /** The normalized sort keys. */
  keys: SortKey[];
  op: "walk" | "sort";
  /** Opening the export (the filter's evaluation and a sort), in cost units (planner.ts `COST`); each batch's walk is paid as it is read. */
  estimatedCost: number;
}

/** Plans an export of `query`'s matches (its window is ignored: every match, in order). */
export function planExport(engine: Engine, query: Query): ExportPlan {
  const context = planContextOf(engine);
  const store = engine.store;
  const keys = normalizeSort(store, query.sort);
  const filterKey = filterCacheKey(query.filter);
  const filter = planFilter(context, query.filter);
  const mask = codesOf(store, filter) ?? stepMask(store, filter);
  let op: ExportPlan["op"] = keys.length > 1 ? "sort" : "walk";
  if (op === "walk" && context.live !== null && !context.live.walkable(query.filter, filterKey, keys, mask)) op = "sort";
  const estimatedCost = filter.estimatedCost + (op === "sort" ? gatherCost(filter.estimatedRows, keys) : 0);
  return { query, filter, filterKey, keys, op, estimatedCost };
}

/**
 * What opening an export of `query` costs now, in the planner's units (planner.ts `COST`): its
 * plan's ({@link planExport}). Above planner.ts `DEFER_ABOVE`, the export is opened in the
 * scheduler.
 */
export function exportCost(engine: Engine, query: Query): number {
  return planExport(engine, query).estimatedCost;
}

/**
 * {@link openExport} as work that pauses between pieces (bits/work.ts): the filter's evaluation
 * and a sort of every match — what the scheduler runs in slices for an expensive export.
 */
export function* openExportWork(engine: Engine, query: Query, batchRows = EXPORT_BATCH_ROWS): Work<ExportCursor> {
  return yield* exportWork(engine, planExport(engine, query), batchRows);
}

/** Runs an export plan ({@link planExport}): the cursor, once the filter has run (and the matches were sorted, for `sort`). */
export function* exportWork(engine: Engine, plan: ExportPlan, batchRows = EXPORT_BATCH_ROWS): Work<ExportCursor> {
  let filter = yield* runFilter(engine, plan.filter, plan.filterKey, false);
  if (engine.live !== null && (engine.live.rows > 0 || engine.live.deaths > 0)) return yield* openLiveExport(engine as Engine & { live: DeltaVersion }, plan, filter, batchRows);
  const store = engine.store;
  const keys = plan.keys;
  let total = store.rowCount;
  let mask = allCodes(store);
  if (filter.kind === "codes") {
    mask = filter.mask;
    total = rowsInMask(store, mask);
  } else if (filter.kind === "set") {
    total = filter.set.count;
    mask = filter.set.mask;
  }
  if (plan.op === "sort") {
    // several keys: a walk would sort each run of equal first keys it touches, once per batch
    const rows = filter.kind === "all" ? identity(store.rowCount) : filter.kind === "set" ? matchRows(store, filter.set) : rowsOfMask(engine, mask);
    return sortedCursor(total, yield* orderAllWork(store, rows, keys), batchRows);
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
 * An export over a live engine's rows (docs/live-replicas.md §4), by its plan: `walk`, the merged
 * walk of the one key's order batch by batch (resumed at a checkpoint); `sort`, the rows sorted
 * once (several keys, or a changed row that fits no segment of the order).
 */
function* openLiveExport(engine: Engine & { live: DeltaVersion }, plan: ExportPlan, base: FilterResult, batchRows: number): Work<ExportCursor> {
  const store = engine.store;
  const version = engine.live;
  let filter = base;
  const live = liveFilter(engine, plan.query.filter, filter);
  const keys = plan.keys;
  const total = live.total;
  const mask = filter.kind === "codes" ? filter.mask : filter.kind === "set" ? filter.set.mask : allCodes(store);
  const merged = plan.op === "sort" ? null : liveSegments(version, live, keys, mask);
  // the planner placed every matching changed row (live-order.ts liveWalkable); a mask it did not foresee is sorted
  if (merged === null) {
    yield;
    return sortedCursor(total, liveOrderAll(version, live, keys), batchRows);
  }
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
