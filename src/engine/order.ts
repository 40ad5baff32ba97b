/**
 * Ordering and the row window: walks the stored orders (src/kinds: a column's `rowsByValue`,
 * its per-partition copy, the key's row order) in sort order and picks rows [offset, offset +
 * limit) among the matches. Multi-key sorts resolve the runs of equal first-key values by
 * sorting just the runs the window touches. Every order breaks its ties by the key (the row
 * number), ascending, or descending for a descending last key: its exact reverse (docs/api.md
 * "The key").
 */
import { KINDS } from "../kinds/registry.ts";
import type { SortKey } from "../query/types.ts";
import type { StoredColumn } from "../kinds/kind.ts";
import { type Store, allCodes, partitionCounts, storedColumn } from "../store/types.ts";
import { type MergedWalk, type Overlay, walkMerged } from "./merged-walk.ts";
import { type FilterResult, matchCountByCode, rowsInMask, singleCode } from "./row-set.ts";
import { PIECE, type Work, finish } from "../bits/work.ts";

/**
 * A stretch of the sort order: rows `perm[start..end)` (or row numbers start..end when `perm`
 * is null), walked backwards when `reverse`. Rows whose partition code is not in `codeMask` are
 * not members. When `rank` is set, consecutive rows of equal rank form a run ordered by `rest`.
 */
export interface Segment {
  perm: Uint32Array | null;
  start: number;
  end: number;
  reverse: boolean;
  /** Partition codes whose rows are members (bit c = code c); every code when no test is needed. */
  codeMask: number;
  /** The partition code every row of the segment has, or -1 when it spans codes. */
  codeOf: number;
  /** Rank per row of the key that forms runs; null when the key is unique. */
  rank: Uint32Array | null;
  /** Keys that order the rows within a run (then the key, in the direction of the last key). */
  rest: SortKey[];
  /**
   * The order `perm` holds, ascending, ties by the key: its column's values (by |value| when
   * `orderAbsolute`), or the key's own order when null (row numbers, or a partition code's rows
   * by row). What a live replica's changed rows are placed by ({@link segmentOrder}).
   */
  orderColumn: string | null;
  orderAbsolute: boolean;
  /** Which of the store's orders `perm` is (with start and end, it names the stretch). */
  orderName: "key" | "partition" | "rowsByValue" | "rowsByValueByPartition" | "rowsByAbsValue";
}

/** A segment's order as a sort key (null: the key's order) and a name for caches (live-order.ts). */
export function segmentOrder(seg: Segment): { permKey: SortKey | null; permName: string } {
  if (seg.orderColumn === null) return { permKey: null, permName: seg.orderName };
  return { permKey: { column: seg.orderColumn, direction: "asc", absolute: seg.orderAbsolute }, permName: `${seg.orderName}:${seg.orderColumn}${seg.orderAbsolute ? ":absolute" : ""}` };
}

/**
 * Where a filtered walk may resume: segment index, local index (a run start), the live
 * overlay's insert index there (0 without one), matches before it.
 */
export interface Checkpoint {
  segment: number;
  index: number;
  insert: number;
  before: number;
}

/** A live replica's part of a walk: the tombstones, and each segment's overlay (merged-walk.ts). */
export interface LiveWalk {
  dead: Uint32Array;
  overlays: Overlay[];
}

/**
 * Normalizes sort keys against the store's schema: removes repeated columns, keeps `absolute`
 * on number columns only, drops the keys after the key column (it is unique), and falls back to
 * the key ascending when empty (docs/api.md "Ordering", "The key").
 */
export function normalizeSort(store: Store, keys: readonly SortKey[]): SortKey[] {
  const out: SortKey[] = [];
  const key = store.schema.key;
  for (const k of keys) {
    // a handful of keys: a scan of those kept is cheaper than a set
    let repeated = false;
    for (let i = 0; i < out.length; i++) if (out[i].column === k.column) repeated = true;
    if (repeated) continue;
    const absolute = k.absolute && KINDS[storedColumn(store, k.column).spec.kind].absoluteSort;
    out.push({ column: k.column, direction: k.direction, absolute });
    if (k.column === key) break;
  }
  if (out.length === 0) out.push({ column: key, direction: "asc", absolute: false });
  return out;
}

/** Start of partition code `code`'s rows in a partitioned order (the counts before it summed). */
function codeStart(counts: Uint32Array, code: number): number {
  let start = 0;
  for (let c = 0; c < code; c++) start += counts[c];
  return start;
}

