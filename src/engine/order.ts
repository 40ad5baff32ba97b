/**
 * Ordering and the row window: walks the prebuilt permutations (src/store/types.ts) in sort
 * order and picks rows [offset, offset + limit) among the matches. Multi-key sorts resolve the
 * runs of equal first-key values by sorting just the runs the window touches.
 */
import { ALL_STATUS, STATUS_VALUES, singleStatus } from "../schema.ts";
import type { SortKey } from "../query/types.ts";
import type { Store } from "../store/types.ts";
import { type FilterResult, matchCountByStatus } from "./filter.ts";


/**
 * A stretch of the sort order: rows `perm[start..end)` (or row numbers start..end when `perm`
 * is null), walked backwards when `reverse`. Rows whose status is not in `statusMask` are not
 * members. When `rank` is set, consecutive rows of equal rank form a run ordered by `rest`.
 */
export interface Segment {
  perm: Uint32Array | null;
  start: number;
  end: number;
  reverse: boolean;
  /** Status codes whose rows are members (bit c = code c); ALL when no test is needed. */
  statusMask: number;
  /** The status code every row of the segment has, or -1 when it spans statuses. */
  statusOf: number;
  /** Rank per row of the key that forms runs; null when the key is unique. */
  rank: Uint32Array | null;
  /** Keys that order the rows within a run (then id in the direction of the last key). */
  rest: SortKey[];
}

/** Where a filtered walk may resume: segment index, local index (a run start), matches before it. */
export interface Checkpoint {
  segment: number;
  index: number;
  before: number;
}

/**
 * Normalizes sort keys: removes repeated columns, ignores `absolute` off `id`, drops keys
 * after a unique one (`id`), and falls back to id ascending when empty (docs/api.md "Ordering").
 */
export function normalizeSort(keys: readonly SortKey[]): SortKey[] {
  const out: SortKey[] = [];
  const seen = new Set<string>();
  for (const key of keys) {
    if (seen.has(key.column)) continue;
    seen.add(key.column);
    out.push({ column: key.column, direction: key.direction, absolute: key.column === "id" && key.absolute });
    if (key.column === "id") break;
  }
  if (out.length === 0) out.push({ column: "id", direction: "asc", absolute: false });
  return out;
}

/** Start and end of status code `code`'s partition in a status-partitioned permutation. */
function partition(store: Store, code: number): [number, number] {
  let start = 0;
  for (let c = 0; c < code; c++) start += store.statusCounts[c];
  return [start, start + store.statusCounts[code]];
}

/** Permutation and range of the id key (plain or absolute) over all rows. */
function idOrder(store: Store, key: SortKey): Uint32Array | null {
  return key.absolute && store.rowsByAbsId !== null ? store.rowsByAbsId : null;
}

/**
 * The segments of the sort order for normalized `keys`, restricted to rows whose status is in
 * `mask` (from a status-only filter; ALL otherwise).
 */
