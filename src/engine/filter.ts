/**
 * Filter evaluation: a predicate tree (src/query/types.ts) becomes a status mask, all rows,
 * no rows, or a match set (a bitmap plus, where it comes for free, the ascending row list).
 * Substring predicates go through the character trigram posting lists; id comparisons through binary
 * search over the ascending ids; status predicates through the status codes.
 */
import { fold } from "../collation/collation.ts";
import { bytesMatch } from "../bits/folded-match.ts";
import { textPasses } from "../kinds/ordered.ts";
import { KINDS } from "../kinds/registry.ts";
import { ALL_STATUS, STATUS_VALUES, type StringColumnId, singleStatus } from "../schema.ts";
import type { ColumnTest, Predicate, TextOp } from "../query/types.ts";
import type { StoredColumn } from "../kinds/kind.ts";
import { stringValueAt } from "../store/records.ts";
import { denseBitmap, findList, isDense, listRows, needleTrigrams, setListBits } from "../store/trigrams.ts";
import { couldBeInId, searchCheckCost, searchTermCost, searchTermEstimate } from "./planner.ts";
import type { Store, TrigramIndex } from "../store/types.ts";
import {
  type Bitmap,
  andInPlace,
  andInto,
  bitmapOfRows,
  countAnd,
  countRows,
  rowsOfBitmap,
  emptyBitmap,
  notInPlace,
  orInPlace,
  setRange,
} from "../bits/bitmap.ts";

/** A posting list of a trigram index, referenced rather than decoded. */
export interface ListRef {
  index: TrigramIndex;
  /** The list's index in `index.keys`. */
  k: number;
}

/**
 * The rows a filter selects: those of `bits`, `rows` or `list` (at least one is set) whose
 * status code is in `mask`. Rows and per-status counts are built on first use by
 * {@link matchRows} and {@link matchCountByStatus} and kept (a cached match set gets cheaper
 * with use); walks borrow the engine's scratch bitmap (execute.ts).
 */
export interface MatchSet {
  /** Matching rows, in rows. */
  count: number;
  /** Matching rows per status code (length STATUS_VALUES.length), once known. */
  countByStatus: Uint32Array | null;
  /** Status codes the matches are restricted to (bit c = code c). */
  mask: number;
  /**
   * Membership bitmap over the store's rows, when materialized. Holds exactly the matches
   * unless `bitsExact` is false: then it is a posting list's bitmap that also holds rows of
   * status codes outside `mask`.
   */
  bits: Bitmap | null;
  bitsExact: boolean;
  /** True when `bits` is a view into the store (a dense posting list): never change it. */
  sharedBits: boolean;
  /** The matching rows ascending (id order), when materialized; length count. */
  rows: Uint32Array | null;
  /** A sparse posting list whose rows of the status codes in `mask` are the matches. */
  list: ListRef | null;
}

/** The match set's rows ascending, decoded or built on first use and kept; length `set.count`. */
export function matchRows(store: Store, set: MatchSet): Uint32Array {
  if (set.rows === null) {
    if (set.list !== null) set.rows = listRows(set.list.index, set.list.k, store.rowCount, Number.POSITIVE_INFINITY, set.mask);
    else if (set.bitsExact) set.rows = rowsOfBitmap(set.bits as Bitmap, set.count);
    else set.rows = keepStatus(store, rowsOfBitmap(set.bits as Bitmap), set.mask);
  }
  return set.rows;
}

/**
 * The first `limit` matching rows ascending (fewer when the set is smaller), decoding no more
 * of a sparse posting list than that: O(limit) for a list, else as {@link matchRows}.
 */
export function firstMatchRows(store: Store, set: MatchSet, limit: number): Uint32Array {
  if (set.rows === null && set.list !== null) return listRows(set.list.index, set.list.k, store.rowCount, limit, set.mask);
  return matchRows(store, set).subarray(0, limit);
}

/**
 * Matching rows per status code (length STATUS_VALUES.length), computed on first use and
 * kept: O(count) over rows, or O(rowCount / 32) per status code over the bitmap.
 */