/** A column's stored order as a permutation (null: the row order itself, the key's). */
function orderOf(column: StoredColumn, absolute: boolean): Uint32Array | null {
  if (absolute && column.rowsByAbsValue !== null) return column.rowsByAbsValue;
  return column.rowsByValue;
}

/** The stored order an ordered walk of `keys` reads, as explain names it. */
export function orderIndexName(store: Store, keys: readonly SortKey[], mask: number): string {
  const k1 = keys[0];
  const column = storedColumn(store, k1.column);
  if (store.partition !== null && k1.column === store.partition.column) return "partition";
  if (k1.absolute && column.rowsByAbsValue !== null) return "rowsByAbsValue";
  if (column.key) return "key order";
  if (singleCode(mask) >= 0 && column.rowsByValueByPartition !== null) return "rowsByValueByPartition";
  return "rowsByValue";
}

/**
 * The segments of the sort order for normalized `keys`, restricted to rows whose partition code
 * is in `mask` (from a filter on the partition column; every code otherwise).
 */
export function buildSegments(store: Store, keys: SortKey[], mask: number): Segment[] {
  const n = store.rowCount;
  const all = allCodes(store);
  const k1 = keys[0];
  const single = singleCode(mask);
  const counts = partitionCounts(store);
  /**
   * A segment, every field given (one object shape). An absolute key over a column without
   * rowsByAbsValue (no negative value) reads the value order, the same order for the base's rows:
   * `absolute` still says how a live replica's changed rows are placed.
   */
  const seg = (
    perm: Uint32Array | null,
    start: number,
    end: number,
    reverse: boolean,
    codeMask: number,
    codeOf: number,
    rank: Uint32Array | null,
    rest: SortKey[],
    orderColumn: string | null,
    orderAbsolute: boolean,
    orderName: Segment["orderName"],
  ): Segment => ({ perm, start, end, reverse, codeMask, codeOf, rank, rest, orderColumn, orderAbsolute, orderName });
  const valueOrder = (column: StoredColumn, absolute: boolean, partitioned: boolean): Segment["orderName"] =>
    absolute && column.rowsByAbsValue !== null ? "rowsByAbsValue" : partitioned ? "rowsByValueByPartition" : "rowsByValue";
  const partition = store.partition;
  const partitionColumn = partition === null ? null : storedColumn(store, partition.column);
  if (partition !== null && partitionColumn !== null && k1.column === partition.column) {
    // its rowsByValue: the rows grouped by code, ascending within a code
    const byCode = partitionColumn.rowsByValue as Uint32Array;
    const codes: number[] = [];
    for (let c = 0; c < counts.length; c++) if ((mask >>> c) & 1) codes.push(c);
    if (k1.direction === "desc") codes.reverse();
    const k2 = keys[1];
    return codes.map((code) => {
      const start = codeStart(counts, code);
      const end = start + counts[code];
      if (k2 === undefined) return seg(byCode, start, end, k1.direction === "desc", all, code, null, [], null, false, "partition");
      const reverse = k2.direction === "desc";
      const column = storedColumn(store, k2.column);
      if (column.key && !(k2.absolute && column.rowsByAbsValue !== null)) return seg(byCode, start, end, reverse, all, code, null, [], k2.absolute ? k2.column : null, k2.absolute, "partition");
      if (column.key) return seg(column.rowsByAbsValue, 0, n, reverse, 1 << code, code, null, [], k2.column, true, "rowsByAbsValue");
      const rest = keys.slice(2);
      if (column.rowsByValueByPartition !== null && !k2.absolute) {
        return seg(column.rowsByValueByPartition, start, end, reverse, all, code, column.rankByRow, rest, k2.column, false, "rowsByValueByPartition");
      }
      return seg(orderOf(column, k2.absolute), 0, n, reverse, 1 << code, code, column.rankByRow, rest, k2.column, k2.absolute, valueOrder(column, k2.absolute, false));
    });
  }
  const reverse = k1.direction === "desc";
  const column = storedColumn(store, k1.column);
  if (column.key) {
    const perm = orderOf(column, k1.absolute);
    const orderColumn = k1.absolute ? k1.column : null;
    const orderName = perm === null ? "key" : "rowsByAbsValue";
    if (mask === all) return [seg(perm, 0, n, reverse, all, -1, null, [], orderColumn, k1.absolute, orderName)];
    if (perm === null && single >= 0 && partitionColumn !== null) {
      const start = codeStart(counts, single);
      return [seg(partitionColumn.rowsByValue, start, start + counts[single], reverse, all, single, null, [], orderColumn, k1.absolute, "partition")];
    }
    return [seg(perm, 0, n, reverse, mask, single, null, [], orderColumn, k1.absolute, orderName)];
  }
  const rest = keys.slice(1);
  // in the absolute order too, equal values are consecutive: a run is a rank's rows
  const rank = column.rankByRow;
  const perm = orderOf(column, k1.absolute);
  const orderName = valueOrder(column, k1.absolute, false);
  if (mask === all) return [seg(perm, 0, n, reverse, all, -1, rank, rest, k1.column, k1.absolute, orderName)];
  if (single >= 0 && column.rowsByValueByPartition !== null && !k1.absolute) {
    const start = codeStart(counts, single);
    return [seg(column.rowsByValueByPartition, start, start + counts[single], reverse, all, single, rank, rest, k1.column, false, "rowsByValueByPartition")];
  }
  return [seg(perm, 0, n, reverse, mask, single, rank, rest, k1.column, k1.absolute, orderName)];
}

