/**
 * The version token of a scope's rows (docs/api.md "Access control": ETags and export names
 * of a restricted role build on a version of its own rows): an additive multiset hash of the
 * records of the rows a filter selects, each cut to a projection. Each row's projected record
 * bytes are hashed by two independent 32-bit hashes (xxHash32 under two seeds), and the lanes are
 * summed modulo 2^32 with the row count beside them, so the token is a pure function of the
 * visible data: independent of row order, of the snapshot id, of compaction (a compacted
 * snapshot writes the same records), and of every row outside the scope.
 *
 * Sums can be taken apart: a live replica's next version (docs/live-replicas.md §5) gets its
 * token from the one before, the rows that died since (their visible projections) subtracted
 * and the rows appended since added, so that a batch that touches none of the scope's rows
 * leaves the token as it was, at a cost that grows with the batch, not the table. Anchors (the
 * last lanes computed per scope) are kept per delta store (or per store without one) in a
 * byte-bounded cache.
 *
 * The first pass over a scope's rows is work that pauses ({@link viewVersionWork}): for a large
 * scope the query service runs it in the scheduler, a slice at a time, so that other requests
 * are answered meanwhile. A swap to a snapshot of the same rows (a compaction) carries the
 * anchors over ({@link carryVersions}) instead of hashing the rows again.
 */
import { ByteLru } from "../bits/byte-lru.ts";
import { type Work, finish } from "../bits/work.ts";
import type { Predicate } from "../query/types.ts";
import { type DeltaVersion, baseRowDead } from "../live/delta.ts";
import { type Projection, writeProjected } from "../store/record-fields.ts";
import { recordSpan } from "../store/records.ts";
import type { Store } from "../store/types.ts";
import { type Engine, filterCacheKey, filterResultOf, versionId } from "./execute.ts";
import { baseHas, deltaPassOf, liveFilterOf } from "./live-rows.ts";
import { COST } from "./planner.ts";
import type { FilterResult } from "./row-set.ts";
import { countOf, matchRows } from "./row-set.ts";

/** The rows and columns a token covers: what an access role's view (access/view.ts `RoleView`) holds of them. */
export interface VersionScope {
  /** The rows: a filter over the whole table, or null for every row. */
  filter: Predicate | null;
  /** The columns each record is cut to, or null for all of them. */
  projection: Projection | null;
  /** True when it is every row and column (the snapshot's version then serves). */
  unrestricted: boolean;
}

/** The two lanes' seeds (independent xxHash32 streams): the golden ratio's and murmur3's constants. */
const SEED_A = 0x9e3779b1;
const SEED_B = 0x85ebca77;

/** The scope's hash at one version of a delta store (or of a store without changes: 0, 0, 0). */
interface Anchor {
  /** Delta rows the version sees. */
  rows: number;
  /** Base rows dead in the version. */
  deaths: number;
  /** Delta rows dead in the version. */
  deltaDeaths: number;
  /** Lane sums, modulo 2^32 (unsigned). */
  a: number;
  b: number;
  /** Rows in the scope. */
  count: number;
  /** The scope's rows and columns (to bring the anchor up to date when its version is swapped out: {@link carryVersions}). */
  filter: Predicate | null;
  projection: Projection | null;
}

/** Default budget of each delta store's (or store's) anchors, in bytes: tens of thousands of scopes. */
export const VERSION_CACHE_BYTES = 8 * 1024 * 1024;

/** Per delta store, or store without one: each scope's last anchor. */
const anchors = new WeakMap<object, ByteLru<Anchor>>();

/** Per scope object (a cached role view): the token of the last version asked for. */
const lastTokens = new WeakMap<VersionScope, { at: object; token: string }>();

/** Where a projected record is written before it is hashed (grown when a record needs more). */
let scratch = new Uint8Array(4096);

/** Sums of one pass over rows: lanes modulo 2^32, count. */
interface Sums {
  a: number;
  b: number;
  count: number;
}

/** Adds (sign 1) or subtracts (sign −1) the hash of one record, cut to `projection`. */
function addRecord(sums: Sums, bytes: Uint8Array, start: number, end: number, projection: Projection | null, sign: number): void {
  let record: Uint8Array;
  if (projection === null) record = bytes.subarray(start, end);
  else {
    if (scratch.length < end - start + 2) scratch = new Uint8Array(2 * (end - start + 2));
    record = scratch.subarray(0, writeProjected(bytes, start, end, projection, scratch, 0));
  }
  sums.a = (sums.a + sign * Bun.hash.xxHash32(record, SEED_A)) >>> 0;
  sums.b = (sums.b + sign * Bun.hash.xxHash32(record, SEED_B)) >>> 0;
  sums.count += sign;
}