export function matchCountByStatus(store: Store, set: MatchSet): Uint32Array {
  if (set.countByStatus !== null) return set.countByStatus;
  const counts = new Uint32Array(STATUS_VALUES.length);
  if (set.bits === null || !set.bitsExact) {
    const rows = matchRows(store, set);
    const codes = store.statusCodes;
    for (let i = 0; i < rows.length; i++) counts[codes[rows[i]]]++;
  } else {
    const maps = statusBitmaps(store);
    for (let code = 0; code < maps.length; code++) counts[code] = countAnd(set.bits, maps[code]);
  }
  set.countByStatus = counts;
  return counts;
}

/** The rows (ascending) whose status code is in `mask`: O(rows). */
function keepStatus(store: Store, rows: Uint32Array, mask: number): Uint32Array {
  const codes = store.statusCodes;
  let k = 0;
  const kept = new Uint32Array(rows.length);
  for (let i = 0; i < rows.length; i++) if ((mask >>> codes[rows[i]]) & 1) kept[k++] = rows[i];
  return kept.subarray(0, k);
}

/**
 * A filter's result: every row, rows whose status code is in a mask (bit c = code c), or an
 * explicit match set. `none` is a status mask of 0.
 */
export type FilterResult = { kind: "all" } | { kind: "status"; mask: number } | { kind: "set"; set: MatchSet };


const encoder = new TextEncoder();

/**
 * Evaluates a predicate over the store. Pure: reads the store, allocates its result.
 * Cost: O(rowCount / 32) per bitmap combination, O(posting list) for substring needles of 3+
 * code points, O(rowCount) scans for shorter needles and for text on `id`.
 */
export function evaluateFilter(store: Store, predicate: Predicate | null): FilterResult {
  if (predicate === null) return { kind: "all" };
  const node = evalNode(store, predicate);
  if (node.kind === "status") {
    if (node.mask === ALL_STATUS) return { kind: "all" };
    return node;
  }
  if (node.kind === "all") return node;
  return { kind: "set", set: finishMatchSet(store, node) };
}

/**
 * Intermediate result: the rows of a bitmap, of exact ascending rows or of a sparse posting
 * list (at least one is set) whose status code is in `mask`. `rows` are always exact; `bits`
 * are exact unless `exact` is false (a shared posting-list bitmap under a status mask). A
 * bitmap here is the node's own unless `shared` (a view of a dense posting list), so it may be
 * changed in place only then.
 */
type SetNode = {
  kind: "bits";
  bits: Bitmap | null;
  rows: Uint32Array | null;
  list: ListRef | null;
  mask: number;
  exact: boolean;
  shared: boolean;
  /** The number of rows, when known without counting. */
  count: number;
  /** Rows per status code, when known without counting. */
  countByStatus: Uint32Array | null;
  /** The posting list the node's rows are (before `mask`), when they are one. */
  source: ListRef | null;
};
type Node = { kind: "all" } | { kind: "status"; mask: number } | SetNode;

/** A set node's exact rows ascending, decoded or built from its bitmap when it has none. */
function rowsOfNode(store: Store, node: SetNode): Uint32Array {
  if (node.rows === null) {
    if (node.list !== null) node.rows = listRows(node.list.index, node.list.k, store.rowCount, Number.POSITIVE_INFINITY, node.mask);
    else node.rows = rowsOfBitmap(bitsOf(store, node));
  }
  return node.rows;
}

/** A set node's exact bitmap (read-only), built from its rows or its status mask when needed. */
function bitsOf(store: Store, node: SetNode): Bitmap {
  if (node.bits !== null && !node.exact) {
    const maps = statusBitmaps(store);
    const single = singleStatus(node.mask);
    const exact = emptyBitmap(store.rowCount);
    andInto(exact, node.bits, single >= 0 ? maps[single] : statusBitmap(store, node.mask));
    node.bits = exact;
    node.exact = true;
    node.shared = false;
  }
  if (node.bits === null) {
    node.bits = bitmapOfRows(rowsOfNode(store, node), store.rowCount);
    node.exact = true;
  }
  return node.bits;
}

/** A set node's exact bitmap as one the caller may change: a copy when it is shared. */
function ownBits(store: Store, node: SetNode): Bitmap {
  const bits = bitsOf(store, node);
  return node.shared ? bits.slice() : bits;
}

const NONE: Node = { kind: "status", mask: 0 };
const ALL: Node = { kind: "all" };