/** Matches in a segment, known without walking it. */
function segmentMatches(store: Store, seg: Segment, filter: FilterResult): number {
  // a stretch of no base rows (a live version's segment for changed rows whose value no base row
  // holds, live-order.ts) matches none of them, whatever its codes
  if (seg.end <= seg.start) return 0;
  if (filter.kind === "set") return seg.codeOf < 0 ? filter.set.count : matchCountByCode(store, filter.set)[seg.codeOf];
  if (seg.codeOf >= 0) return partitionCounts(store)[seg.codeOf];
  if (filter.kind === "codes") return rowsInMask(store, filter.mask);
  return seg.end - seg.start;
}

/**
 * A comparator of row numbers by `keys` (normalized), ties by the key (the row number) in the
 * direction of the last key: the order a run is sorted in, and the order of {@link orderAll}.
 * `absolute` compares |value| then the signed value (AG Grid's absolute sort); nulls first.
 */
export function rowComparator(store: Store, keys: SortKey[]): (a: number, b: number) => number {
  const lastDesc = keys.length > 0 && keys[keys.length - 1].direction === "desc";
  const parts = keys.map((key) => {
    const sign = key.direction === "desc" ? -1 : 1;
    const column = storedColumn(store, key.column);
    if (key.absolute) {
      const distinct = column.distinct as Float64Array;
      const ranks = column.rankByRow;
      // a row's value (NaN for null): a key's is at its row, another column's at its rank
      const value = ranks === null ? (row: number) => distinct[row] : (row: number) => (ranks[row] === 0 ? Number.NaN : distinct[ranks[row] - 1]);
      return { sign, rank: null, value };
    }
    return { sign, rank: column.rankByRow as ArrayLike<number> | null, value: null };
  });
  return (a, b) => {
    for (let i = 0; i < parts.length; i++) {
      const p = parts[i];
      let d: number;
      if (p.value !== null) {
        const x = p.value(a);
        const y = p.value(b);
        // nulls first, then |value|, then the signed value
        d = Number.isNaN(x) || Number.isNaN(y) ? Number(!Number.isNaN(x)) - Number(!Number.isNaN(y)) : Math.abs(x) - Math.abs(y) || x - y;
      } else if (p.rank !== null) d = p.rank[a] - p.rank[b];
      else d = a - b;
      if (d !== 0) return p.sign * d;
    }
    return lastDesc ? b - a : a - b;
  };
}

/** What {@link windowRows} gives: the window's rows, and a checkpoint to resume a later window at (null: nothing walked). */
export interface WalkedWindow {
  rows: Uint32Array;
  checkpoint: Checkpoint | null;
}

