/**
 * The query executor: plans a normalized query by kind and answers it from the store's
 * prebuilt permutations, with a byte-bounded cache of filter results per engine.
 *
 * Plans (cost for a window of `limit` rows at offset `offset`, N rows, m matches):
 * - no filter, or a status-only filter: a slice of a (per-status) permutation, O(limit);
 *   multi-key sorts add the runs of equal first keys that the window touches;
 * - a filter whose match set is known: rows in id order sliced directly; otherwise a walk of
 *   the first key's permutation testing the match bitmap, O((offset + limit) * N / m), resumed
 *   from a checkpoint on the next block; or, when that walk would cost more than sorting the
 *   matches, a gather-sort of the m matches, O(m log m), cached.
 */
import type { Predicate, Query, SortKey } from "../query/types.ts";
import { ALL_STATUS, STATUS_VALUES } from "../schema.ts";
import { setListBits } from "../store/trigrams.ts";
import type { Store } from "../store/types.ts";
import { emptyBitmap, selectRows } from "../bits/bitmap.ts";
import { ByteLru } from "./cache.ts";
import { type FilterResult, type MatchSet, evaluateFilter, firstMatchRows, matchRows } from "./filter.ts";
import { type Checkpoint, buildSegments, normalizeSort, orderAll, windowRows } from "./order.ts";
import { COST, DEFER_ABOVE, queryCost, rowsInMask, walkCost, windowPlan } from "./planner.ts";


/** A query's answer: the window's row numbers and the total number of matching rows. */
export interface Page {
  /** Row numbers in sort order; length <= the query's limit. */
  rows: Uint32Array;
  /** Rows matching the filter, in rows. */
  total: number;
}

/** What the cache keeps per filter and sort. */
interface OrderState {
  /** Every match in sort order, once a gather-sort was chosen. */
  ordered: Uint32Array | null;
  /** Where the last walk's window began. */
  checkpoint: Checkpoint | null;
}

/** An engine: a store plus its caches. Plain data; one per loaded snapshot. */
export interface Engine {
  store: Store;
  /** Which plan answers filtered, sorted windows: chosen by cost, or forced (for tests). */
  plan: "auto" | "walk" | "gather";
  filters: ByteLru<FilterResult>;
  orders: ByteLru<OrderState>;
  /**
   * A bitmap over the store's rows (ceil(rowCount / 32) words), allocated on first use and
   * reused: a walk over a match set held as rows (or a sparse posting list) sets them in it.
   * It keeps them until another set needs it, so the next window of the same set (AG Grid's
   * next block) walks at once. A bitmap per set would cost more in first touches of new
   * memory (page faults: ~1 ms per 1.25 MB on this project's VMs) than the walk itself.
   */
  scratch: Uint32Array | null;
  /** The match set whose rows `scratch` holds, or null (then it is cleared before use). */
  scratchOwner: MatchSet | null;
}

/** Engine options. */
export interface EngineOptions {
  /** Cache budget for filter match sets and ordered lists, in bytes. Default 256 MiB. */
  cacheBytes?: number;
  /** Force the walk or the gather-sort plan for filtered sorted windows (tests); default "auto". */
  plan?: "auto" | "walk" | "gather";
}

/** Creates an engine over a store. */
export function createEngine(store: Store, options: EngineOptions = {}): Engine {
  const budget = options.cacheBytes ?? 256 * 1024 * 1024;
  return { store, plan: options.plan ?? "auto", filters: new ByteLru(budget * 0.75), orders: new ByteLru(budget * 0.25), scratch: null, scratchOwner: null };
}

/** Bytes a cache entry costs besides its value: the map entry, the entry object and the key's characters (2 bytes each). */
function entryBytes(key: string): number {
  return 96 + 2 * key.length;
}

/** Size of a filter result cached under `key`, in bytes (the key counted too: it holds the filter's values). */
function filterBytes(result: FilterResult, key: string): number {
  if (result.kind !== "set") return entryBytes(key);
  // Rows and bitmaps materialized later are counted again when they are (executeQuery). A
  // shared bitmap is a view of the store.
  const set = result.set;
  return (set.sharedBits ? 0 : (set.bits?.byteLength ?? 0)) + (set.rows?.byteLength ?? 0) + entryBytes(key);
}

/** Keys already computed, per predicate tree object (a query's tree is keyed once, see below). */
const filterKeys = new WeakMap<NonNullable<Query["filter"]>, string>();

/**
 * The filter cache's key of a predicate tree: its JSON (equal trees, equal keys). Remembered
 * per tree object, so that the HTTP layer's cost check (scheduler.ts `isExpensive`) and the
 * execution of the same query stringify the tree once.
 */
export function filterCacheKey(filter: NonNullable<Query["filter"]>): string {
  let key = filterKeys.get(filter);
  if (key === undefined) {
    key = JSON.stringify(filter);
    filterKeys.set(filter, key);
  }
  return key;
}

/** The (cached) filter result of a query. */
function filterOf(engine: Engine, query: Query): { result: FilterResult; key: string } {
  if (query.filter === null) return { result: { kind: "all" }, key: "" };
  const key = filterCacheKey(query.filter);
  let result = engine.filters.get(key);
  if (result === undefined) {
    result = evaluateFilter(engine.store, query.filter);
    engine.filters.set(key, result, filterBytes(result, key));
  }
  return { result, key };
}

/**
 * The rows `filter` selects, evaluated or taken from the engine's filter cache (the one every
 * query of the same filter shares): what facets and export read.
 */
export function filterResultOf(engine: Engine, filter: Predicate | null): FilterResult {
  return filterOf(engine, { filter, sort: [], offset: 0, limit: 0 }).result;
}

/** No sort keys: for costs that do not depend on them (planner.ts `queryCost` reads keys only for a known match set). */
const NO_KEYS: SortKey[] = [];

