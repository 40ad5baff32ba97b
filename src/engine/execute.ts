/**
 * The executor: runs a query's plan (planner.ts, plan.ts) over the store and the engine's caches
 * and answers its window. The filter step gives a row set, kept in a byte-bounded cache under
 * the filter's key; the root step orders it and cuts the window:
 * - `slice`: no filter, or one on the partition column: a slice of a stored order, O(limit);
 *   multi-key sorts add the runs of equal first keys that the window touches;
 * - `keyOrder`: a match set in key order: its first rows, a slice of its rows, or picked from its
 *   bitmap, whichever it holds;
 * - `walk`: the first key's stored order walked testing the match bitmap, O((offset + limit) ·
 *   N / m), resumed from a checkpoint on the next block;
 * - `sort`: a gather-sort of the m matches, O(m log m), cached for the next blocks;
 * - `cachedOrder`: the cached sort, sliced.
 */
import { emptyBitmap, selectRows } from "../bits/bitmap.ts";
import { PIECE, type Work, finish } from "../bits/work.ts";
import { setListBits } from "../bits/trigrams.ts";
import type { Predicate, Query, SortKey } from "../query/types.ts";
import { type ExtraRecords, type Store, allCodes } from "../store/types.ts";
import { ByteLru } from "../bits/byte-lru.ts";
import { resultOf, runStep } from "./evaluate.ts";
import { type Checkpoint, type LiveWalk, type WindowWalk, buildSegments, isKeyOrder, orderAllWork, windowRows, windowRowsWork } from "./order.ts";
import type { ChangeBatch } from "../live/changes.ts";
import { type DeltaVersion, applyBatch, createDelta, emptyVersion } from "../live/delta.ts";
import { type LiveFilter, liveDeltaRows, liveFilterOf } from "./live-rows.ts";
import { liveKeyWindow, liveOrderAll, liveOrderCache, liveSegments, liveWalkable } from "./live-order.ts";
import { type FilterStep, type PrintedStep, printStep } from "./plan.ts";
import { COST, DEFER_ABOVE, type LivePlanContext, type PlanContext, type QueryPlan, filterCacheKey, planFilter, planQuery, walkCost } from "./planner.ts";
import { type FilterResult, type MatchSet, countOf, firstMatchRows, matchRows, rowsInMask } from "./row-set.ts";

export { filterCacheKey };

/** A query's answer: the window's row numbers and the total number of matching rows. */
export interface Page {
  /** Row numbers in sort order; length <= the query's limit. */
  rows: Uint32Array;
  /** Rows matching the filter, in rows. */
  total: number;
}

/** What the order cache keeps per filter and sort (per version, for a live engine's). */
interface OrderState {
  /** Every match in sort order, once a sort was chosen. */
  ordered: Uint32Array | null;
  /** Where the last walk's window began. */
  checkpoint: Checkpoint | null;
  /** The estimated cost of the walks of this filter and sort so far, in cost units (planner.ts `COST`). */
  walked?: number;
}

/** An engine: a store plus its caches. Plain data; one per loaded snapshot. */
export interface Engine {
  store: Store;
  /** Which plan answers filtered, sorted windows: chosen by cost, or forced (for tests). */
  plan: "auto" | "walk" | "sort";
  filters: ByteLru<FilterResult>;
  orders: ByteLru<OrderState>;
  /** The walk's scratch bitmap, shared by every engine over the store (see {@link WalkScratch}). */
  scratch: WalkScratch;
  /** What the planner looks up in the caches (planner.ts `PlanContext`). */
  context: PlanContext;
  /**
   * A live replica's changes since the snapshot (live/delta.ts), or null: every answer is then
   * over the base's live rows and the delta's (docs/live-replicas.md §4). Versions of one engine
   * share the store and its caches; each has its own `live`.
   */
  live: DeltaVersion | null;
}

/**
 * A bitmap over the store's rows (ceil(rowCount / 32) words), allocated on first use and
 * reused: a walk over a match set held as rows (or a sparse posting list) sets them in it.
 * It keeps them until another set needs it, so the next window of the same set (AG Grid's
 * next block) walks at once. A bitmap per set would cost more in first touches of new
 * memory (page faults: ~1 ms per 1.25 MB on this project's VMs) than the walk itself.
 */