/** Adds or subtracts row `row` (a base row below N, or delta row N + d) of `store` and `version`. */
function addRow(sums: Sums, store: Store, version: DeltaVersion | null, row: number, projection: Projection | null, sign: number): void {
  const n = store.rowCount;
  if (row < n) {
    const span = recordSpan(store.records, row);
    addRecord(sums, span.bytes, span.start, span.end, projection, sign);
    return;
  }
  const delta = (version as DeltaVersion).delta;
  const d = row - n;
  addRecord(sums, delta.recordBytes, delta.recordOffsets[d], delta.recordOffsets[d + 1], projection, sign);
}

/** The base rows of `result`, ascending (every row for "all", the partition codes' rows for "codes"). */
function baseRows(store: Store, result: FilterResult): ArrayLike<number> {
  if (result.kind === "set") return matchRows(store, result.set);
  const n = store.rowCount;
  const rows = new Uint32Array(n);
  let k = 0;
  for (let r = 0; r < n; r++) if (baseHas(store, result, r)) rows[k++] = r;
  return rows.subarray(0, k);
}

/**
 * Rows hashed between two pause points of a from-scratch pass: a record hashed costs about
 * 1–4 µs (projected, two hashes), so a piece stays near a millisecond, the scheduler's slice.
 */
export const HASH_PIECE = 512;

/** Adds rows `rows[from..to)` (base rows, those dead in `version` skipped; or delta rows) to `sums`. */
function addRows(sums: Sums, store: Store, version: DeltaVersion | null, rows: ArrayLike<number>, from: number, to: number, projection: Projection | null, skipDead: boolean): void {
  for (let i = from; i < to; i++) {
    if (skipDead && version !== null && baseRowDead(version, rows[i])) continue;
    addRow(sums, store, version, rows[i], projection, 1);
  }
}

/** The scope's sums over every row it sees in `engine`'s version, from scratch, pausing every {@link HASH_PIECE} rows. */
function* sumsFromScratchWork(engine: Engine, scope: VersionScope, key: string): Work<Sums> {
  const store = engine.store;
  const version = engine.live;
  const result = filterResultOf(engine, scope.filter);
  const sums: Sums = { a: 0, b: 0, count: 0 };
  const rows = baseRows(store, result);
  for (let i = 0; i < rows.length; i += HASH_PIECE) {
    addRows(sums, store, version, rows, i, Math.min(rows.length, i + HASH_PIECE), scope.projection, true);
    yield;
  }
  if (version !== null) {
    const delta = liveFilterOf(version, result, scope.filter, key).delta;
    for (let i = 0; i < delta.length; i += HASH_PIECE) {
      addRows(sums, store, version, delta, i, Math.min(delta.length, i + HASH_PIECE), scope.projection, false);
      yield;
    }
  }
  return sums;
}

/** The scope's sums over every row it sees in `engine`'s version, from scratch, at once. */
function sumsFromScratch(engine: Engine, scope: VersionScope, key: string): Sums {
  return finish(sumsFromScratchWork(engine, scope, key));
}

/**
 * The scope's sums at `version` from its anchor at another version of the same delta store:
 * the rows appended between the two added (or taken away, going back), the rows that died
 * between them taken away (or added back), each only when the scope sees it.
 */
function sumsFromAnchor(engine: Engine & { live: DeltaVersion }, scope: VersionScope, key: string, from: Anchor): Sums {
  const version = engine.live;
  const delta = version.delta;
  const store = engine.store;
  const n = store.rowCount;
  // one history: every count grows from the earlier version to the later (a batch can append no
  // row and only delete, so the sum of the three tells which is later)
  const forward = version.rows - from.rows + (version.deaths - from.deaths) + (version.deltaDeaths - from.deltaDeaths) >= 0;
  const sign = forward ? 1 : -1;
  const lowRows = Math.min(from.rows, version.rows);
  const highRows = Math.max(from.rows, version.rows);
  const result = filterResultOf(engine, scope.filter);
  // whether each delta row passes the filter (tested once per delta store and filter)
  const pass = deltaPassOf(version.delta, scope.filter, key, highRows);
  const sums: Sums = { a: from.a, b: from.b, count: from.count };
  for (let d = lowRows; d < highRows; d++) if (pass === null || pass[d] === 1) addRow(sums, store, version, n + d, scope.projection, sign);
  for (let i = Math.min(from.deaths, version.deaths); i < Math.max(from.deaths, version.deaths); i++) {
    const row = delta.deadBase[i];
    if (baseHas(store, result, row)) addRow(sums, store, version, row, scope.projection, -sign);
  }
  for (let i = Math.min(from.deltaDeaths, version.deltaDeaths); i < Math.max(from.deltaDeaths, version.deltaDeaths); i++) {
    const d = delta.deadDelta[i];
    if (pass === null || pass[d] === 1) addRow(sums, store, version, n + d, scope.projection, -sign);
  }
  return sums;
}