/** The order cache's key of a filter (its cache key) and normalized sort keys. */
function orderCacheKey(filterKey: string, keys: SortKey[]): string {
  return `${filterKey}|${JSON.stringify(keys)}`;
}

/**
 * The planner's estimate of what answering `query` costs now, given this engine's caches
 * (planner.ts `queryCost`), in cost units. Looks the caches up without touching recency.
 */
export function estimateCost(engine: Engine, query: Query): number {
  // Unfiltered and cached non-set filters (most cheap requests) are priced before the sort keys
  // are normalized: this runs on every request, before executeQuery normalizes them again.
  if (query.filter === null) return queryCost(engine.store, query, NO_KEYS, true, null, true);
  const filterKey = filterCacheKey(query.filter);
  const cached = engine.filters.peek(filterKey);
  if (cached === undefined) return queryCost(engine.store, query, NO_KEYS, false, null, false);
  if (cached.kind !== "set") return queryCost(engine.store, query, NO_KEYS, true, null, true);
  const keys = normalizeSort(query.sort);
  const order = engine.orders.peek(orderCacheKey(filterKey, keys));
  return queryCost(engine.store, query, keys, true, cached.set, order?.ordered != null);
}

/**
 * True when answering `query` now is estimated to cost more than {@link DEFER_ABOVE} (planner.ts):
 * the HTTP layer then runs it in the deferred queue (scheduler.ts), whatever its filter kind.
 */
export function isExpensive(engine: Engine, query: Query): boolean {
  return estimateCost(engine, query) > DEFER_ABOVE;
}

/** True for the sort that is row order itself (id ascending or descending). */
function isIdOrder(keys: SortKey[]): boolean {
  return keys.length === 1 && keys[0].column === "id" && !keys[0].absolute;
}

/**
 * Answers a normalized query (docs/api.md "Ordering" and "Matching"; types.ts `Query`).
 * The caller has validated it (offset and limit non-negative safe integers).
 */
export function executeQuery(engine: Engine, query: Query): Page {
  const store = engine.store;
  const { result: filter, key: filterKey } = filterOf(engine, query);
  const keys = normalizeSort(query.sort);
  const total = countOf(store, filter);
  const { offset, limit } = query;
  if (offset >= total || limit === 0) return { rows: new Uint32Array(0), total };
  const end = Math.min(total, offset + limit);

  if (filter.kind !== "set") {
    const mask = filter.kind === "status" ? filter.mask : ALL_STATUS;
    const segments = buildSegments(store, keys, mask);
    return { rows: windowRows(store, segments, filter, offset, limit, null).rows, total };
  }

  const set = filter.set;
  // Walks cover the partitions of the set's status codes.
  const scope = rowsInMask(store, set.mask);
  if (isIdOrder(keys) && engine.plan !== "walk") {
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
    // Row order is id order: pick the window's ranks straight from the bitmap (one pass over its words).
    if (set.bitsExact && walkCost(end, scope, set.count) > ((store.rowCount + 31) >>> 5) * COST.BITMAP_WORD) return { rows: selectRows(set.bits as Uint32Array, offset, end - offset, desc), total };
  }

  const orderKey = orderCacheKey(filterKey, keys);
  let state = engine.orders.get(orderKey);
  if (state?.ordered) return { rows: state.ordered.slice(offset, end), total };
  if (engine.plan === "gather" || (engine.plan === "auto" && windowPlan(end, scope, set.count, keys).plan === "gather")) {
    const hadRows = set.rows !== null;
    const ordered = orderAll(store, matchRows(store, set), keys);
    if (!hadRows) engine.filters.set(filterKey, filter, filterBytes(filter, filterKey));
    engine.orders.set(orderKey, { ordered, checkpoint: null }, ordered.byteLength + entryBytes(orderKey));
    return { rows: ordered.slice(offset, end), total };
  }
  const segments = buildSegments(store, keys, set.mask);
  const walked = set.bits !== null ? windowRows(store, segments, filter, offset, limit, state?.checkpoint ?? null) : walkRows(engine, filter, segments, offset, limit, state);
  if (walked.checkpoint !== null) {
    state = { ordered: null, checkpoint: walked.checkpoint };
    engine.orders.set(orderKey, state, 64 + entryBytes(orderKey));
  }
  return { rows: walked.rows, total };
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
  state: OrderState | undefined,
): ReturnType<typeof windowRows> {
  const set = filter.set;
  const fresh = engine.scratch === null;
  engine.scratch ??= emptyBitmap(engine.store.rowCount);
  const bits = engine.scratch;
  if (engine.scratchOwner !== set) {
    // Cleared unless just allocated; no owner while filling, so a failure mid-way leaves it to
    // be cleared by the next walk.
    if (!fresh) bits.fill(0);
    engine.scratchOwner = null;
    if (set.rows === null && set.list !== null) setListBits(set.list.index, set.list.k, set.mask, bits);
    else {
      const rows = matchRows(engine.store, set);
      for (let i = 0; i < rows.length; i++) bits[rows[i] >>> 5] |= 1 << (rows[i] & 31);
    }
    engine.scratchOwner = set;
  }
  set.bits = bits;
  set.bitsExact = true;
  try {
    return windowRows(engine.store, segments, filter, offset, limit, state?.checkpoint ?? null);
  } finally {
    set.bits = null;
  }
}

/** Matching rows of a filter result. */
function countOf(store: Store, filter: FilterResult): number {
  if (filter.kind === "all") return store.rowCount;
  if (filter.kind === "set") return filter.set.count;
  let count = 0;
  for (let c = 0; c < STATUS_VALUES.length; c++) if ((filter.mask >>> c) & 1) count += store.statusCounts[c];
  return count;
}