export interface WalkScratch {
  bits: Uint32Array | null;
  /** The match set whose rows `bits` holds, or null (then it is cleared before use). */
  owner: MatchSet | null;
}

/**
 * The scratch of each store: every engine over a store (its versions, and a new engine over the
 * same store after a reload or in a benchmark) walks with the one bitmap, whose owner tells
 * whose rows it holds; it goes with the store.
 */
const scratches = new WeakMap<Store, WalkScratch>();

/** The walk scratch of `store` ({@link scratches}). */
function scratchOf(store: Store): WalkScratch {
  let scratch = scratches.get(store);
  if (scratch === undefined) {
    scratch = { bits: null, owner: null };
    scratches.set(store, scratch);
  }
  return scratch;
}

/** Engine options. */
export interface EngineOptions {
  /** Cache budget for filter match sets and ordered lists, in bytes. Default 256 MiB. */
  cacheBytes?: number;
  /** Force the walk or the sort for filtered sorted windows (tests); default "auto". */
  plan?: "auto" | "walk" | "sort";
}

/** The order cache's key of a filter (its cache key) and normalized sort keys. */
function orderCacheKey(filterKey: string, keys: readonly SortKey[]): string {
  return `${filterKey}|${JSON.stringify(keys)}`;
}

/** Creates an engine over a store. */
export function createEngine(store: Store, options: EngineOptions = {}): Engine {
  const budget = options.cacheBytes ?? 256 * 1024 * 1024;
  const filters = new ByteLru<FilterResult>(budget * 0.75);
  const orders = new ByteLru<OrderState>(budget * 0.25);
  const context: PlanContext = {
    store,
    cachedFilter: (key) => filters.peek(key),
    cachedOrder: (filterKey, keys) => orders.peek(orderCacheKey(filterKey, keys))?.ordered ?? undefined,
    walked: (filterKey, keys) => orders.peek(orderCacheKey(filterKey, keys))?.walked ?? 0,
    force: options.plan ?? "auto",
    live: null,
  };
  return { store, plan: options.plan ?? "auto", filters, orders, scratch: scratchOf(store), context, live: null };
}

/**
 * The engine with a batch of changes applied (docs/live-replicas.md §5): a new version sharing
 * the store and its caches, the old one left as it was (a request that holds it sees none of
 * the batch).
 * @throws BatchError (live/changes.ts), the engine unchanged, for a batch that does not apply
 */
export function applyChanges(engine: Engine, batch: ChangeBatch): Engine {
  const from = engine.live ?? emptyVersion(createDelta(engine.store), "0/0");
  return { ...engine, live: applyBatch(from, batch) };
}

/** True when the engine answers over changes (a version with a delta row or a tombstone). */
function hasChanges(engine: Engine): engine is Engine & { live: DeltaVersion } {
  return engine.live !== null && (engine.live.rows > 0 || engine.live.deaths > 0);
}

/** Bytes a cache entry costs besides its value: the map entry, the entry object and the key's characters (2 bytes each). */
function entryBytes(key: string): number {
  return 96 + 2 * key.length;
}

/** Size of a filter result cached under `key`, in bytes (the key counted too: it holds the filter's values). */
function filterBytes(result: FilterResult, key: string): number {
  if (result.kind !== "set") return entryBytes(key);
  // Rows and bitmaps materialized later are counted again when they are. A shared bitmap is a view of the store.
  const set = result.set;
  return (set.sharedBits ? 0 : (set.bits?.byteLength ?? 0)) + (set.rows?.byteLength ?? 0) + entryBytes(key);
}

/**
 * Plans `query` against this engine's store and caches (planner.ts `planQuery`): the plan the
 * executor runs, the scheduler admits by its root's cost, and explain prints.
 */
export function planOf(engine: Engine, query: Query): QueryPlan {
  return planQuery(planContextOf(engine), query);
}