function evalNode(store: Store, p: Predicate): Node {
  switch (p.kind) {
    case "status":
      return maskNode(p.codes.reduce((m, c) => m | (1 << c), 0));
    case "text":
      if (p.column === "status") return maskNode(statusTextMask(p.op, p.value));
      if (p.column === "id") return idText(store, p.op, p.value);
      return textOnString(store, p.column, p.op, p.value);
    case "number":
      return idNumber(store, p.op, p.value, p.valueTo);
    case "set":
      return setNode(store, p.column, p.values);
    case "column": {
      const column = store.columns[p.column];
      return textColumnNode(store, column, p.test) ?? bitsNode(KINDS[column.spec.kind].evaluate(column, p.test, store.rowCount));
    }
    case "search":
      return searchNode(store, p.terms);
    case "and":
      return andNodes(store, p.children.map((c) => evalNode(store, c)));
    case "or":
      return orNodes(store, p.children.map((c) => evalNode(store, c)));
  }
}

function maskNode(mask: number): Node {
  return mask === ALL_STATUS ? ALL : { kind: "status", mask };
}

function bitsNode(bits: Bitmap | null, rows: Uint32Array | null = null): SetNode {
  return { kind: "bits", bits, rows, list: null, mask: ALL_STATUS, exact: true, shared: false, count: -1, countByStatus: null, source: null };
}

/** Per store, the bitmap of each status code's rows: built on first use (O(rowCount)), then kept. */
const statusBitmapCache = new WeakMap<Store, Bitmap[]>();

/**
 * The bitmap of each status code's rows; index = status code. Shared: never change them.
 * Computed once per store, so status filters combined with others cost O(rowCount / 32).
 */
export function statusBitmaps(store: Store): Bitmap[] {
  let maps = statusBitmapCache.get(store);
  if (maps === undefined) {
    maps = STATUS_VALUES.map(() => emptyBitmap(store.rowCount));
    const codes = store.statusCodes;
    for (let row = 0; row < codes.length; row++) maps[codes[row]][row >>> 5] |= 1 << (row & 31);
    statusBitmapCache.set(store, maps);
  }
  return maps;
}

/** A new bitmap of the rows whose status code is in `mask`. */
function statusBitmap(store: Store, mask: number): Bitmap {
  const maps = statusBitmaps(store);
  const bits = emptyBitmap(store.rowCount);
  for (let code = 0; code < maps.length; code++) if ((mask >>> code) & 1) orInPlace(bits, maps[code]);
  return bits;
}

function andNodes(store: Store, nodes: Node[]): Node {
  let mask = ALL_STATUS;
  const sets: SetNode[] = [];
  for (const node of nodes) {
    if (node.kind === "all") continue;
    if (node.kind === "status") {
      mask &= node.mask;
      if (mask === 0) return NONE;
      continue;
    }
    sets.push(node);
  }
  if (sets.length === 0) return maskNode(mask);
  let set: SetNode;
  if (sets.length === 1) {
    set = sets[0];
  } else {
    const bits = ownBits(store, sets[0]);
    for (let i = 1; i < sets.length; i++) andInPlace(bits, bitsOf(store, sets[i]));
    set = bitsNode(bits);
  }
  if (mask === ALL_STATUS) return set;
  const single = singleStatus(mask);
  const source = set.source;
  if (source !== null && set.rows === null && (set.list !== null || set.shared)) {
    // One posting list under a status filter: counted from its per-status counts, no pass.
    // A sparse list decodes just those status groups later; a dense one stays a shared view,
    // and walks test the status (or walk that status's partition).
    const node = bitsNode(set.bits);
    node.list = set.list;
    node.source = source;
    node.shared = set.shared;
    node.mask = set.mask & mask;
    node.exact = set.bits === null || node.mask === ALL_STATUS;
    node.countByStatus = new Uint32Array(STATUS_VALUES.length);
    node.count = 0;
    for (let c = 0; c < STATUS_VALUES.length; c++) {
      if ((node.mask >>> c) & 1) {
        node.countByStatus[c] = source.index.statusCounts[source.k * STATUS_VALUES.length + c];
        node.count += node.countByStatus[c];
      }
    }
    return node;
  }
  if (set.bits === null) {
    // Filter the exact row list by status: O(rows) instead of O(rowCount).
    return bitsNode(null, keepStatus(store, set.rows as Uint32Array, mask));
  }
  // One pass: AND with the status rows, counting as it goes.
  const maps = statusBitmaps(store);
  const statusBits = single >= 0 ? maps[single] : statusBitmap(store, mask);
  const out = emptyBitmap(store.rowCount);
  const count = andInto(out, bitsOf(store, set), statusBits);
  const node = bitsNode(out);
  node.count = count;
  if (single >= 0) {
    node.countByStatus = new Uint32Array(STATUS_VALUES.length);
    node.countByStatus[single] = count;
  }
  return node;
}

