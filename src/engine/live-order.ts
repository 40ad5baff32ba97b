/**
 * Ordering over a live replica's rows (docs/live-replicas.md §3 "Rank²", §4): one total order
 * over base and delta rows for every sort, equal to a fresh snapshot's of the same rows, and the
 * windows cut from it.
 *
 * Rows are extended row numbers: base rows 0 … N−1, delta row d at N + d. A row's place in a
 * column's order is its rank²: 2·rank for a base row; for a delta row, 2r when its value equals
 * the base's r-th distinct value and 2r + 1 between the r-th and the (r+1)-th (delta rows of one
 * odd rank² compare by their values). Key order: base row r at 2r + 1, a delta row at 2·(base
 * keys below it) (two delta rows there compare by their keys).
 *
 * A window walks the segments of the base's stored order (order.ts), each merged with its
 * overlay: the delta rows of the segment that pass the filter, placed by binary search among the
 * segment's base rows, and the segment's tombstoned rows. The places of every delta row and
 * every dead row in an order are kept per delta store and extended as batches arrive (a delta
 * row's place never changes: the base does not); a version's overlay picks its live rows from
 * them. When a delta row fits no segment (a partition value the base lacks, under a filter on the
 * partition column) the window sorts the matches instead; key order merges by the key.
 */
import type { Bitmap } from "../bits/bitmap.ts";
import { collator } from "../collation/collation.ts";
import type { SortKey } from "../query/types.ts";
import type { DeltaColumn, DeltaStore, DeltaVersion } from "../live/delta.ts";
import { compareKeys, deltaRanks } from "../live/delta.ts";
import { type Store, allCodes, partitionCounts, storedColumn } from "../store/types.ts";
import { ByteLru } from "../bits/byte-lru.ts";
import type { LiveFilter } from "./live-rows.ts";
import type { Overlay } from "./merged-walk.ts";
import { type Segment, buildSegments, orderAll, segmentOrder } from "./order.ts";
import { type MatchSet, firstMatchRows, matchRows } from "./row-set.ts";

/** A comparator of extended rows. */
export type RowCompare = (a: number, b: number) => number;

/** The key-order comparison of two extended rows (see the module comment), ascending. */
function keyCompare(version: DeltaVersion): RowCompare {
  const delta = version.delta;
  const n = delta.base.rowCount;
  const keyOrd = delta.keyOrd;
  const keys = delta.keys;
  return (a, b) => {
    const x = a < n ? 2 * a + 1 : keyOrd[a - n];
    const y = b < n ? 2 * b + 1 : keyOrd[b - n];
    if (x !== y) return x - y;
    return a < n || b < n ? 0 : compareKeys(keys[a - n], keys[b - n]);
  };
}

/** Compares two strings by the collation (docs/api.md "Ordering"). */
function collate(a: string | null, b: string | null): number {
  return collator.compare(a ?? "", b ?? "");
}

/** One sort key's comparison of extended rows, ascending (ties left to the next key). */
function keyPart(version: DeltaVersion, key: SortKey): RowCompare {
  const delta = version.delta;
  const store = delta.base;
  const n = store.rowCount;
  const column = delta.columns.get(key.column) as DeltaColumn;
  const stored = storedColumn(store, key.column);
  if (key.absolute) {
    const distinct = stored.distinct as Float64Array;
    const ranks = stored.rankByRow;
    const doubles = column.doubles as Float64Array;
    const value = (row: number) => (row >= n ? doubles[row - n] : ranks === null ? distinct[row] : ranks[row] === 0 ? Number.NaN : distinct[ranks[row] - 1]);
    return (a, b) => {
      const x = value(a);
      const y = value(b);
      // nulls first, then |value|, then the signed value (order.ts rowComparator)
      if (Number.isNaN(x) || Number.isNaN(y)) return Number(!Number.isNaN(x)) - Number(!Number.isNaN(y));
      return Math.abs(x) - Math.abs(y) || x - y;
    };
  }
  if (stored.key) return keyCompare(version);
  const rank = stored.rankByRow as Uint32Array;
  const rank2 = deltaRanks(delta, column, version.rows) as Float64Array;
  const doubles = column.doubles;
  const strings = column.strings;
  return (a, b) => {
    const x = a < n ? 2 * rank[a] : rank2[a - n];
    const y = b < n ? 2 * rank[b] : rank2[b - n];
    if (x !== y) return x - y;
    // equal odd rank²: two delta rows between the same two base values
    if ((x & 1) === 0) return 0;
    if (strings !== null) return collate(strings[a - n], strings[b - n]);
    return (doubles as Float64Array)[a - n] - (doubles as Float64Array)[b - n];
  };
}