/** What the planner reads of this engine version (planner.ts `PlanContext`): its caches, its forced plan, its changes. */
export function planContextOf(engine: Engine): PlanContext {
  const context = engine.context;
  if (!hasChanges(engine) && engine.plan === context.force) return context;
  return { ...context, force: engine.plan, live: hasChanges(engine) ? livePlanContext(engine) : null };
}

/** What the planner asks of a live version (planner.ts `LivePlanContext`): its order cache and where its changed rows go. */
function livePlanContext(engine: Engine & { live: DeltaVersion }): LivePlanContext {
  const version = engine.live;
  return {
    changes: `${version.live} changed rows, ${version.deaths} base rows replaced or deleted`,
    cachedOrder: (filterKey, keys) => liveOrderCache(version).peek(orderCacheKey(filterKey, keys)),
    walkable: (filter, filterKey, keys, mask) => liveWalkable(version, liveDeltaRows(version, filter, filterKey), filterKey, keys, mask),
  };
}

/**
 * True when `plan` is estimated to cost more than {@link DEFER_ABOVE} (planner.ts): the HTTP
 * layer then runs it in the deferred queue (scheduler.ts).
 */
export function isExpensive(plan: QueryPlan): boolean {
  return plan.root.estimatedCost > DEFER_ABOVE;
}

/** A sparse match set is kept as its rows when they take at most this share of its bitmap's bytes. */
const ROWS_OVER_BITS = 1 / 8;

/**
 * A filter result as the cache keeps it: a match set held by its own bitmap and few enough rows
 * (at most {@link ROWS_OVER_BITS} of the bitmap's bytes) is held by its rows instead (what a
 * walk or a window reads it as anyway), so that many distinct selective filters — thousands of
 * tenants' — fit the cache's budget by their matches, not by a bitmap of every row each.
 */
function compacted(store: Store, result: FilterResult): FilterResult {
  if (result.kind !== "set") return result;
  const set = result.set;
  if (set.bits === null || set.sharedBits || !set.bitsExact || set.rows !== null) return result;
  if (set.count * 4 > set.bits.byteLength * ROWS_OVER_BITS) return result;
  matchRows(store, set);
  set.bits = null;
  return result;
}

/**
 * The rows `filter` selects, taken from the engine's filter cache or evaluated and cached (the
 * one cache every query of the same filter shares): what facets and export read.
 */
export function filterResultOf(engine: Engine, filter: Predicate | null): FilterResult {
  return finish(filterResultWork(engine, filter));
}

/**
 * {@link filterResultOf} as work that pauses between pieces of the evaluation (bits/work.ts):
 * what the scheduler runs in slices before an expensive facets or export request reads the
 * cached result.
 */
export function* filterResultWork(engine: Engine, filter: Predicate | null): Work<FilterResult> {
  return yield* runFilter(engine, planFilter(engine.context, filter), filterCacheKey(filter), false);
}

/**
 * Runs a planned filter step (planner.ts `planFilter`): a `cached` step gives the result it holds
 * (touched as most recently used); another is evaluated, pausing between pieces, and filed in
 * the filter cache under `filterKey` (unless "": no filter). What a listing, facets and an
 * export run their filters with.
 * @param analyze record the steps' rows and milliseconds (explain's analyze)
 */
export function* runFilter(engine: Engine, step: FilterStep, filterKey: string, analyze: boolean): Work<FilterResult> {
  const store = engine.store;
  // a hit: the entry becomes the most recently used
  if (step.op === "cached") return cachedResult(engine, step, filterKey, analyze);
  const filter = compacted(store, resultOf(store, yield* runStep({ store, analyze }, step)));
  if (filterKey !== "") {
    // a miss: the planner looked without counting (it only peeks)
    engine.filters.misses++;
    engine.filters.set(filterKey, filter, filterBytes(filter, filterKey));
  }
  return filter;
}

/**
 * The cost of answering `filter` now (its cached result, or its plan's). Kept for callers that
 * admit facets filter by filter; facets.ts `planFacets` prices a whole facets request once.
 */
export function filterCost(engine: Engine, filter: Predicate | null): number {
  return planFilter(engine.context, filter).estimatedCost;
}