/** The anchors' key of a scope: its filter's cache key and its projection's columns. */
function scopeKey(scope: VersionScope, filterKey: string): string {
  const columns = scope.projection === null ? "*" : JSON.stringify(scope.projection.columns.map((c) => c.id));
  return `${columns}\u0000${filterKey}`;
}

/** Eight hex digits of an unsigned 32-bit number. */
function hex8(n: number): string {
  return (n >>> 0).toString(16).padStart(8, "0");
}

/**
 * The version token of `scope`'s rows in `engine`'s version (docs/api.md "Access control";
 * the same token a change event of the scope carries): for a restricted scope, 16 hex digits
 * (the two 32-bit lanes) and the row count in base 36 after a `.`, e.g. `"09af…c3e1.2s"`; it
 * changes exactly when a row the scope sees changes (bar a 2^-64 collision), whatever happens to
 * other rows. For an unrestricted scope, the engine's version id (execute.ts `versionId`:
 * `<snapshotId>` or `<snapshotId>@<LSN>`).
 * Costs a look-up when asked again for the same version; else a pass over the rows changed since
 * the last version asked (a live replica's batches), or, the first time per snapshot and scope,
 * one over the scope's rows (its records hashed).
 * @throws Error when a record is not the layout the store writes (a corrupt store)
 */
export function viewVersion(engine: Engine, scope: VersionScope): string {
  // every request asks: a look-up without making the work
  if (scope.unrestricted) return versionId(engine);
  const last = lastTokens.get(scope);
  if (last !== undefined && last.at === (engine.live ?? engine.store)) return last.token;
  return finish(viewVersionWork(engine, scope));
}

/**
 * {@link viewVersion} as work that pauses every {@link HASH_PIECE} rows of a from-scratch pass
 * (bits/work.ts; run a slice at a time by engine/scheduler.ts when {@link viewVersionCost} is
 * above planner.ts `DEFER_ABOVE`), so that other requests are answered meanwhile. Holds
 * `engine`'s version: the token is that version's, and is cached for it when done.
 * @throws Error when a record is not the layout the store writes (a corrupt store)
 */
export function* viewVersionWork(engine: Engine, scope: VersionScope): Work<string> {
  if (scope.unrestricted) return versionId(engine);
  const at: object = engine.live ?? engine.store;
  const last = lastTokens.get(scope);
  if (last !== undefined && last.at === at) return last.token;
  const filterKey = filterCacheKey(scope.filter);
  const key = scopeKey(scope, filterKey);
  const cache = anchorsOf(engine);
  const anchor = cache.get(key);
  const version = engine.live;
  // a store without changes: an anchor (carried over a compaction) is its sums
  const sums = anchor === undefined ? yield* sumsFromScratchWork(engine, scope, filterKey) : version === null ? anchor : sumsFromAnchor(engine as Engine & { live: DeltaVersion }, scope, filterKey, anchor);
  const next: Anchor = { rows: version?.rows ?? 0, deaths: version?.deaths ?? 0, deltaDeaths: version?.deltaDeaths ?? 0, a: sums.a, b: sums.b, count: sums.count, filter: scope.filter, projection: scope.projection };
  cache.set(key, next, 160 + 2 * key.length);
  const token = tokenOf(sums);
  // a later version asked meanwhile (work run in slices) keeps its place
  const now = lastTokens.get(scope);
  if (now === undefined || now === last) lastTokens.set(scope, { at, token });
  return token;
}

/** The anchors of `engine`'s delta store (or store without one), made when absent. */
function anchorsOf(engine: Engine): ByteLru<Anchor> {
  const holder: object = engine.live?.delta ?? engine.store;
  let cache = anchors.get(holder);
  if (cache === undefined) {
    cache = new ByteLru<Anchor>(VERSION_CACHE_BYTES);
    anchors.set(holder, cache);
  }
  return cache;
}

/** The token of sums: 16 hex digits of the lanes, `.`, the row count in base 36. */
function tokenOf(sums: Sums): string {
  return `${hex8(sums.a)}${hex8(sums.b)}.${sums.count.toString(36)}`;
}