/**
 * The comparator of extended rows by normalized `keys`, ties by the key in the direction of the
 * last key (the exact reverse for a descending last key): order.ts `rowComparator` over base
 * and delta rows alike.
 */
export function liveComparator(version: DeltaVersion, keys: readonly SortKey[]): RowCompare {
  const parts = keys.map((key) => ({ sign: key.direction === "desc" ? -1 : 1, compare: keyPart(version, key) }));
  const tie = keyCompare(version);
  const lastDesc = keys.length > 0 && keys[keys.length - 1].direction === "desc";
  return (a, b) => {
    for (let i = 0; i < parts.length; i++) {
      const d = parts[i].compare(a, b);
      if (d !== 0) return parts[i].sign * d;
    }
    return lastDesc ? tie(b, a) : tie(a, b);
  };
}

/** The partition column's rank² of an extended row (0 … 2S), or null without a partition. */
function partitionRank2(version: DeltaVersion): ((row: number) => number) | null {
  const delta = version.delta;
  const partition = delta.base.partition;
  if (partition === null) return null;
  const n = delta.base.rowCount;
  const codes = partition.codes;
  const rank2 = deltaRanks(delta, delta.columns.get(partition.column) as DeltaColumn, version.rows) as Float64Array;
  return (row) => (row < n ? 2 * codes[row] : rank2[row - n]);
}

/**
 * Which rows belong to a segment, by their partition rank²: `exact` ≥ 0 the rows of that
 * rank² (and, for a value only the changes hold, of that stored `value`); else the rows of an
 * even rank² whose code is in `mask` (every row for every code).
 */
interface Fit {
  exact: number;
  value: number;
  mask: number;
}

/** A segment's fit rule (see {@link Fit}). */
function fitOf(seg: Segment): Fit {
  if (seg.codeOf >= 0) return { exact: 2 * seg.codeOf, value: Number.NaN, mask: 0 };
  return { exact: -1, value: Number.NaN, mask: seg.codeMask };
}

/**
 * True when a row of partition rank² `p2` (and stored partition value `value`, for a changed
 * row of an odd rank²) fits `fit` (`all`: the mask of every code).
 */
function fits(fit: Fit, p2: number, value: number, all: number): boolean {
  if (fit.exact >= 0) return p2 === fit.exact && ((p2 & 1) === 0 || value === fit.value);
  if (fit.mask === all) return true;
  return (p2 & 1) === 0 && ((fit.mask >>> (p2 >>> 1)) & 1) === 1;
}

/** A changed row's stored partition value (NaN for a base row or without a partition). */
function partitionValue(version: DeltaVersion): (row: number) => number {
  const delta = version.delta;
  const partition = delta.base.partition;
  const n = delta.base.rowCount;
  if (partition === null) return () => Number.NaN;
  const doubles = (delta.columns.get(partition.column) as DeltaColumn).doubles as Float64Array;
  return (row) => (row < n ? Number.NaN : doubles[row - n]);
}

/** Places kept per delta store and order segment: every fitting delta row's and dead row's place in the segment's perm. */
interface Places {
  /**
   * The fitting delta rows (extended row numbers) as values, in the order of the perm (place,
   * then the perm's comparator); covered: delta rows tested so far (local rows below it).
   */
  inserts: PlacedList;
  /**
   * The fitting dead rows' perm indexes, ascending, each with the index of its death (in
   * `delta.deadBase`) as value; covered: deaths tested so far.
   */
  deaths: PlacedList;
}

