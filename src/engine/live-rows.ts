/**
 * A filter over a live replica's rows (docs/live-replicas.md §4): the base's rows it selects (B,
 * the ordinary evaluation and its cache), less the tombstoned ones (B ∩ T, found by testing the
 * version's dead rows against B), plus the live delta rows that pass it (Δ⁺, each delta row's
 * values tested by its column's kind, `valueTest`: the rules a fresh snapshot's evaluation
 * applies).
 *
 * A delta row's values never change, so whether it passes a filter never changes either: per
 * delta store, each filter keeps the pass of every row tested so far, and a new version tests
 * only the rows appended since. Text tests of 3+ code points (and search terms) read the delta's
 * own trigram lists first and test only the rows they list.
 */
import { needleTrigrams } from "../bits/trigrams.ts";
import { fold } from "../collation/collation.ts";
import type { ColumnTest, Predicate } from "../query/types.ts";
import { KINDS } from "../kinds/registry.ts";
import type { DeltaColumn, DeltaStore, DeltaVersion } from "../live/delta.ts";
import { deadGramCounts, deltaRowDead } from "../live/delta.ts";
import { type Store, searchedColumns } from "../store/types.ts";
import { ByteLru } from "../bits/byte-lru.ts";
import { sortedHas } from "../bits/sorted-rows.ts";
import { positiveText } from "../kinds/text.ts";
import { type FilterResult, countOf, matchRows } from "./row-set.ts";

/** A filter's rows in one version: B, how many of B are tombstoned, and Δ⁺. */
export interface LiveFilter {
  /** The base's rows the filter selects (B), tombstoned ones included. */
  base: FilterResult;
  /** The tombstoned rows of B per partition code (length S; one code without a partition); the rows themselves: {@link deadRowsOf}. */
  deadCounts: Uint32Array;
  /** |B ∩ T|: the sum of `deadCounts`. */
  deadTotal: number;
  /** Δ⁺: the live delta rows that pass the filter, as extended row numbers (N + local), ascending. */
  delta: Uint32Array;
  /** Matching rows: |B| − |B ∩ T| + |Δ⁺|. */
  total: number;
}

/** Per delta store: each filter's pass over the delta rows tested so far (1 = passes). */
interface PassEntry {
  tested: number;
  pass: Uint8Array;
}

const passCaches = new WeakMap<DeltaStore, ByteLru<PassEntry>>();

/** Per version: each filter's {@link LiveFilter}. */
const versionFilters = new WeakMap<DeltaVersion, ByteLru<LiveFilter>>();

/** Bytes the per-store and per-version caches may hold each. */
const LIVE_CACHE_BYTES = 64 * 1024 * 1024;

/** The values a kind tests: a text column's string, another kind's double (NaN for null). */
function valueAt(column: DeltaColumn, d: number): number | string | null {
  return column.strings !== null ? column.strings[d] : (column.doubles as Float64Array)[d];
}

/**
 * The rows of `rows` (local, ascending) that a column's trigram lists can hold for a positive
 * text test of a folded needle of 3+ code points: those in the shortest list of its trigrams; or
 * null when the lists cannot narrow the test (no lists, a shorter needle, a negated or other test).
 */
function gramCandidates(column: DeltaColumn, test: ColumnTest, rows: Uint32Array): Uint32Array | null {
  if (column.grams === null || test.op !== "text") return null;
  const positive = positiveText(test.type);
  if (positive === null || positive.negate) return null;
  const trigrams = needleTrigrams(fold(test.value));
  if (trigrams === null || !trigrams.exact) return null;
  let best: number[] | null = null;
  for (const key of trigrams.keys) {
    const list = column.grams.get(key) ?? [];
    if (best === null || list.length < best.length) best = list;
  }
  return intersect(rows, best ?? []);
}

/** The rows of both ascending lists. */
function intersect(a: Uint32Array, b: readonly number[]): Uint32Array {
  const out = new Uint32Array(Math.min(a.length, b.length));
  let k = 0;
  let i = 0;
  let j = 0;
  while (i < a.length && j < b.length) {
    if (a[i] < b[j]) i++;
    else if (a[i] > b[j]) j++;
    else {
      out[k++] = a[i];
      i++;
      j++;
    }
  }
  return out.subarray(0, k);
}

/** The rows of `rows` (local, ascending) whose value in `column` passes `test`. */
function testColumn(column: DeltaColumn, test: ColumnTest, rows: Uint32Array): Uint32Array {
  const passes = KINDS[column.spec.kind].valueTest(column.spec, test);
  const folded = column.folded;
  const candidates = gramCandidates(column, test, rows) ?? rows;
  const out = new Uint32Array(candidates.length);
  let k = 0;
  for (let i = 0; i < candidates.length; i++) {
    const d = candidates[i];
    if (passes(valueAt(column, d), folded?.[d])) out[k++] = d;
  }
  return out.subarray(0, k);
}