/**
 * Answers a normalized query (docs/api.md "Ordering" and "Matching"; types.ts `Query`) by
 * running its plan. The caller has validated it (offset and limit non-negative safe integers).
 */
export function executeQuery(engine: Engine, query: Query): Page {
  return execute(engine, planOf(engine, query), false);
}

/**
 * Runs a plan made by {@link planOf} (possibly a little earlier: a cached result it names is
 * held by the plan itself, so an eviction meanwhile changes nothing).
 * @param analyze record each step's rows and milliseconds in the plan (explain's analyze)
 */
export function execute(engine: Engine, plan: QueryPlan, analyze: boolean): Page {
  if (analyze || hasChanges(engine)) return finish(executeWork(engine, plan, analyze));
  // run at once, not sliced: the window without the generators' frames unless it sorts (a few
  // µs: as much as the window of a first page itself), the filter at hand when it is
  const step = plan.root.children[0];
  const filter = step.op === "all" ? EVERY_ROW : step.op === "cached" ? cachedResult(engine, step, plan.filterKey, false) : finish(runFilter(engine, step, plan.filterKey, false));
  return plan.root.op === "sort" ? finish(windowOf(engine, plan, filter)) : windowNow(engine, plan, filter);
}

/** The result of the `all` step. */
const EVERY_ROW: FilterResult = { kind: "all" };

/** The result a `cached` step holds, its cache entry touched as most recently used (and, with analyze, its rows recorded). */
function cachedResult(engine: Engine, step: FilterStep & { op: "cached" }, filterKey: string, analyze: boolean): FilterResult {
  engine.filters.get(filterKey);
  if (analyze) {
    step.rows = countOf(engine.store, step.result);
    step.ms = 0;
  }
  return step.result;
}

/**
 * {@link execute} as work that pauses between pieces of the filter's evaluation (bits/work.ts):
 * what the scheduler (scheduler.ts) runs in slices for an expensive plan. The engine version it
 * is given is the one it reads throughout, whatever is applied or loaded meanwhile.
 */
export function* executeWork(engine: Engine, plan: QueryPlan, analyze: boolean): Work<Page> {
  const store = engine.store;
  const root = plan.root;
  const started = analyze ? performance.now() : 0;
  const filterStep = root.children[0];
  const filter = yield* runFilter(engine, filterStep, plan.filterKey, analyze);
  if (filterStep.op !== "cached") yield;
  const page = yield* windowOf(engine, plan, filter);
  if (analyze) {
    root.ms = performance.now() - started;
    root.rows = page.rows.length;
  }
  return page;
}

/**
 * The window of the root step over the filter's rows, by the op the planner chose (see the module
 * comment): nothing is re-priced here; what varies is how the match set is held (a bitmap, rows
 * or a posting list), which decides how an op reads it. A sort pauses between pieces.
 */
function* windowOf(engine: Engine, plan: QueryPlan, filter: FilterResult): Work<Page> {
  if (hasChanges(engine)) return yield* liveWindowOf(engine, plan, filter);
  const root = plan.root;
  if (root.op === "walk" && filter.kind === "set" && root.offset < filter.set.count && root.limit > 0) {
    const set = filter.set;
    const scope = rowsInMask(engine.store, set.mask);
    // a walk longer than a few pieces runs in pieces, over a bitmap of the set's own (the shared
    // scratch may be refilled by another walk during a pause)
    if (walkCost(root.offset + root.limit, scope, set.count) > 4 * PIECE * COST.WALK_ROW) return yield* slicedWalk(engine, plan, filter as FilterResult & { kind: "set" }, scope);
  }
  if (root.op !== "sort" || filter.kind !== "set" || root.offset >= filter.set.count || root.limit === 0) return windowNow(engine, plan, filter);
  // every match sorted (in pieces), kept in the order cache
  const store = engine.store;
  const set = filter.set;
  const orderKey = orderCacheKey(plan.filterKey, root.keys);
  const hadRows = set.rows !== null;
  const ordered = yield* orderAllWork(store, matchRows(store, set), root.keys);
  if (!hadRows) engine.filters.set(plan.filterKey, filter, filterBytes(filter, plan.filterKey));
  engine.orders.set(orderKey, { ordered, checkpoint: null }, ordered.byteLength + entryBytes(orderKey));
  return { rows: ordered.slice(root.offset, Math.min(set.count, root.offset + root.limit)), total: set.count };
}