export function buildSegments(store: Store, keys: SortKey[], mask: number): Segment[] {
  const n = store.rowCount;
  const k1 = keys[0];
  const single = singleStatus(mask);
  const seg = (s: Partial<Segment> & Pick<Segment, "perm" | "start" | "end" | "reverse">): Segment => ({
    statusMask: ALL_STATUS,
    statusOf: -1,
    rank: null,
    rest: [],
    ...s,
  });
  if (k1.column === "status") {
    const codes = STATUS_VALUES.map((_, c) => c).filter((c) => (mask >>> c) & 1);
    if (k1.direction === "desc") codes.reverse();
    const k2 = keys[1];
    return codes.map((code) => {
      const [start, end] = partition(store, code);
      if (k2 === undefined) return seg({ perm: store.rowsByStatus, start, end, reverse: k1.direction === "desc", statusOf: code });
      const reverse = k2.direction === "desc";
      if (k2.column === "id") {
        const perm = idOrder(store, k2);
        if (perm === null) return seg({ perm: store.rowsByStatus, start, end, reverse, statusOf: code });
        return seg({ perm, start: 0, end: n, reverse, statusMask: 1 << code, statusOf: code });
      }
      const column = valueOrder(store, k2.column);
      if (column.rowsByValueByStatus === null) {
        return seg({ perm: column.rowsByValue, start: 0, end: n, reverse, statusMask: 1 << code, statusOf: code, rank: column.rankByRow, rest: keys.slice(2) });
      }
      return seg({ perm: column.rowsByValueByStatus, start, end, reverse, statusOf: code, rank: column.rankByRow, rest: keys.slice(2) });
    });
  }
  const reverse = k1.direction === "desc";
  if (k1.column === "id") {
    const perm = idOrder(store, k1);
    if (mask === ALL_STATUS) return [seg({ perm, start: 0, end: n, reverse })];
    if (perm === null && single >= 0) {
      const [start, end] = partition(store, single);
      return [seg({ perm: store.rowsByStatus, start, end, reverse, statusOf: single })];
    }
    return [seg({ perm, start: 0, end: n, reverse, statusMask: mask, statusOf: single })];
  }
  const column = valueOrder(store, k1.column);
  const rest = keys.slice(1);
  if (mask === ALL_STATUS) return [seg({ perm: column.rowsByValue, start: 0, end: n, reverse, rank: column.rankByRow, rest })];
  if (single >= 0 && column.rowsByValueByStatus !== null) {
    const [start, end] = partition(store, single);
    return [seg({ perm: column.rowsByValueByStatus, start, end, reverse, statusOf: single, rank: column.rankByRow, rest })];
  }
  return [seg({ perm: column.rowsByValue, start: 0, end: n, reverse, statusMask: mask, rank: column.rankByRow, rest })];
}

/**
 * The value order of a column other than `id` and `status`: its rows by value, each row's rank
 * (equal values share one; 0 is null, first) and, for the seed's string columns, the rows by value
 * partitioned by status code (null for the other columns).
 * @throws Error for a column the store lacks or one without an order (json): the parsers refuse both first
 */
export function valueOrder(store: Store, column: string): { rowsByValue: Uint32Array; rankByRow: Uint32Array; rowsByValueByStatus: Uint32Array | null } {
  if (column === "name" || column === "email") return store.strings[column];
  const stored = store.columns[column];
  if (stored === undefined || stored.rowsByValue === null || stored.rankByRow === null) throw new Error(`column "${column}" has no order`);
  return { rowsByValue: stored.rowsByValue, rankByRow: stored.rankByRow, rowsByValueByStatus: null };
}

/** Matches in a segment, known without walking it. */
function segmentMatches(store: Store, seg: Segment, filter: FilterResult): number {
  if (filter.kind === "set") return seg.statusOf < 0 ? filter.set.count : matchCountByStatus(store, filter.set)[seg.statusOf];
  if (seg.statusOf >= 0) return store.statusCounts[seg.statusOf];
  if (filter.kind === "status") {
    let count = 0;
    for (let c = 0; c < STATUS_VALUES.length; c++) if ((filter.mask >>> c) & 1) count += store.statusCounts[c];
    return count;
  }
  return seg.end - seg.start;
}

/**
 * A comparator of row numbers by `keys` (normalized), ties by id in the direction of the last
 * key: the order a run is sorted in, and the order of {@link orderAll}.
 */