/** Entries placed in a segment: parallel lists of places and values, `count` of them in use. */
interface PlacedList {
  /** Each entry's place: the perm index it goes before (start … end). */
  at: Uint32Array;
  values: Uint32Array;
  count: number;
  /** How many candidates (delta rows, deaths) were tested for the list so far. */
  covered: number;
}

const placeCaches = new WeakMap<DeltaStore, Map<string, Places>>();

/** A delta row or a death, and its place in a segment: the perm index it goes before. */
interface Placed {
  at: number;
  /** The delta row (extended row number), or the death's index in `delta.deadBase`. */
  value: number;
}

/** An empty {@link PlacedList}. */
function emptyPlaced(): PlacedList {
  return { at: new Uint32Array(16), values: new Uint32Array(16), count: 0, covered: 0 };
}

/**
 * Merges `fresh` (sorted here) into `list`, which then covers `covered` candidates: by place,
 * and at one place by `tie` on the values (an old entry first when it compares below) or,
 * without one, fresh entries before old ones. O(count + fresh · log fresh); new lists.
 */
function mergePlaced(list: PlacedList, fresh: Placed[], tie: RowCompare | null, covered: number): void {
  fresh.sort(tie === null ? (a, b) => a.at - b.at : (a, b) => a.at - b.at || tie(a.value, b.value));
  const { at, values, count } = list;
  const total = count + fresh.length;
  const outAt = new Uint32Array(Math.max(16, total));
  const outValues = new Uint32Array(outAt.length);
  let i = 0;
  let f = 0;
  for (let k = 0; k < total; k++) {
    const takeOld = f >= fresh.length || (i < count && (at[i] < fresh[f].at || (at[i] === fresh[f].at && tie !== null && tie(values[i], fresh[f].value) < 0)));
    if (takeOld) {
      outValues[k] = values[i];
      outAt[k] = at[i++];
    } else {
      outValues[k] = fresh[f].value;
      outAt[k] = fresh[f++].at;
    }
  }
  list.at = outAt;
  list.values = outValues;
  list.count = total;
  list.covered = covered;
}

/**
 * The first index in `perm[start .. end)` (row numbers start … end − 1 when `perm` is null) whose
 * row does not compare below `row` (start … end).
 */