function orNodes(store: Store, nodes: Node[]): Node {
  const merged = mergeSparse(store, nodes);
  if (merged !== null) return merged;
  let mask = 0;
  let bits: Bitmap | null = null;
  for (const node of nodes) {
    if (node.kind === "all") return ALL;
    if (node.kind === "status") {
      mask |= node.mask;
      continue;
    }
    if (bits === null) bits = node.bits !== null ? ownBits(store, node) : emptyBitmap(store.rowCount);
    else if (node.bits !== null) {
      orInPlace(bits, bitsOf(store, node));
      continue;
    }
    if (node.bits === null) {
      // rows or a sparse posting list: set straight into the union, no bitmap of their own
      if (node.rows === null && node.list !== null) setListBits(node.list.index, node.list.k, node.mask, bits);
      else {
        const rows = rowsOfNode(store, node);
        for (let i = 0; i < rows.length; i++) bits[rows[i] >>> 5] |= 1 << (rows[i] & 31);
      }
    }
  }
  if (mask === ALL_STATUS) return ALL;
  if (bits === null) return maskNode(mask);
  if (mask !== 0) orInPlace(bits, statusBitmap(store, mask));
  return bitsNode(bits);
}

/**
 * The union of set nodes that are all row lists or sparse posting lists (status nodes of no
 * status aside) holding together under 1/32 of the rows, as one sorted row list: a sort of
 * their rows instead of a bitmap over every row (allocated, filled, counted). Null otherwise.
 */
function mergeSparse(store: Store, nodes: Node[]): Node | null {
  let total = 0;
  for (const node of nodes) {
    if (node.kind === "status" && node.mask === 0) continue;
    if (node.kind !== "bits" || node.bits !== null) return null;
    if (node.rows !== null) total += node.rows.length;
    else if (node.list !== null && node.count >= 0) total += node.count;
    else return null;
  }
  if (total * 32 > store.rowCount) return null;
  const all = new Uint32Array(total);
  let at = 0;
  for (const node of nodes) {
    if (node.kind !== "bits") continue;
    const rows = rowsOfNode(store, node);
    all.set(rows, at);
    at += rows.length;
  }
  all.subarray(0, at).sort();
  let k = 0;
  for (let i = 0; i < at; i++) if (k === 0 || all[i] !== all[k - 1]) all[k++] = all[i];
  return bitsNode(null, all.subarray(0, k));
}

/** A set node as a match set: its count (one pass over a bitmap when not known), the rest lazily. */
function finishMatchSet(store: Store, node: SetNode): MatchSet {
  let count = node.count;
  if (count < 0) count = node.rows !== null ? node.rows.length : countRows(bitsOf(store, node));
  return {
    count,
    countByStatus: node.countByStatus,
    mask: node.mask,
    bits: node.bits,
    bitsExact: node.exact,
    sharedBits: node.shared,
    rows: node.rows,
    list: node.list,
  };
}

// ---------------------------------------------------------------- text

/** Mask of the status values that satisfy a text op (docs/api.md: text filters on status follow the text rules). */
function statusTextMask(op: TextOp, value: string): number {
  const needle = fold(value);
  let mask = 0;
  for (let code = 0; code < STATUS_VALUES.length; code++) {
    if (textPasses(op, fold(STATUS_VALUES[code]), needle)) mask |= 1 << code;
  }
  return mask;
}

/**
 * Where a text predicate reads: trigram posting lists plus the values they index, either as
 * folded UTF-8 bytes (a seed string column, a `text` column) or as the ids themselves (a text
 * predicate on `id` compares `String(id)`, docs/api.md "Matching").
 */