/** A long walk of a snapshot's match set (order.ts `windowRowsWork`), pausing every {@link PIECE} rows or so. */
function* slicedWalk(engine: Engine, plan: QueryPlan, filter: FilterResult & { kind: "set" }, scope: number): Work<Page> {
  const store = engine.store;
  const root = plan.root;
  const set = filter.set;
  const orderKey = orderCacheKey(plan.filterKey, root.keys);
  const state = engine.orders.get(orderKey);
  const end = Math.min(set.count, root.offset + root.limit);
  const walking = walkCost(end, scope, set.count);
  const own: FilterResult = set.bits !== null && set.bitsExact ? filter : { kind: "set", set: { ...set, bits: exactBits(store, set), bitsExact: true, sharedBits: false } };
  const perPiece = Math.max(1, Math.floor((PIECE * set.count) / Math.max(1, scope)));
  const segments = buildSegments(store, root.keys, set.mask);
  const walk: WindowWalk = (offset, limit, resume) => windowRows(store, segments, own, offset, limit, resume);
  const walked = yield* windowRowsWork(walk, root.offset, root.limit, state?.checkpoint ?? null, perPiece);
  engine.orders.set(orderKey, { ordered: null, checkpoint: walked.checkpoint ?? state?.checkpoint ?? null, walked: (state?.walked ?? 0) + walking }, 64 + entryBytes(orderKey));
  return { rows: walked.rows, total: set.count };
}

/** A new bitmap holding exactly a match set's rows. */
function exactBits(store: Store, set: MatchSet): Uint32Array {
  const bits = emptyBitmap(store.rowCount);
  if (set.rows === null && set.list !== null) setListBits(set.list.index, set.list.k, set.mask, bits);
  else {
    const rows = matchRows(store, set);
    for (let i = 0; i < rows.length; i++) bits[rows[i] >>> 5] |= 1 << (rows[i] & 31);
  }
  return bits;
}

/** {@link windowOf} of a snapshot for every op but a sort of a match set: nothing in it pauses. */
function windowNow(engine: Engine, plan: QueryPlan, filter: FilterResult): Page {
  const store = engine.store;
  const root = plan.root;
  const keys = root.keys;
  const total = countOf(store, filter);
  const { offset, limit } = root;
  if (offset >= total || limit === 0) return { rows: new Uint32Array(0), total };
  const end = Math.min(total, offset + limit);
  if (filter.kind !== "set") {
    // a mask's rows: the stored order sliced (a walk in which every row matches; planner.ts codesOf)
    const mask = filter.kind === "codes" ? filter.mask : allCodes(store);
    const segments = buildSegments(store, keys, mask);
    return { rows: windowRows(store, segments, filter, offset, limit, null).rows, total };
  }
  const set = filter.set;
  const filterKey = plan.filterKey;
  const orderKey = orderCacheKey(filterKey, keys);
  switch (root.op) {
    case "cachedOrder":
      // the order the planner found, held by the plan; touched as most recently used
      engine.orders.get(orderKey);
      return { rows: (root.ordered as Uint32Array).slice(offset, end), total };
    case "keyOrder": {
      const desc = keys[0].direction === "desc";
      if (!desc && set.bits === null) return { rows: firstMatchRows(store, set, end).slice(offset, end), total };
      if (set.rows !== null || set.bits === null) {
        const hadRows = set.rows !== null;
        const rows = matchRows(store, set);
        if (!hadRows) engine.filters.set(filterKey, filter, filterBytes(filter, filterKey));
        if (!desc) return { rows: rows.slice(offset, end), total };
        const out = new Uint32Array(end - offset);
        for (let i = 0; i < out.length; i++) out[i] = rows[total - 1 - offset - i];
        return { rows: out, total };
      }
      // row order is key order: the window's ranks picked from the bitmap, a word at a time up to
      // the window's end; a bitmap that also holds other codes' rows is walked in key order
      if (set.bitsExact) return { rows: selectRows(set.bits, offset, end - offset, desc), total };
      const state = engine.orders.get(orderKey);
      return { rows: windowRows(store, buildSegments(store, keys, set.mask), filter, offset, limit, state?.checkpoint ?? null).rows, total };
    }
    default: {
      // "walk" (and a "slice" the planner expected of a mask that evaluated to a match set)
      const state = engine.orders.get(orderKey);
      const walking = walkCost(end, rowsInMask(store, set.mask), set.count);
      const segments = buildSegments(store, keys, set.mask);
      const walked = set.bits !== null ? windowRows(store, segments, filter, offset, limit, state?.checkpoint ?? null) : walkRows(engine, filter, segments, offset, limit, state?.checkpoint ?? null);
      const next: OrderState = { ordered: null, checkpoint: walked.checkpoint ?? state?.checkpoint ?? null, walked: (state?.walked ?? 0) + walking };
      engine.orders.set(orderKey, next, 64 + entryBytes(orderKey));
      return { rows: walked.rows, total };
    }
  }
}

