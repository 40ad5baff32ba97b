/**
 * A filter over a live replica's rows (docs/live-replicas.md §4): the base's rows it selects (B,
 * the ordinary evaluation and its cache), less the tombstoned ones (B ∩ T, found by testing the
 * version's dead rows against B), plus the live delta rows that pass it (Δ⁺, each delta row's
 * values tested by its column's kind, `passesValue`: the rules a fresh snapshot's evaluation
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
import { deltaRowDead } from "../live/delta.ts";
import { type Store, searchedColumns } from "../store/types.ts";
import { ByteLru } from "./cache.ts";
import { positiveText } from "./planner.ts";
import { type FilterResult, countOf, matchRows } from "./row-set.ts";

/** A filter's rows in one version: B, how many of B are tombstoned, and Δ⁺. */
export interface LiveFilter {
  /** The base's rows the filter selects (B), tombstoned ones included. */
  base: FilterResult;
  /** The tombstoned rows of B, ascending; |B ∩ T| = length. */
  deadInBase: Uint32Array;
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
 * The rows in `[from, to)` (local) that a column's trigram lists can hold for a positive text
 * test of a folded needle of 3+ code points: the shortest list of its trigrams, or null when the
 * lists cannot narrow the test (no lists, a shorter needle, a negated or other test).
 */
function gramCandidates(column: DeltaColumn, test: ColumnTest, from: number, to: number): number[] | null {
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
  const out: number[] = [];
  for (const d of best ?? []) if (d >= from && d < to) out.push(d);
  return out;
}

/** Sets `pass[d − from]` for the rows of `[from, to)` that pass `test` on `column`. */
function testColumn(column: DeltaColumn, test: ColumnTest, from: number, to: number, pass: Uint8Array): void {
  const kind = KINDS[column.spec.kind];
  const folded = column.folded;
  const candidates = gramCandidates(column, test, from, to);
  if (candidates !== null) {
    for (const d of candidates) if (kind.passesValue(column.spec, test, valueAt(column, d), folded?.[d])) pass[d - from] = 1;
    return;
  }
  for (let d = from; d < to; d++) if (kind.passesValue(column.spec, test, valueAt(column, d), folded?.[d])) pass[d - from] = 1;
}

/** The pass (1/0, index d − from) of the rows `[from, to)` for a predicate tree. */
function evaluateRows(delta: DeltaStore, p: Predicate, from: number, to: number): Uint8Array {
  const pass = new Uint8Array(to - from);
  switch (p.kind) {
    case "column":
      testColumn(delta.columns.get(p.column) as DeltaColumn, p.test, from, to, pass);
      return pass;
    case "search": {
      // every term in some searched column (docs/api.md "Global search")
      pass.fill(1);
      const searched = searchedColumns(delta.base, p.columns);
      for (const term of p.terms) {
        const any = new Uint8Array(to - from);
        const test: ColumnTest = { op: "text", type: "contains", value: term };
        for (const column of searched) testColumn(delta.columns.get(column.spec.id) as DeltaColumn, test, from, to, any);
        for (let i = 0; i < pass.length; i++) pass[i] &= any[i];
      }
      return pass;
    }
    case "and": {
      pass.fill(1);
      for (const child of p.children) {
        const c = evaluateRows(delta, child, from, to);
        for (let i = 0; i < pass.length; i++) pass[i] &= c[i];
      }
      return pass;
    }
    case "or":
      for (const child of p.children) {
        const c = evaluateRows(delta, child, from, to);
        for (let i = 0; i < pass.length; i++) pass[i] |= c[i];
      }
      return pass;
  }
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

/** True when base row `row` is one of `result`'s rows. */
export function baseHas(store: Store, result: FilterResult, row: number): boolean {
  if (result.kind === "all") return true;
  const codes = store.partition?.codes;
  if (result.kind === "codes") return codes === undefined ? (result.mask & 1) === 1 : ((result.mask >>> codes[row]) & 1) === 1;
  const set = result.set;
  if (set.bits !== null && set.bitsExact) return (set.bits[row >>> 5] & (1 << (row & 31))) !== 0;
  const rows = matchRows(store, set);
  let lo = 0;
  let hi = rows.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (rows[mid] < row) lo = mid + 1;
    else hi = mid;
  }
  return lo < rows.length && rows[lo] === row;
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
  const delta = version.delta;
  const store = delta.base;
  const n = store.rowCount;
  // B ∩ T: the version's dead rows that B holds, ascending
  const dead: number[] = [];
  for (let i = 0; i < version.deaths; i++) {
    const row = delta.deadBase[i];
    if (baseHas(store, base, row)) dead.push(row);
  }
  const deadInBase = Uint32Array.from(dead).sort();
  const pass = filter === null ? null : passOf(delta, filter, key, version.rows);
  const rows: number[] = [];
  for (let d = 0; d < version.rows; d++) if ((pass === null || pass[d] === 1) && !deltaRowDead(version, d)) rows.push(n + d);
  const live: LiveFilter = { base, deadInBase, delta: Uint32Array.from(rows), total: countOf(store, base) - deadInBase.length + rows.length };
  cache.set(key, live, deadInBase.byteLength + live.delta.byteLength + 128 + 2 * key.length);
  return live;
}