export type TextSource =
  | { trigrams: TrigramIndex; folded: Uint8Array; foldedOffsets: Uint32Array; ids?: undefined }
  | { trigrams: TrigramIndex; ids: Float64Array; folded?: undefined; foldedOffsets?: undefined };

/** Text op on `String(id)`: trigram lists for needles of 3+ code points, else a scan. */
function idText(store: Store, op: TextOp, value: string): Node {
  const p = positive(op);
  // String(id) is never blank (docs/api.md "Matching": blank is `trim() === ""`).
  if (p.blank) return p.negate ? ALL : NONE;
  return textNode(store, { trigrams: store.idTrigrams, ids: store.ids }, op, value, () => emptyBitmap(store.rowCount));
}

/** Positive form of a text op, and whether the result is complemented. */
function positive(op: TextOp): { op: "contains" | "equals" | "startsWith" | "endsWith"; negate: boolean; blank: boolean } {
  switch (op) {
    case "notContains":
      return { op: "contains", negate: true, blank: false };
    case "notEqual":
      return { op: "equals", negate: true, blank: false };
    case "blank":
      return { op: "equals", negate: false, blank: true };
    case "notBlank":
      return { op: "equals", negate: true, blank: true };
    default:
      return { op, negate: false, blank: false };
  }
}

function textOnString(store: Store, columnId: StringColumnId, op: TextOp, value: string): Node {
  return textNode(store, store.strings[columnId], op, value, () => blankRows(store, columnId));
}

/**
 * A text predicate over a text source: blank rows from `blank`, the others through the
 * trigram lists (or a scan for needles under 3 code points), complemented for the negated ops.
 * @param blank builds a new bitmap of the source's blank rows (AG Grid's isBlank)
 */
function textNode(store: Store, source: TextSource, op: TextOp, value: string, blank: () => Bitmap): Node {
  const p = positive(op);
  const needleText = fold(value);
  let node: Node;
  if (p.blank) {
    node = bitsNode(blank());
  } else if (!needleText.isWellFormed()) {
    // Stored values are well-formed Unicode, so no value contains a lone surrogate.
    node = NONE;
  } else {
    node = positiveText(store, source, p.op, needleText);
  }
  if (!p.negate) return node;
  if (node.kind === "all") return NONE;
  if (node.kind === "status") return maskNode(ALL_STATUS & ~node.mask);
  return bitsNode(notInPlace(ownBits(store, node), store.rowCount));
}

/**
 * A text test on a `text` column through its trigram lists, or null when the column's kind
 * evaluates it instead: the lists answer the operators whose needle has 3+ code points (null
 * rows, folded to "", then never match the positive operator, and pass the negated ones:
 * AG Grid's rule, docs/api.md "Filtering on any column").
 */
function textColumnNode(store: Store, column: StoredColumn, test: ColumnTest): Node | null {
  if (test.op !== "text" || column.trigrams === null || column.folded === null || column.foldedOffsets === null) return null;
  if (test.type === "blank" || test.type === "notBlank") return null;
  if (needleTrigrams(fold(test.value)) === null) return null;
  const source: TextSource = { trigrams: column.trigrams, folded: column.folded, foldedOffsets: column.foldedOffsets };
  return textNode(store, source, test.type, test.value, () => (column.blank as Bitmap).slice());
}

/**
 * contains / equals / startsWith / endsWith of a folded needle over a text source. Needles
 * of 3 or more code points go through the trigram lists (a 3-code-point `contains` is one
 * list, exactly); shorter ones scan the values.
 */