/**
 * A walk over a match set held as rows or as a sparse posting list: its rows are set in the
 * engine's scratch bitmap (a list decoded straight into it, nothing allocated) unless the
 * scratch holds them already from the set's previous walk.
 */
function walkRows(
  engine: Engine,
  filter: FilterResult & { kind: "set" },
  segments: ReturnType<typeof buildSegments>,
  offset: number,
  limit: number,
  checkpoint: Checkpoint | null,
  live: LiveWalk | null = null,
): ReturnType<typeof windowRows> {
  const set = filter.set;
  const scratch = engine.scratch;
  const fresh = scratch.bits === null;
  scratch.bits ??= emptyBitmap(engine.store.rowCount);
  const bits = scratch.bits;
  if (scratch.owner !== set) {
    // Cleared unless just allocated; no owner while filling, so a failure mid-way leaves it to
    // be cleared by the next walk.
    if (!fresh) bits.fill(0);
    scratch.owner = null;
    if (set.rows === null && set.list !== null) setListBits(set.list.index, set.list.k, set.mask, bits);
    else {
      const rows = matchRows(engine.store, set);
      for (let i = 0; i < rows.length; i++) bits[rows[i] >>> 5] |= 1 << (rows[i] & 31);
    }
    scratch.owner = set;
  }
  set.bits = bits;
  set.bitsExact = true;
  try {
    return windowRows(engine.store, segments, filter, offset, limit, checkpoint, live);
  } finally {
    set.bits = null;
  }
}

/**
 * Explain (docs/api.md "Explain"): the plan of `query` as a tree of printed steps, without
 * reading rows; with `analyze`, the query also runs and every step adds the rows it gave and
 * its milliseconds.
 */
export function explain(engine: Engine, query: Query, analyze: boolean): { plan: PrintedStep; page: Page | null } {
  const plan = planOf(engine, query);
  if (!analyze) return { plan: printStep(plan.root), page: null };
  const page = execute(engine, plan, true);
  return { plan: printStep(plan.root), page };
}

/** Per version of a live engine: each filter and sort's segments and overlays, and its walk's checkpoint. */
interface LiveOrderState {
  walk: { segments: ReturnType<typeof buildSegments>; live: LiveWalk } | null;
  checkpoint: Checkpoint | null;
}

const liveStates = new WeakMap<DeltaVersion, ByteLru<LiveOrderState>>();

/** The rows of a filter in the engine's version (live-rows.ts), for facets and export too. */
export function liveFilter(engine: Engine & { live: DeltaVersion }, filter: Predicate | null, base: FilterResult): LiveFilter {
  return liveFilterOf(engine.live, base, filter, filterCacheKey(filter));
}

/**
 * The window over a live engine's rows (docs/live-replicas.md §4), by the op the planner chose:
 * the base's rows of the filter less the tombstoned ones, merged with the delta rows that pass
 * it, in the sort order. `slice` and `walk`: each segment of the order walked (sliced, without a
 * match set) merged with its overlay; `keyOrder`: merged by the key; `sort`: every match sorted
 * and cached per version; `cachedOrder`: that cache sliced.
 */