/**
 * What {@link viewVersion} of `scope` in `engine`'s version would cost now, in planner.ts cost
 * units (COST.VERSION_ROW per row hashed): 0 when it is a look-up (unrestricted, or asked
 * before for this version) or brought up to date from an anchor (a live batch's rows, not the
 * scope's); else the scope's rows (base rows the filter selects, and a live replica's delta
 * rows) times COST.VERSION_ROW. Evaluates (and caches) the scope's filter.
 */
export function viewVersionCost(engine: Engine, scope: VersionScope): number {
  if (scope.unrestricted) return 0;
  const last = lastTokens.get(scope);
  if (last !== undefined && last.at === (engine.live ?? engine.store)) return 0;
  if (anchorsOf(engine).peek(scopeKey(scope, filterCacheKey(scope.filter))) !== undefined) return 0;
  const rows = countOf(engine.store, filterResultOf(engine, scope.filter)) + (engine.live?.rows ?? 0);
  return rows * COST.VERSION_ROW;
}

/**
 * Carries the scopes' tokens from `before`'s version to `after`'s, which holds exactly the same
 * rows (a compaction: the snapshot written at the position `before` has reached, and the
 * batches past it applied; server.ts knows it when both reach one LSN) over the same schema, so
 * that no scope's first request on `after` hashes all its rows again. Each anchor kept of
 * `before`'s delta store (or store) is brought up to `before`'s version (a pass over the rows
 * changed since it was computed), and kept for `after`'s version with the same sums: the token is
 * a function of the visible records alone, and a compacted snapshot writes the same record bytes
 * (the tests compare it with the token from scratch). Does nothing when the schemas differ (the
 * records' layout then may too): the tokens are computed again on demand.
 * Returns the number of scopes carried.
 * @throws Error when a record is not the layout the store writes (a corrupt store)
 */
export function carryVersions(before: Engine, after: Engine): number {
  const from = anchors.get(before.live?.delta ?? before.store);
  if (from === undefined || before === after) return 0;
  if (before.store.schema !== after.store.schema && JSON.stringify(before.store.schema) !== JSON.stringify(after.store.schema)) return 0;
  const to = anchorsOf(after);
  const version = before.live;
  const at = after.live;
  let carried = 0;
  for (const [key, anchor] of [...from.entriesNow()]) {
    let sums: Sums = anchor;
    if (version !== null && (anchor.rows !== version.rows || anchor.deaths !== version.deaths || anchor.deltaDeaths !== version.deltaDeaths)) {
      const scope: VersionScope = { filter: anchor.filter, projection: anchor.projection, unrestricted: false };
      sums = sumsFromAnchor(before as Engine & { live: DeltaVersion }, scope, filterCacheKey(anchor.filter), anchor);
    }
    to.set(key, { rows: at?.rows ?? 0, deaths: at?.deaths ?? 0, deltaDeaths: at?.deltaDeaths ?? 0, a: sums.a, b: sums.b, count: sums.count, filter: anchor.filter, projection: anchor.projection }, 160 + 2 * key.length);
    carried++;
  }
  return carried;
}

/**
 * The token computed from scratch, never from an anchor nor cached (what the incremental one must
 * equal: the property tests compare them).
 */
export function viewVersionFromScratch(engine: Engine, scope: VersionScope): string {
  if (scope.unrestricted) return versionId(engine);
  return tokenOf(sumsFromScratch(engine, scope, filterCacheKey(scope.filter)));
}

/** The versions an answer carries (docs/api.md "Access control"): what its entity tag and file name build on, what `X-Snapshot-Id` shows. */
export interface AnswerVersions {
  /** The version entity tags and an export's file name build on: the scope's token ({@link viewVersion}). */
  tag: string;
  /** What `X-Snapshot-Id` shows: the engine's version id for an unrestricted scope (or none), the snapshot id without `@<LSN>` for a restricted one. */
  shown: string;
  /** True for a restricted scope: its answers leave out what tells of other rows (the snapshot id in `/schema`'s body). */
  restricted: boolean;
}

/**
 * The versions of an answer over `scope` (null: access control off, every row and column) in
 * `engine`'s version; see {@link AnswerVersions}.
 */
export function answerVersions(engine: Engine, scope: VersionScope | null): AnswerVersions {
  if (scope === null || scope.unrestricted) {
    const id = versionId(engine);
    return { tag: id, shown: id, restricted: false };
  }
  return { tag: viewVersion(engine, scope), shown: engine.store.snapshotId, restricted: true };
}