function positiveText(store: Store, source: TextSource, op: "contains" | "equals" | "startsWith" | "endsWith", needleText: string): Node {
  const n = store.rowCount;
  const needle = encoder.encode(needleText);
  if (needle.length === 0 && op !== "equals") return ALL;
  const trigrams = needleTrigrams(needleText);
  if (trigrams !== null) {
    const index = source.trigrams;
    // The needle's trigram lists, as list indexes, smallest list first.
    const lists: number[] = [];
    for (const key of trigrams.keys) {
      const k = findList(index, key);
      if (k < 0) return NONE;
      lists.push(k);
    }
    lists.sort((a, b) => index.counts[a] - index.counts[b]);
    // A needle of 3 code points is exactly its one list ("1111" also has one distinct trigram,
    // but a row with "111" need not hold it).
    if (op === "contains" && trigrams.codePoints === 3 && trigrams.exact) {
      // The list is the answer: referenced, not copied or decoded.
      const k = lists[0];
      const node = bitsNode(null);
      node.count = index.counts[k];
      node.countByStatus = index.statusCounts.slice(k * STATUS_VALUES.length, (k + 1) * STATUS_VALUES.length);
      node.source = { index, k };
      if (isDense(node.count, n)) {
        node.bits = denseBitmap(index, k, n);
        node.shared = true;
      } else node.list = node.source;
      return node;
    }
    return bitsNode(null, verifyRows(source, trigramCandidates(store, index, lists), op, needle, needleText));
  }
  const bits = emptyBitmap(n);
  scanRows(source, n, op, needle, needleText, bits);
  return bitsNode(bits);
}

/**
 * Rows in every one of the given trigram lists (indexes, smallest first), ascending: a
 * superset of the rows containing the needle. Dense lists are tested bit by bit; sparse ones
 * decoded and intersected.
 */
function trigramCandidates(store: Store, index: TrigramIndex, lists: number[]): Uint32Array {
  const n = store.rowCount;
  let rows = listRows(index, lists[0], n);
  for (let l = 1; l < lists.length && rows.length > 0; l++) {
    const k = lists[l];
    if (isDense(index.counts[k], n)) {
      const bits = denseBitmap(index, k, n);
      let j = 0;
      for (let i = 0; i < rows.length; i++) {
        const row = rows[i];
        if (bits[row >>> 5] & (1 << (row & 31))) rows[j++] = row;
      }
      rows = rows.subarray(0, j);
    } else {
      rows = intersectSorted(rows, listRows(index, k, n));
    }
  }
  return rows;
}

/** Intersection of two ascending row lists, galloping through the longer `b`: O(|a| log |b|). */
function intersectSorted(a: Uint32Array, b: Uint32Array): Uint32Array {
  const out = new Uint32Array(a.length);
  let k = 0;
  let lo = 0;
  for (let i = 0; i < a.length && lo < b.length; i++) {
    const x = a[i];
    // gallop: find the first index >= lo with b[index] >= x
    let step = 1;
    let hi = lo;
    while (hi < b.length && b[hi] < x) {
      lo = hi + 1;
      hi += step;
      step <<= 1;
    }
    if (hi > b.length) hi = b.length;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if (b[mid] < x) lo = mid + 1;
      else hi = mid;
    }
    if (lo < b.length && b[lo] === x) out[k++] = x;
  }
  return out.subarray(0, k);
}

/** The candidates (ascending) whose value satisfies op; ascending. */
function verifyRows(source: TextSource, candidates: Uint32Array, op: "contains" | "equals" | "startsWith" | "endsWith", needle: Uint8Array, needleText: string): Uint32Array {
  const out = new Uint32Array(candidates.length);
  let k = 0;
  if (source.ids !== undefined) {
    const ids = source.ids;
    for (let i = 0; i < candidates.length; i++) {
      const row = candidates[i];
      if (textPasses(op, String(ids[row]), needleText)) out[k++] = row;
    }
    return out.subarray(0, k);
  }
  const bytes = source.folded;
  const offsets = source.foldedOffsets;
  for (let i = 0; i < candidates.length; i++) {
    const row = candidates[i];
    if (bytesMatch(bytes, offsets[row], offsets[row + 1], op, needle)) out[k++] = row;
  }
  return out.subarray(0, k);
}

/**
 * Rows whose value is blank: empty or white space only (AG Grid's `isBlank`: null, or a string
 * whose trim() is empty). White space folds to white space, so only rows whose folded value
 * starts with white space or is empty are decoded and checked on the stored value.
 */
function blankRows(store: Store, columnId: StringColumnId): Bitmap {
  const column = store.strings[columnId];
  const bits = emptyBitmap(store.rowCount);
  const folded = column.folded;
  const offsets = column.foldedOffsets;
  for (let row = 0; row < store.rowCount; row++) {
    const start = offsets[row];
    if (start !== offsets[row + 1]) {
      const b = folded[start];
      // ASCII printable other than space (0x20) cannot start a blank value.
      if (b > 0x20 && b < 0x80) continue;
      if (stringValueAt(store, columnId, row).trim() !== "") continue;
    }
    bits[row >>> 5] |= 1 << (row & 31);
  }
  return bits;
}