/** {@link windowRows} of one store, order and filter: the window at `offset` of `limit` rows, resumed at `resume`. */
export type WindowWalk = (offset: number, limit: number, resume: Checkpoint | null) => WalkedWindow;

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
  live: LiveWalk | null = null,
): WalkedWindow {
  const out = new Uint32Array(limit);
  let k = 0;
  let skip = offset;
  let first = 0;
  let startIndex = 0;
  let startInsert = 0;
  if (resume !== null && offset >= resume.before && resume.segment < segments.length) {
    first = resume.segment;
    startIndex = resume.index;
    startInsert = resume.insert;
    skip = offset - resume.before;
  }
  // The caller materializes a match set's bitmap before a walk (execute.ts).
  const bits = filter.kind === "set" ? filter.set.bits : null;
  const codes = store.partition?.codes ?? EMPTY_CODES;
  const all = allCodes(store);
  let checkpoint: Checkpoint | null = null;
  for (let s = first; s < segments.length && k < limit; s++) {
    const seg = segments[s];
    const overlay = live === null ? null : live.overlays[s];
    const from = s === first ? startIndex : 0;
    const fromInsert = s === first ? startInsert : 0;
    if (from === 0 && fromInsert === 0) {
      const matches = segmentMatches(store, seg, filter) + (overlay === null ? 0 : overlay.rows.length - overlay.deadMatches);
      if (skip >= matches) {
        skip -= matches;
        continue;
      }
    }
    let walked: MergedWalk;
    if (overlay === null) {
      const w = walkSegment(store, seg, bits, from, skip, limit - k, out, k);
      walked = { k: w.k, runI: w.runStart, runJ: 0, skippedInRun: w.skippedInRun, skipLeft: w.skipLeft };
    } else walked = walkMerged(seg, overlay, codes, all, bits, (live as LiveWalk).dead, from, fromInsert, skip, limit - k, out, k);
    if (checkpoint === null && walked.runI >= 0 && (bits !== null || seg.codeMask !== all)) {
      checkpoint = { segment: s, index: walked.runI, insert: walked.runJ, before: offset - walked.skippedInRun };
    }
    k = walked.k;
    // A walk resumed mid-segment may end the segment with part of the skip left.
    skip = walked.skipLeft;
  }
  // a full window is the array itself (a subarray costs a view object)
  return { rows: k === limit ? out : out.subarray(0, k), checkpoint };
}

/**
 * {@link windowRows} in pieces (bits/work.ts): the walk to the window's start advanced
 * `matchesPerPiece` matches at a time, each piece resumed at the checkpoint the last one left
 * (its run's start) and followed by a pause, then the window itself from the last checkpoint —
 * the rows one walk reads, give or take a run per piece, never more than a piece between pauses.
 * @param walk {@link windowRows} of one order and filter, from the window's offset, limit and checkpoint
 * @param matchesPerPiece matches a piece advances (> 0): about {@link PIECE} rows walked at the
 *   match set's selectivity
 */