export function rowComparator(store: Store, keys: SortKey[]): (a: number, b: number) => number {
  const lastDesc = keys.length > 0 && keys[keys.length - 1].direction === "desc";
  const parts = keys.map((key) => {
    const sign = key.direction === "desc" ? -1 : 1;
    if (key.column === "status") return { sign, rank: store.statusCodes as ArrayLike<number>, abs: false };
    if (key.column === "id") return { sign, rank: null, abs: key.absolute };
    return { sign, rank: valueOrder(store, key.column).rankByRow as ArrayLike<number>, abs: false };
  });
  const ids = store.ids;
  return (a, b) => {
    for (let i = 0; i < parts.length; i++) {
      const p = parts[i];
      let d: number;
      if (p.rank !== null) d = p.rank[a] - p.rank[b];
      else if (p.abs) d = Math.abs(ids[a]) - Math.abs(ids[b]) || a - b;
      else d = a - b;
      if (d !== 0) return p.sign * d;
    }
    return lastDesc ? b - a : a - b;
  };
}

/**
 * The window [offset, offset + limit) of the matching rows in sort order.
 * @param segments from {@link buildSegments}
 * @param resume a checkpoint from an earlier window of the same filter and sort, or null
 * @returns the rows (length <= limit) and a checkpoint at the start of the run holding the
 *   window's first row (null when nothing was walked).
 */
export function windowRows(
  store: Store,
  segments: Segment[],
  filter: FilterResult,
  offset: number,
  limit: number,
  resume: Checkpoint | null,
): { rows: Uint32Array; checkpoint: Checkpoint | null } {
  const out = new Uint32Array(limit);
  let k = 0;
  let skip = offset;
  let first = 0;
  let startIndex = 0;
  if (resume !== null && offset >= resume.before && resume.segment < segments.length) {
    first = resume.segment;
    startIndex = resume.index;
    skip = offset - resume.before;
  }
  // The caller materializes a match set's bitmap before a walk (execute.ts).
  const bits = filter.kind === "set" ? filter.set.bits : null;
  let checkpoint: Checkpoint | null = null;
  for (let s = first; s < segments.length && k < limit; s++) {
    const seg = segments[s];
    const from = s === first ? startIndex : 0;
    if (from === 0) {
      const matches = segmentMatches(store, seg, filter);
      if (skip >= matches) {
        skip -= matches;
        continue;
      }
    }
    const walked = walkSegment(store, seg, bits, from, skip, limit - k, out, k);
    if (checkpoint === null && walked.runStart >= 0 && (bits !== null || seg.statusMask !== ALL_STATUS)) {
      checkpoint = { segment: s, index: walked.runStart, before: offset - walked.skippedInRun };
    }
    k = walked.k;
    // A walk resumed mid-segment may end the segment with part of the skip left.
    skip = walked.skipLeft;
  }
  return { rows: out.subarray(0, k), checkpoint };
}

/**
 * Walks one segment from local index `from`, skipping `skip` members and emitting up to `take`
 * into `out` at `k`. Returns the new `k`, the local index of the run where emitting began, how
 * many members of that run were skipped (for checkpoints), and the skip left at the segment's end.
 */