function lowerBound(perm: Uint32Array | null, start: number, end: number, row: number, compare: RowCompare): number {
  let lo = start;
  let hi = end;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (compare(perm === null ? mid : perm[mid], row) < 0) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

/**
 * The places of `seg` brought up to `version` (its delta rows and deaths): computed for the rows
 * and deaths appended since the last call, sorted, and merged in.
 */
function placesOf(version: DeltaVersion, seg: Segment, fit: Fit): Places {
  const delta = version.delta;
  const store = delta.base;
  const n = store.rowCount;
  let cache = placeCaches.get(delta);
  if (cache === undefined) {
    cache = new Map();
    placeCaches.set(delta, cache);
  }
  const order = segmentOrder(seg);
  const id = `${order.permName}|${seg.start}|${seg.end}|${fit.exact}|${fit.value}|${fit.mask}`;
  let places = cache.get(id);
  if (places === undefined) {
    places = { inserts: emptyPlaced(), deaths: emptyPlaced() };
    cache.set(id, places);
  }
  const { inserts, deaths } = places;
  if (inserts.covered >= delta.rows && deaths.covered >= delta.deaths) return places;
  const latest: DeltaVersion = { ...version, rows: delta.rows };
  const compare = liveComparator(latest, order.permKey === null ? [] : [order.permKey]);
  const p2 = partitionRank2(latest);
  const pv = partitionValue(latest);
  const all = allCodes(store);
  const place = (row: number): number => lowerBound(seg.perm, seg.start, seg.end, row, compare);
  if (inserts.covered < delta.rows) {
    const fresh: Placed[] = [];
    for (let d = inserts.covered; d < delta.rows; d++) {
      const row = n + d;
      if (p2 !== null && !fits(fit, p2(row), pv(row), all)) continue;
      fresh.push({ at: place(row), value: row });
    }
    mergePlaced(inserts, fresh, compare, delta.rows);
  }
  if (deaths.covered < delta.deaths) {
    const fresh: Placed[] = [];
    const codes = store.partition?.codes;
    for (let i = deaths.covered; i < delta.deaths; i++) {
      const row = delta.deadBase[i];
      if (codes !== undefined && !fits(fit, 2 * codes[row], Number.NaN, all)) continue;
      fresh.push({ at: place(row), value: i });
    }
    mergePlaced(deaths, fresh, null, delta.deaths);
  }
  return places;
}

/** Δ⁺ as a membership over local delta rows (1 = in), kept on the filter's object. */
const memberships = new WeakMap<LiveFilter, Uint8Array>();

function membershipOf(version: DeltaVersion, live: LiveFilter): Uint8Array {
  let member = memberships.get(live);
  if (member === undefined) {
    const n = version.delta.base.rowCount;
    member = new Uint8Array(version.rows);
    for (const row of live.delta) member[row - n] = 1;
    memberships.set(live, member);
  }
  return member;
}

/** The overlay of one segment for a version and filter (merged-walk.ts {@link Overlay}). */
function overlayOf(version: DeltaVersion, live: LiveFilter, seg: Segment, fit: Fit, runKeys: SortKey[] | null): Overlay {
  const store = version.delta.base;
  const n = store.rowCount;
  const { inserts, deaths } = placesOf(version, seg, fit);
  const member = membershipOf(version, live);
  const rows: number[] = [];
  const at: number[] = [];
  for (let i = 0; i < inserts.count; i++) {
    const row = inserts.values[i];
    const d = row - n;
    if (d < version.rows && member[d] === 1) {
      rows.push(row);
      at.push(inserts.at[i]);
    }
  }
  const deadAt: number[] = [];
  for (let i = 0; i < deaths.count; i++) if (deaths.values[i] < version.deaths) deadAt.push(deaths.at[i]);
  // to the segment's walking order: local indexes from its start, or from its end when reversed
  const len = seg.end - seg.start;
  const m = rows.length;
  const outRows = new Uint32Array(m);
  const outAt = new Uint32Array(m);
  for (let i = 0; i < m; i++) {
    const src = seg.reverse ? m - 1 - i : i;
    outRows[i] = rows[src];
    outAt[i] = seg.reverse ? seg.end - at[src] : at[src] - seg.start;
  }
  const outDead = new Uint32Array(deadAt.length);
  for (let i = 0; i < deadAt.length; i++) {
    const src = seg.reverse ? deadAt.length - 1 - i : i;
    outDead[i] = seg.reverse ? seg.end - 1 - deadAt[src] : deadAt[src] - seg.start;
  }
  // the tombstoned rows of B in the segment's partition codes
  let deadMatches = 0;
  const all = allCodes(store);
  for (let code = 0; code < live.deadCounts.length; code++) if (fits(fit, 2 * code, Number.NaN, all)) deadMatches += live.deadCounts[code];
  let rank2: ((row: number) => number) | null = null;
  let compare: RowCompare | null = null;
  const permKey = segmentOrder(seg).permKey;
  if (runKeys !== null && seg.rank !== null && permKey !== null) {
    const column = version.delta.columns.get(permKey.column) as DeltaColumn;
    const ranks = seg.rank;
    const delta2 = deltaRanks(version.delta, column, version.rows) as Float64Array;
    rank2 = (row) => (row < n ? 2 * ranks[row] : delta2[row - n]);
    // a run of an odd rank² holds changed rows of different values between two base values:
    // the run column first, then the other keys
    compare = liveComparator(version, [{ ...permKey, direction: seg.reverse ? "desc" : "asc" }, ...runKeys]);
  }
  void len;
  return { rows: outRows, at: outAt, deadAt: outDead, deadMatches, rank2, compare };
}

/**
 * The segments of `keys`' order over the rows of partition codes `mask` (order.ts
 * `buildSegments`), with, for an order led by the partition column, a segment of no base rows
 * for each partition value only the delta holds (an odd rank²), and each segment's overlay; or
 * null when a row of Δ⁺ belongs to no segment (then the caller sorts).
 */
export function liveSegments(version: DeltaVersion, live: LiveFilter, keys: SortKey[], mask: number): { segments: Segment[]; overlays: Overlay[] } | null {
  const store = version.delta.base;
  const segments = buildSegments(store, keys, mask);
  const p2 = partitionRank2(version);
  const pv = partitionValue(version);
  const all = allCodes(store);
  const fitsOf = segments.map((seg) => fitOf(seg));
  if (p2 !== null && store.partition !== null && keys[0].column === store.partition.column) {
    // partition values only the changes hold: a segment of no base rows each, between its neighbours
    const odd = new Map<number, number>();
    for (const row of live.delta) if ((p2(row) & 1) === 1) odd.set(pv(row), p2(row));
    if (odd.size > 0) {
      const template = segments[0] ?? buildSegments(store, keys, all)[0];
      const slots: { g: number; value: number; seg: Segment; fit: Fit }[] = segments.map((seg, s) => ({ g: 2 * seg.codeOf, value: 0, seg, fit: fitsOf[s] }));
      for (const [value, g] of odd) {
        // its changed rows in the template's order (its fit, by value, keeps its places apart)
        const seg: Segment = { ...template, perm: null, start: 0, end: 0, codeOf: -1, codeMask: all };
        slots.push({ g, value, seg, fit: { exact: g, value, mask: 0 } });
      }
      // by rank², then (between two base values) by value; descending reversed
      slots.sort((a, b) => (keys[0].direction === "desc" ? -1 : 1) * (a.g - b.g || a.value - b.value));
      segments.length = 0;
      fitsOf.length = 0;
      for (const slot of slots) {
        segments.push(slot.seg);
        fitsOf.push(slot.fit);
      }
    }
  }
  const overlays = segments.map((seg, s) => overlayOf(version, live, seg, fitsOf[s], seg.rank !== null && seg.rest.length > 0 ? seg.rest : null));
  let placed = 0;
  for (const overlay of overlays) placed += overlay.rows.length;
  if (placed !== live.delta.length) return null;
  return { segments, overlays };
}

/** Per version: whether a filter's changed rows are each placed in a segment of an order, by filter key, sort and mask. */
const walkables = new WeakMap<DeltaVersion, Map<string, boolean>>();

/**
 * True when every row of Δ⁺ (`delta`, {@link liveDeltaRows}) has its place in a segment of
 * `keys`' order over the codes of `mask` ({@link liveSegments} not null): the planner's test of
 * whether a live window can walk that order (else it sorts). Placement reads the changed rows
 * only, never the base's rows of the filter; kept per version.
 * @param id what names the filter (its cache key) in the per-version memo
 */
export function liveWalkable(version: DeltaVersion, delta: Uint32Array, id: string, keys: SortKey[], mask: number): boolean {
  let memo = walkables.get(version);
  if (memo === undefined) {
    memo = new Map();
    walkables.set(version, memo);
  }
  const key = `${id}|${JSON.stringify(keys)}|${mask}`;
  let walkable = memo.get(key);
  if (walkable === undefined) {
    const groups = partitionCounts(version.delta.base).length;
    // placement alone: no base rows (no tombstoned matches to count)
    const placement: LiveFilter = { base: { kind: "codes", mask: 0 }, deadCounts: new Uint32Array(groups), deadTotal: 0, delta, total: delta.length };
    walkable = liveSegments(version, placement, keys, mask) !== null;
    if (memo.size >= 4096) memo.clear();
    memo.set(key, walkable);
  }
  return walkable;
}

/** The base rows of a filter result that are live (not in `dead`, the tombstones), ascending. */
function liveBaseRows(store: Store, live: LiveFilter, dead: Uint32Array): Uint32Array {
  const base = live.base;
  let rows: Uint32Array;
  if (base.kind === "set") rows = matchRows(store, base.set);
  else if (base.kind === "codes" && (base.mask & allCodes(store)) === 0) rows = new Uint32Array(0);
  else {
    const codes = store.partition?.codes;
    const mask = base.kind === "codes" ? base.mask : allCodes(store);
    const all: number[] = [];
    for (let row = 0; row < store.rowCount; row++) if (((mask >>> (codes === undefined ? 0 : codes[row])) & 1) === 1) all.push(row);
    rows = Uint32Array.from(all);
  }
  if (live.deadTotal === 0) return rows;
  const out = new Uint32Array(rows.length - live.deadTotal);
  let k = 0;
  for (let i = 0; i < rows.length; i++) if ((dead[rows[i] >>> 5] & (1 << (rows[i] & 31))) === 0) out[k++] = rows[i];
  return out;
}

/**
 * Every row of the filter in `keys`' order (extended rows; length live.total): the live base
 * rows sorted as the base sorts them (order.ts `orderAll`), and Δ⁺ sorted and merged in by
 * binary search.
 */
export function liveOrderAll(version: DeltaVersion, live: LiveFilter, keys: SortKey[]): Uint32Array {
  const store = version.delta.base;
  const ordered = orderAll(store, liveBaseRows(store, live, version.baseDead), keys);
  const compare = liveComparator(version, keys);
  const extra = Array.from(live.delta).sort(compare);
  const out = new Uint32Array(ordered.length + extra.length);
  let k = 0;
  let from = 0;
  for (const row of extra) {
    const to = lowerBound(ordered, from, ordered.length, row, compare);
    out.set(ordered.subarray(from, to), k);
    k += to - from;
    out[k++] = row;
    from = to;
  }
  out.set(ordered.subarray(from), k);
  return out;
}

/** The window of `keys`' order over a version's rows: see {@link liveWindow}. */
const orderCaches = new WeakMap<DeltaVersion, ByteLru<Uint32Array>>();

/** The cache of whole live orders of a version (sorted matches; key-order merges). */
export function liveOrderCache(version: DeltaVersion): ByteLru<Uint32Array> {
  let cache = orderCaches.get(version);
  if (cache === undefined) {
    cache = new ByteLru<Uint32Array>(64 * 1024 * 1024);
    orderCaches.set(version, cache);
  }
  return cache;
}

/** Tombstones of a version (for the merged walk). */
export function tombstones(version: DeltaVersion): Bitmap {
  return version.baseDead;
}

/**
 * The window [offset, end) of a match set's live rows in key order (ascending, or its exact
 * reverse): the set's first rows (or, descending, all of them from the last) less the tombstoned
 * ones, merged by the key with Δ⁺ — O(end + |Δ⁺| log |Δ⁺|) ascending, like the base's first rows.
 */
export function liveKeyWindow(version: DeltaVersion, live: LiveFilter, set: MatchSet, desc: boolean, offset: number, end: number): Uint32Array {
  const store = version.delta.base;
  const compare = keyCompare(version);
  const extra = Array.from(live.delta).sort(compare);
  const dead = version.baseDead;
  // ascending: the first rows of the set are enough (as many more as it has dead rows)
  const base = desc ? matchRows(store, set) : firstMatchRows(store, set, end + live.deadTotal);
  const out = new Uint32Array(end - offset);
  let k = 0;
  let b = desc ? base.length - 1 : 0;
  let x = desc ? extra.length - 1 : 0;
  const step = desc ? -1 : 1;
  const more = (i: number, length: number) => (desc ? i >= 0 : i < length);
  for (let at = 0; at < end; at++) {
    while (more(b, base.length) && (dead[base[b] >>> 5] & (1 << (base[b] & 31))) !== 0) b += step;
    const takeBase = more(b, base.length) && (!more(x, extra.length) || (desc ? compare(base[b], extra[x]) > 0 : compare(base[b], extra[x]) < 0));
    let row: number;
    if (takeBase) {
      row = base[b];
      b += step;
    } else if (more(x, extra.length)) {
      row = extra[x];
      x += step;
    } else break;
    if (at >= offset) out[k++] = row;
  }
  return out.subarray(0, k);
}