/** The union of ascending row lists, ascending. */
function union(lists: Uint32Array[]): Uint32Array {
  const all = new Set<number>();
  for (const list of lists) for (const d of list) all.add(d);
  return Uint32Array.from(all).sort();
}

/**
 * The rows of `rows` (local, ascending) that pass a predicate tree: an AND's children each
 * tested on the rows the ones before left, an OR's on all of them.
 */
function passingRows(delta: DeltaStore, p: Predicate, rows: Uint32Array): Uint32Array {
  switch (p.kind) {
    case "column":
      return testColumn(delta.columns.get(p.column) as DeltaColumn, p.test, rows);
    case "search": {
      // every term in some searched column (docs/api.md "Global search"; an access role's
      // search looks into the searchable columns it sees alone)
      const searched = searchedColumns(delta.base, p.columns);
      let left = rows;
      for (const term of p.terms) {
        const test: ColumnTest = { op: "text", type: "contains", value: term };
        left = union(searched.map((column) => testColumn(delta.columns.get(column.spec.id) as DeltaColumn, test, left)));
        if (left.length === 0) break;
      }
      return left;
    }
    case "and": {
      let left = rows;
      for (const child of p.children) {
        left = passingRows(delta, child, left);
        if (left.length === 0) break;
      }
      return left;
    }
    case "or":
      return union(p.children.map((child) => passingRows(delta, child, rows)));
  }
}

/** The pass (1/0, index d − from) of the rows `[from, to)` for a predicate tree. */
function evaluateRows(delta: DeltaStore, p: Predicate, from: number, to: number): Uint8Array {
  const rows = new Uint32Array(to - from);
  for (let i = 0; i < rows.length; i++) rows[i] = from + i;
  const pass = new Uint8Array(to - from);
  for (const d of passingRows(delta, p, rows)) pass[d - from] = 1;
  return pass;
}

/** The pass of every delta row below `rows` for `filter` (tested once per row, then kept). */
function passOf(delta: DeltaStore, filter: Predicate, key: string, rows: number): Uint8Array {
  let cache = passCaches.get(delta);
  if (cache === undefined) {
    cache = new ByteLru<PassEntry>(LIVE_CACHE_BYTES);
    passCaches.set(delta, cache);
  }
  let entry = cache.get(key);
  if (entry === undefined || entry.tested < rows) {
    const from = entry?.tested ?? 0;
    const fresh = evaluateRows(delta, filter, from, rows);
    const pass = new Uint8Array(Math.max(rows, (entry?.pass.length ?? 0) * 2));
    if (entry !== undefined) pass.set(entry.pass.subarray(0, from));
    pass.set(fresh, from);
    entry = { tested: rows, pass };
    cache.set(key, entry, pass.byteLength + 64 + 2 * key.length);
  }
  return entry.pass;
}

/**
 * Whether each delta row below `rows` passes `filter` (1 passes, 0 not; index = local delta row;
 * the array may be longer than `rows`, its tail meaningless), tested once per delta store and
 * filter; null for no filter (every row passes). Dead rows are tested too: what the version
 * token (view-version.ts) subtracts when a row dies.
 * @param key the filter's cache key
 */
export function deltaPassOf(delta: DeltaStore, filter: Predicate | null, key: string, rows: number): Uint8Array | null {
  return filter === null ? null : passOf(delta, filter, key, rows);
}

/** True when base row `row` is one of `result`'s rows. */
export function baseHas(store: Store, result: FilterResult, row: number): boolean {
  if (result.kind === "all") return true;
  const codes = store.partition?.codes;
  if (result.kind === "codes") return codes === undefined ? (result.mask & 1) === 1 : ((result.mask >>> codes[row]) & 1) === 1;
  const set = result.set;
  if (set.bits !== null && set.bitsExact) return (set.bits[row >>> 5] & (1 << (row & 31))) !== 0;
  return sortedHas(matchRows(store, set), row);
}

/** Per version, B ∩ T of each filter (computed on first use). */
const deadRowCache = new WeakMap<LiveFilter, Uint32Array>();

/** Per version, the tombstoned rows per partition code. */
const deadCodeCache = new WeakMap<DeltaVersion, Uint32Array>();

/** The partition codes' count (S), 1 without a partition. */
function groupsOf(store: Store): number {
  return store.partition?.counts.length ?? 1;
}

/** Rows of `rows` per partition code (length S). */
function countByCode(store: Store, rows: ArrayLike<number>): Uint32Array {
  const counts = new Uint32Array(groupsOf(store));
  const codes = store.partition?.codes;
  for (let i = 0; i < rows.length; i++) counts[codes === undefined ? 0 : codes[rows[i]]]++;
  return counts;
}