/** Sets in `bits` every row whose value satisfies op (a needle shorter than 3 code points). */
function scanRows(source: TextSource, n: number, op: "contains" | "equals" | "startsWith" | "endsWith", needle: Uint8Array, needleText: string, bits: Bitmap): void {
  if (source.ids !== undefined) {
    const ids = source.ids;
    for (let row = 0; row < n; row++) if (textPasses(op, String(ids[row]), needleText)) bits[row >>> 5] |= 1 << (row & 31);
    return;
  }
  const bytes = source.folded;
  const offsets = source.foldedOffsets;
  for (let row = 0; row < n; row++) {
    if (bytesMatch(bytes, offsets[row], offsets[row + 1], op, needle)) bits[row >>> 5] |= 1 << (row & 31);
  }
}

// ---------------------------------------------------------------- id

/** First row whose id is >= x (or > x when `strict`), by binary search over ascending ids. */
export function lowerBound(ids: Float64Array, x: number, strict: boolean): number {
  let lo = 0;
  let hi = ids.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (strict ? ids[mid] <= x : ids[mid] < x) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

/** Number op on id: row ranges, as ids ascend with the row number. */
function idNumber(store: Store, op: string, value: number, valueTo?: number): Node {
  const ids = store.ids;
  const n = store.rowCount;
  let lo = 0;
  let hi = n;
  let negate = false;
  switch (op) {
    case "blank":
      return NONE;
    case "notBlank":
      return ALL;
    case "equals":
    case "notEqual":
      lo = lowerBound(ids, value, false);
      hi = lowerBound(ids, value, true);
      negate = op === "notEqual";
      break;
    case "lessThan":
      hi = lowerBound(ids, value, false);
      break;
    case "lessThanOrEqual":
      hi = lowerBound(ids, value, true);
      break;
    case "greaterThan":
      lo = lowerBound(ids, value, true);
      break;
    case "greaterThanOrEqual":
      lo = lowerBound(ids, value, false);
      break;
    case "inRange":
      lo = lowerBound(ids, value, true);
      hi = Math.max(lo, lowerBound(ids, valueTo as number, false));
      break;
  }
  if (!negate && lo === 0 && hi === n) return ALL;
  const bits = emptyBitmap(n);
  if (negate) {
    setRange(bits, 0, lo);
    setRange(bits, hi, n);
  } else {
    setRange(bits, lo, hi);
  }
  return bitsNode(bits);
}

// ---------------------------------------------------------------- set

function setNode(store: Store, column: string, values: string[]): Node {
  if (values.length === 0) return NONE;
  if (column === "status") {
    let mask = 0;
    for (const v of values) {
      const code = (STATUS_VALUES as readonly string[]).indexOf(v.toLowerCase());
      if (code >= 0) mask |= 1 << code;
    }
    return maskNode(mask);
  }
  if (column === "id") {
    const bits = emptyBitmap(store.rowCount);
    for (const v of values) {
      const x = Number(v);
      const lo = lowerBound(store.ids, x, false);
      if (lo < store.rowCount && store.ids[lo] === x) bits[lo >>> 5] |= 1 << (lo & 31);
    }
    return bitsNode(bits);
  }
  return orNodes(
    store,
    [...new Set(values)].map((v) => textOnString(store, column as StringColumnId, "equals", v)),
  );
}

// ---------------------------------------------------------------- search

/**
 * One search term's alternatives (docs/api.md "Global search"): the rows whose `id`, `name`,
 * `email`, `status` or any `text` or `enum` column contains the term, folded; their union is
 * the term's rows. Text columns and `id` answer through their trigram lists.
 */
function searchTermNodes(store: Store, term: string): Node[] {
  const nodes: Node[] = [idText(store, "contains", term), textOnString(store, "name", "contains", term), textOnString(store, "email", "contains", term)];
  nodes.push(maskNode(statusTextMask("contains", term)));
  const needle = fold(term);
  for (const spec of store.schema.columns) {
    const column = store.columns[spec.id];
    if (column === undefined || (spec.kind !== "text" && spec.kind !== "enum")) continue;
    // an enum none of whose values holds the term adds nothing (and no bitmap)
    if (spec.kind === "enum" && !(spec.values ?? []).some((v) => fold(v).includes(needle))) continue;
    const test: ColumnTest = { op: "text", type: "contains", value: term };
    nodes.push(textColumnNode(store, column, test) ?? bitsNode(KINDS[spec.kind].evaluate(column, test, store.rowCount)));
  }
  return nodes;
}


/**
 * The global search's rows: the terms in order of their estimated matches (fewest first, from
 * the trigram lists' sizes), the first evaluated from the indexes, each next one either
 * evaluated and intersected or, once few rows are left, checked on those rows alone.
 */
function searchNode(store: Store, terms: string[]): Node {
  const ordered = terms.map((term) => ({ term, estimate: searchTermEstimate(store, term) })).sort((a, b) => a.estimate - b.estimate);
  let node = orNodes(store, searchTermNodes(store, ordered[0].term));
  for (let t = 1; t < ordered.length; t++) {
    if (node.kind === "status" && node.mask === 0) return NONE;
    const term = ordered[t].term;
    if (node.kind !== "bits") {
      node = andNodes(store, [node, orNodes(store, searchTermNodes(store, term))]);
      continue;
    }
    if (node.count < 0) node.count = node.rows !== null ? node.rows.length : countRows(bitsOf(store, node));
    // the planner's choice: check each row left, or evaluate the term over every row
    if (node.count * searchCheckCost(store, term) > searchTermCost(store, term)) {
      node = andNodes(store, [node, orNodes(store, searchTermNodes(store, term))]);
      continue;
    }
    const check = termChecker(store, term);
    const rows = rowsOfNode(store, node);
    const kept = new Uint32Array(rows.length);
    let k = 0;
    for (let i = 0; i < rows.length; i++) if (check(rows[i])) kept[k++] = rows[i];
    node = bitsNode(null, kept.subarray(0, k));
  }
  return node;
}

/**
 * Whether one row holds the term (docs/api.md "Global search"), checked on the row's values:
 * the same rule the term's evaluation over every row applies (searchTermNodes).
 */
function termChecker(store: Store, term: string): (row: number) => boolean {
  const needleText = fold(term);
  // stored values are well-formed Unicode: a lone surrogate matches nothing
  if (!needleText.isWellFormed()) return () => false;
  const needle = encoder.encode(needleText);
  const statusMask = statusTextMask("contains", term);
  const texts: { folded: Uint8Array; offsets: Uint32Array }[] = [
    { folded: store.strings.name.folded, offsets: store.strings.name.foldedOffsets },
    { folded: store.strings.email.folded, offsets: store.strings.email.foldedOffsets },
  ];
  const enums: { ranks: Uint32Array; passes: Uint8Array }[] = [];
  for (const spec of store.schema.columns) {
    const column = store.columns[spec.id];
    if (column === undefined) continue;
    if (spec.kind === "text" && column.folded !== null && column.foldedOffsets !== null) texts.push({ folded: column.folded, offsets: column.foldedOffsets });
    if (spec.kind === "enum" && column.distinct !== null && column.rankByRow !== null) {
      // rank r ≥ 1 holds code distinct[r - 1], the value values[code - 1]; rank 0 is null
      const values = spec.values ?? [];
      const passes = new Uint8Array(column.distinct.length + 1);
      for (let r = 1; r <= column.distinct.length; r++) passes[r] = fold(values[column.distinct[r - 1] - 1]).includes(needleText) ? 1 : 0;
      enums.push({ ranks: column.rankByRow, passes });
    }
  }
  const ids = store.ids;
  const codes = store.statusCodes;
  const inId = couldBeInId(needleText);
  return (row) => {
    if ((statusMask >>> codes[row]) & 1) return true;
    for (const t of texts) if (bytesMatch(t.folded, t.offsets[row], t.offsets[row + 1], "contains", needle)) return true;
    for (const e of enums) if (e.passes[e.ranks[row]] === 1) return true;
    return inId && textPasses("contains", String(ids[row]), needleText);
  };
}