function walkSegment(
  store: Store,
  seg: Segment,
  bits: Uint32Array | null,
  from: number,
  skip: number,
  take: number,
  out: Uint32Array,
  k: number,
): { k: number; runStart: number; skippedInRun: number; skipLeft: number } {
  const len = seg.end - seg.start;
  const perm = seg.perm;
  const base = seg.start;
  const last = seg.end - 1;
  const codes = store.statusCodes;
  const mask = seg.statusMask;
  const testStatus = mask !== ALL_STATUS;
  const needTest = bits !== null || testStatus;
  // row at local index i, inlined below as: perm === null ? (reverse ? last - i : base + i) : perm[reverse ? last - i : base + i]
  const reverse = seg.reverse;
  const rank = seg.rank;
  let runStart = -1;
  let skippedInRun = 0;

  if (rank === null || seg.rest.length === 0) {
    // No runs to resolve: the segment order is final.
    let i = from;
    if (!needTest) {
      i += skip;
      runStart = i;
      const stop = Math.min(len, i + take);
      for (; i < stop; i++) {
        const at = reverse ? last - i : base + i;
        out[k++] = perm === null ? at : perm[at];
      }
      return { k, runStart, skippedInRun: 0, skipLeft: Math.max(0, from + skip - len) };
    }
    for (; i < len && take > 0; i++) {
      const at = reverse ? last - i : base + i;
      const row = perm === null ? at : perm[at];
      if (bits !== null && (bits[row >>> 5] & (1 << (row & 31))) === 0) continue;
      if (testStatus && ((mask >>> codes[row]) & 1) === 0) continue;
      if (skip > 0) {
        skip--;
        continue;
      }
      if (runStart < 0) runStart = i;
      out[k++] = row;
      take--;
    }
    return { k, runStart, skippedInRun: 0, skipLeft: skip };
  }

  const compare = rowComparator(store, seg.rest.length > 0 ? seg.rest : []);
  const rowAt = (i: number) => {
    const at = reverse ? last - i : base + i;
    return perm === null ? at : perm[at];
  };
  let i = from;
  if (!needTest && skip > 0) {
    // Jump straight to the window, then back to the start of its run.
    i = from + skip;
    if (i >= len) return { k, runStart, skippedInRun, skipLeft: i - len };
    const r = rank[rowAt(i)];
    let rs = i;
    while (rs > from && rank[rowAt(rs - 1)] === r) rs--;
    skip = i - rs;
    i = rs;
  }
  const run: number[] = [];
  while (i < len && take > 0) {
    const head = rowAt(i);
    const r = rank[head];
    let j = i + 1;
    while (j < len && rank[rowAt(j)] === r) j++;
    run.length = 0;
    for (let x = i; x < j; x++) {
      const row = rowAt(x);
      if (bits !== null && (bits[row >>> 5] & (1 << (row & 31))) === 0) continue;
      if (testStatus && ((mask >>> codes[row]) & 1) === 0) continue;
      run.push(row);
    }
    if (skip >= run.length) {
      skip -= run.length;
      i = j;
      continue;
    }
    if (run.length > 1) run.sort(compare);
    if (runStart < 0) {
      runStart = i;
      skippedInRun = skip;
    }
    for (let x = skip; x < run.length && take > 0; x++) {
      out[k++] = run[x];
      take--;
    }
    skip = 0;
    i = j;
  }
  return { k, runStart, skippedInRun, skipLeft: skip };
}

/**
 * All matching rows of a match set (ascending `rows`, length m) in sort order: a gather-sort.
 * One sort key: each row packed with its rank into a 64-bit word (rank high, row low) and the
 * words sorted natively, O(m log m) without a comparator call; descending is the exact
 * reverse (ties by id descending, as docs/api.md orders them). Several keys: a comparator
 * sort ({@link rowComparator}).
 * @returns a permutation of `rows`; length m (the input itself for id ascending)
 */
export function orderAll(store: Store, rows: Uint32Array, keys: SortKey[]): Uint32Array {
  if (keys.length === 1 && keys[0].column === "id" && !keys[0].absolute) {
    if (keys[0].direction === "asc") return rows;
    return rows.slice().reverse();
  }
  if (keys.length === 1 && keys[0].column !== "id") {
    const rank: ArrayLike<number> = keys[0].column === "status" ? store.statusCodes : valueOrder(store, keys[0].column).rankByRow;
    const m = rows.length;
    const packed = new BigUint64Array(m);
    // little-endian (every platform Bun runs on): word 2i is the low half
    const words = new Uint32Array(packed.buffer);
    for (let i = 0; i < m; i++) {
      const row = rows[i];
      words[2 * i] = row;
      words[2 * i + 1] = rank[row];
    }
    packed.sort();
    const out = new Uint32Array(m);
    if (keys[0].direction === "asc") for (let i = 0; i < m; i++) out[i] = words[2 * i];
    else for (let i = 0; i < m; i++) out[i] = words[2 * (m - 1 - i)];
    return out;
  }
  const sorted = Array.from(rows).sort(rowComparator(store, keys));
  return Uint32Array.from(sorted);
}