/**
 * B ∩ T, ascending: the version's tombstones tested against B's bitmap (or partition codes), or,
 * for a match set held as rows or a posting list, its rows tested against the tombstones —
 * whichever is the shorter pass. Computed on first use per filter and version, then kept.
 */
export function deadRowsOf(version: DeltaVersion, live: LiveFilter): Uint32Array {
  const cached = deadRowCache.get(live);
  if (cached !== undefined) return cached;
  const delta = version.delta;
  const store = delta.base;
  const base = live.base;
  const dead: number[] = [];
  let out: Uint32Array;
  if (base.kind === "set" && !(base.set.bits !== null && base.set.bitsExact)) {
    const rows = matchRows(store, base.set);
    const bits = version.baseDead;
    for (let i = 0; i < rows.length; i++) if ((bits[rows[i] >>> 5] & (1 << (rows[i] & 31))) !== 0) dead.push(rows[i]);
    out = Uint32Array.from(dead);
  } else {
    for (let i = 0; i < version.deaths; i++) {
      const row = delta.deadBase[i];
      if (baseHas(store, base, row)) dead.push(row);
    }
    out = Uint32Array.from(dead).sort();
  }
  deadRowCache.set(live, out);
  return out;
}

/**
 * |B ∩ T| per partition code, without the rows when it can: every tombstone's code (no filter, or
 * one on the partition column), a posting list's dead rows from the delta's dead trigram counts
 * (the latest version), else from the rows ({@link deadRowsOf}).
 */
function deadCountsOf(version: DeltaVersion, base: FilterResult, live: () => LiveFilter): Uint32Array {
  const delta = version.delta;
  const store = delta.base;
  if (base.kind !== "set") {
    let all = deadCodeCache.get(version);
    if (all === undefined) {
      all = countByCode(store, delta.deadBase.subarray(0, version.deaths));
      deadCodeCache.set(version, all);
    }
    if (base.kind === "all") return all;
    return all.map((count, code) => ((base.mask >>> code) & 1 ? count : 0));
  }
  const set = base.set;
  const latest = version.deaths === delta.deaths;
  if (set.list !== null && set.rows === null && latest) {
    const index = set.list.index;
    for (const column of store.columns.values()) {
      if (column.trigrams !== index) continue;
      const counts = deadGramCounts(delta, column.spec.id, index.keys[set.list.k]);
      if (counts === null) break;
      return counts.map((count, code) => ((set.mask >>> code) & 1 ? count : 0));
    }
  }
  return countByCode(store, deadRowsOf(version, live()));
}

/**
 * The filter's rows in `version` (see {@link LiveFilter}), cached per version and filter key.
 * @param base the filter's rows in the base (execute.ts: from the engine's filter cache)
 * @param filter the predicate (null: every row)
 * @param key the filter's cache key ("" for null)
 */
export function liveFilterOf(version: DeltaVersion, base: FilterResult, filter: Predicate | null, key: string): LiveFilter {
  let cache = versionFilters.get(version);
  if (cache === undefined) {
    cache = new ByteLru<LiveFilter>(LIVE_CACHE_BYTES);
    versionFilters.set(version, cache);
  }
  const cached = cache.get(key);
  if (cached !== undefined && cached.base === base) return cached;
  const store = version.delta.base;
  const rows = liveDeltaRows(version, filter, key);
  const live: LiveFilter = { base, deadCounts: new Uint32Array(0), deadTotal: 0, delta: rows, total: 0 };
  live.deadCounts = deadCountsOf(version, base, () => live);
  for (const count of live.deadCounts) live.deadTotal += count;
  live.total = countOf(store, base) - live.deadTotal + rows.length;
  cache.set(key, live, live.deadCounts.byteLength + live.delta.byteLength + 128 + 2 * key.length);
  return live;
}

/**
 * Δ⁺ of a filter in `version`: its live delta rows that pass it, as extended row numbers (N +
 * local), ascending; O(changed rows), the base not read — what the planner needs to know where
 * they are placed before the filter runs.
 * @param filter the predicate (null: every row)
 * @param key the filter's cache key ("" for null)
 */
export function liveDeltaRows(version: DeltaVersion, filter: Predicate | null, key: string): Uint32Array {
  const delta = version.delta;
  const n = delta.base.rowCount;
  const pass = filter === null ? null : passOf(delta, filter, key, version.rows);
  const rows: number[] = [];
  for (let d = 0; d < version.rows; d++) if ((pass === null || pass[d] === 1) && !deltaRowDead(version, d)) rows.push(n + d);
  return Uint32Array.from(rows);
}