function* liveWindowOf(engine: Engine & { live: DeltaVersion }, plan: QueryPlan, filter: FilterResult): Work<Page> {
  const version = engine.live;
  const store = engine.store;
  const root = plan.root;
  const keys = root.keys;
  const live = liveFilterOf(version, filter, plan.filter, plan.filterKey);
  const total = live.total;
  root.changes = `${version.live} changed rows, ${version.deaths} base rows replaced or deleted; ${live.delta.length} changed rows match`;
  const { offset, limit } = root;
  if (offset >= total || limit === 0) return { rows: new Uint32Array(0), total };
  const end = Math.min(total, offset + limit);
  const orderKey = orderCacheKey(plan.filterKey, keys);
  const orders = liveOrderCache(version);
  // every match in order (sorted, or merged by the key), kept per version
  const sorted = (): Page => {
    const ordered = liveOrderAll(version, live, keys);
    orders.set(orderKey, ordered, ordered.byteLength + entryBytes(orderKey));
    return { rows: ordered.slice(offset, end), total };
  };
  switch (root.op) {
    case "cachedOrder":
      orders.get(orderKey);
      return { rows: (root.ordered as Uint32Array).slice(offset, end), total };
    case "sort":
      yield;
      return sorted();
    case "keyOrder":
      if (filter.kind === "set") return { rows: liveKeyWindow(version, live, filter.set, keys[0].direction === "desc", offset, end), total };
      break;
    default:
      break;
  }
  let states = liveStates.get(version);
  if (states === undefined) {
    states = new ByteLru<LiveOrderState>(64 * 1024 * 1024);
    liveStates.set(version, states);
  }
  let state = states.get(orderKey);
  const mask = filter.kind === "codes" ? filter.mask : filter.kind === "set" ? filter.set.mask : allCodes(store);
  if (state === undefined) {
    const built = liveSegments(version, live, keys, mask);
    state = { walk: built === null ? null : { segments: built.segments, live: { dead: version.baseDead, overlays: built.overlays } }, checkpoint: null };
    let bytes = 256 + entryBytes(orderKey);
    for (const o of built?.overlays ?? []) bytes += o.rows.byteLength + o.at.byteLength + o.deadAt.byteLength;
    states.set(orderKey, state, bytes);
  }
  const walk = state.walk;
  // the planner placed every matching changed row in a segment of this order (live-order.ts
  // liveWalkable) over the mask it foresaw; a mask the filter did not foresee is sorted instead
  if (walk === null) return sorted();
  if (filter.kind !== "set") return { rows: windowRows(store, walk.segments, filter, offset, limit, null, walk.live).rows, total };
  const walked = filter.set.bits !== null ? windowRows(store, walk.segments, filter, offset, limit, state.checkpoint, walk.live) : walkRows(engine, filter, walk.segments, offset, limit, state.checkpoint, walk.live);
  if (walked.checkpoint !== null) state.checkpoint = walked.checkpoint;
  return { rows: walked.rows, total };
}

/** The records of a live engine's changed rows (rows N + d), for the serializers; null without changes. */
export function extraRecords(engine: Engine): ExtraRecords | null {
  const live = engine.live;
  if (live === null || live.rows === 0) return null;
  return { first: engine.store.rowCount, bytes: live.delta.recordBytes, offsets: live.delta.recordOffsets };
}

/**
 * The id of the state an engine answers from (docs/api.md "Live replicas"): its snapshot's id,
 * or `<snapshotId>@<LSN>` once a batch of changes is applied — what `X-Snapshot-Id` shows and
 * entity tags are made from.
 */
export function versionId(engine: Engine): string {
  const live = engine.live;
  return live === null || live.sequence === 0 ? engine.store.snapshotId : `${engine.store.snapshotId}@${live.lsn}`;
}

/** Rows an engine serves: the store's, less the tombstoned ones, plus the live changed rows. */
export function rowCountOf(engine: Engine): number {
  const live = engine.live;
  return live === null ? engine.store.rowCount : engine.store.rowCount - live.deaths + live.live;
}