export function* windowRowsWork(walk: WindowWalk, offset: number, limit: number, resume: Checkpoint | null, matchesPerPiece: number): Work<WalkedWindow> {
  let from = resume !== null && offset >= resume.before ? resume : null;
  let at = from?.before ?? 0;
  while (offset - at > matchesPerPiece) {
    at += matchesPerPiece;
    const piece = walk(at, 1, from);
    if (piece.checkpoint !== null) from = piece.checkpoint;
    // past the last match: the window is empty
    if (piece.rows.length === 0) return { rows: new Uint32Array(0), checkpoint: from };
    yield;
  }
  const window = walk(offset, limit, from);
  return { rows: window.rows, checkpoint: window.checkpoint ?? from };
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
  const codes = store.partition?.codes ?? EMPTY_CODES;
  const mask = seg.codeMask;
  const testCode = mask !== allCodes(store);
  const needTest = bits !== null || testCode;
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
      if (testCode && ((mask >>> codes[row]) & 1) === 0) continue;
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
      if (testCode && ((mask >>> codes[row]) & 1) === 0) continue;
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

/** Codes of a store without a partition: never read (every mask then holds every code). */
const EMPTY_CODES = new Uint8Array(0);

/**
 * All matching rows of a match set (ascending `rows`, length m) in sort order: a gather-sort.
 * One plain sort key: each row packed with its rank into a 64-bit word (rank high, row low) and
 * the words sorted natively, O(m log m) without a comparator call; descending is the exact
 * reverse (ties by key descending, as docs/api.md orders them). Several keys, or an absolute
 * one: a comparator sort ({@link rowComparator}).
 * @returns a permutation of `rows`; length m (the input itself for the key ascending)
 */
export function orderAll(store: Store, rows: Uint32Array, keys: SortKey[]): Uint32Array {
  return finish(orderAllWork(store, rows, keys));
}

/** Rows sorted at once by a packed native sort: a piece of about a millisecond's work. */
const PACKED_PIECE = 1 << 14;

/** Rows sorted at once by a comparator sort: a piece of about a millisecond's work. */
const COMPARED_PIECE = 1 << 11;

/**
 * {@link orderAll} as work that pauses between pieces (bits/work.ts): up to a piece of rows is
 * sorted at once as before; more are sorted a piece at a time, then the sorted pieces merged
 * pairwise, a piece of output at a time, so that sorting millions of matches runs in slices.
 */
export function* orderAllWork(store: Store, rows: Uint32Array, keys: SortKey[]): Work<Uint32Array> {
  const first = storedColumn(store, keys[0].column);
  if (keys.length === 1 && first.key && !keys[0].absolute) {
    if (keys[0].direction === "asc") return rows;
    return rows.slice().reverse();
  }
  const m = rows.length;
  if (keys.length === 1 && !keys[0].absolute && first.rankByRow !== null) {
    const rank = first.rankByRow;
    // each piece sorted natively as packed (rank, row) words, then unpacked for the merges
    const ranks = new Uint32Array(m);
    const out = new Uint32Array(m);
    const packed = new BigUint64Array(Math.min(m, PACKED_PIECE));
    // little-endian (every platform Bun runs on): word 2i is the low half
    const words = new Uint32Array(packed.buffer);
    for (let start = 0; start < m; start += PACKED_PIECE) {
      const end = Math.min(m, start + PACKED_PIECE);
      for (let i = start; i < end; i++) {
        const row = rows[i];
        words[2 * (i - start)] = row;
        words[2 * (i - start) + 1] = rank[row];
      }
      packed.subarray(0, end - start).sort();
      for (let i = start; i < end; i++) {
        out[i] = words[2 * (i - start)];
        ranks[i] = words[2 * (i - start) + 1];
      }
      yield;
    }
    const sorted = m > PACKED_PIECE ? yield* mergePieces(out, ranks, PACKED_PIECE, null) : out;
    return keys[0].direction === "asc" ? sorted : sorted.reverse();
  }
  const compare = rowComparator(store, keys);
  const out = new Uint32Array(m);
  for (let start = 0; start < m; start += COMPARED_PIECE) {
    const end = Math.min(m, start + COMPARED_PIECE);
    out.set(Array.from(rows.subarray(start, end)).sort(compare), start);
    yield;
  }
  return m > COMPARED_PIECE ? yield* mergePieces(out, null, COMPARED_PIECE, compare) : out;
}

/**
 * Merges sorted runs of `width` rows (the last may be shorter) pairwise until one is left,
 * pausing every `PIECE` rows written. Order: by `ranks` (each row's rank beside it, ties by
 * row), or by `compare` when `ranks` is null. Returns the sorted rows (one of two buffers).
 */
function* mergePieces(rows: Uint32Array, ranks: Uint32Array | null, width: number, compare: ((a: number, b: number) => number) | null): Work<Uint32Array> {
  const m = rows.length;
  let src: Uint32Array = rows;
  let dst: Uint32Array = new Uint32Array(m);
  let srcRanks: Uint32Array | null = ranks;
  let dstRanks: Uint32Array | null = ranks === null ? null : new Uint32Array(m);
  for (let w = width; w < m; w *= 2) {
    for (let lo = 0; lo < m; lo += 2 * w) {
      const mid = Math.min(m, lo + w);
      const hi = Math.min(m, lo + 2 * w);
      let i = lo;
      let j = mid;
      let k = lo;
      while (k < hi) {
        const stop = Math.min(hi, k + PIECE);
        if (srcRanks !== null) {
          const rs = srcRanks;
          const rd = dstRanks as Uint32Array;
          for (; k < stop; k++) {
            // the left run's next row first on a tie of rank and row (rows are distinct: never)
            if (j >= hi || (i < mid && (rs[i] < rs[j] || (rs[i] === rs[j] && src[i] < src[j])))) {
              rd[k] = rs[i];
              dst[k] = src[i++];
            } else {
              rd[k] = rs[j];
              dst[k] = src[j++];
            }
          }
        } else {
          const cmp = compare as (a: number, b: number) => number;
          for (; k < stop; k++) dst[k] = j >= hi || (i < mid && cmp(src[i], src[j]) <= 0) ? src[i++] : src[j++];
        }
        yield;
      }
    }
    [src, dst] = [dst, src];
    [srcRanks, dstRanks] = [dstRanks, srcRanks];
  }
  return src;
}

/** True when `keys` (normalized) is the key's own order, ascending or descending. */
export function isKeyOrder(store: Store, keys: readonly SortKey[]): boolean {
  return keys.length === 1 && keys[0].column === store.schema.key && !keys[0].absolute;
}
