/**
 * Runs a plan's filter steps (plan.ts `FilterStep`): each step gives a row set — every row, the
 * rows of some partition codes, or a match set held the cheapest way the step has it (a posting
 * list referenced, a row list, a bitmap) — and AND, OR and NOT combine them with as little work
 * as their forms allow. What each step reads was decided by the planner; nothing here chooses
 * an index.
 */
import { type Bitmap, andInPlace, andInto, bitmapOfRows, countRows, emptyBitmap, notInPlace, orInPlace, rowsOfBitmap } from "../bits/bitmap.ts";
import { denseBitmap, isDense, listRows, setListBits } from "../bits/trigrams.ts";
import { KINDS } from "../kinds/registry.ts";
import { type Store, allCodes, partitionCounts } from "../store/types.ts";
import type { FilterStep, TermStep } from "./plan.ts";
import { type FilterResult, type ListRef, type MatchSet, codeBitmaps, keepCodes, maskBitmap, singleCode } from "./row-set.ts";
import { evaluateSearch } from "./search.ts";
import { trigramRows } from "./text.ts";

/**
 * Intermediate result: the rows of a bitmap, of exact ascending rows or of a sparse posting list
 * (at least one is set) whose partition code is in `mask`. `rows` are always exact; `bits` are
 * exact unless `exact` is false (a shared posting-list bitmap under a mask). A bitmap here is the
 * node's own unless `shared` (a view of a dense posting list), so it may be changed in place
 * only then.
 */
export type SetNode = {
  kind: "bits";
  bits: Bitmap | null;
  rows: Uint32Array | null;
  list: ListRef | null;
  mask: number;
  exact: boolean;
  shared: boolean;
  /** The number of rows, when known without counting; -1 otherwise. */
  count: number;
  /** Rows per partition code, when known without counting. */
  countByCode: Uint32Array | null;
  /** The posting list the node's rows are (before `mask`), when they are one. */
  source: ListRef | null;
};

/** A step's rows: every row, the rows of a mask of partition codes, or a set. */
export type Node = { kind: "all" } | { kind: "codes"; mask: number } | SetNode;

/** What running steps needs: the store, and whether to record each step's rows and time (explain's analyze). */
export interface RunContext {
  store: Store;
  analyze: boolean;
}

const ALL: Node = { kind: "all" };

/** A node of the rows of `mask`'s codes (every row when it holds every code). */
export function codesNode(store: Store, mask: number): Node {
  const all = allCodes(store);
  return (mask & all) === all ? ALL : { kind: "codes", mask: mask & all };
}

/** A set node of a bitmap (exact) and/or rows. */
export function bitsNode(store: Store, bits: Bitmap | null, rows: Uint32Array | null = null): SetNode {
  return { kind: "bits", bits, rows, list: null, mask: allCodes(store), exact: true, shared: false, count: -1, countByCode: null, source: null };
}

/** A set node's exact rows ascending, decoded or built from its bitmap when it has none. */
export function rowsOfNode(store: Store, node: SetNode): Uint32Array {
  if (node.rows === null) {
    if (node.list !== null) node.rows = listRows(node.list.index, node.list.k, store.rowCount, Number.POSITIVE_INFINITY, node.mask);
    else node.rows = rowsOfBitmap(bitsOf(store, node));
  }
  return node.rows;
}

/** A set node's exact bitmap (read-only), built from its rows or its mask when needed. */
export function bitsOf(store: Store, node: SetNode): Bitmap {
  if (node.bits !== null && !node.exact) {
    const maps = codeBitmaps(store);
    const single = singleCode(node.mask);
    const exact = emptyBitmap(store.rowCount);
    andInto(exact, node.bits, single >= 0 ? maps[single] : maskBitmap(store, node.mask));
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

/** The rows of one posting list (all its groups), referenced: counted from its counts, a dense one as a shared view. */
export function listNode(store: Store, ref: ListRef): SetNode {
  const index = ref.index;
  const groups = partitionCounts(store).length;
  const node = bitsNode(store, null);
  node.count = index.counts[ref.k];
  node.countByCode = index.groupCounts.slice(ref.k * groups, (ref.k + 1) * groups);
  node.source = ref;
  if (isDense(node.count, store.rowCount)) {
    node.bits = denseBitmap(index, ref.k, store.rowCount);
    node.shared = true;
  } else node.list = ref;
  return node;
}

/** Runs one filter step (and its children), recording its rows and time when analyzing. */
export function runStep(ctx: RunContext, step: FilterStep): Node {
  if (!ctx.analyze) return evalStep(ctx, step);
  const started = performance.now();
  const node = evalStep(ctx, step);
  step.ms = performance.now() - started;
  step.rows = nodeCount(ctx.store, node);
  return node;
}

/** The rows of a node, counted (a pass over a bitmap when not known). */
export function nodeCount(store: Store, node: Node): number {
  if (node.kind === "all") return store.rowCount;
  if (node.kind === "codes") {
    const counts = partitionCounts(store);
    let rows = 0;
    for (let c = 0; c < counts.length; c++) if ((node.mask >>> c) & 1) rows += counts[c];
    return rows;
  }
  if (node.count < 0) node.count = node.rows !== null ? node.rows.length : countRows(bitsOf(store, node));
  return node.count;
}

function evalStep(ctx: RunContext, step: FilterStep): Node {
  const store = ctx.store;
  switch (step.op) {
    case "all":
      return ALL;
    case "none":
      return { kind: "codes", mask: 0 };
    case "cached":
      return resultNode(store, step.result);
    case "partition":
      return codesNode(store, step.mask);
    case "postingList":
      return listNode(store, { index: step.list, k: step.k });
    case "trigrams":
      return bitsNode(store, null, trigramRows(store, step.source, step.lists, step.textOp, step.needle));
    case "values":
    case "scan":
      return bitsNode(store, KINDS[step.stored.spec.kind].evaluate(step.stored, step.test, store.rowCount));
    case "blank":
      return bitsNode(store, (step.stored.blank as Bitmap).slice());
    case "not":
      return notNode(store, runStep(ctx, step.children[0]));
    case "and":
      return andNodes(store, step.children.map((c) => runStep(ctx, c)));
    case "or":
      return orNodes(store, step.children.map((c) => runStep(ctx, c)));
    case "search":
      return evaluateSearch(ctx, step.children as TermStep[], step.searched);
  }
}

/** A cached filter result as a node (the match set's parts shared, read-only). */
function resultNode(store: Store, result: FilterResult): Node {
  if (result.kind === "all") return ALL;
  if (result.kind === "codes") return { kind: "codes", mask: result.mask };
  const set = result.set;
  return {
    kind: "bits",
    bits: set.bits,
    rows: set.rows,
    list: set.list,
    mask: set.mask,
    exact: set.bitsExact,
    // never changed in place: it belongs to the cache
    shared: true,
    count: set.count,
    countByCode: set.countByCode,
    source: null,
  };
}

/** Every row a node does not hold. */
function notNode(store: Store, node: Node): Node {
  if (node.kind === "all") return { kind: "codes", mask: 0 };
  if (node.kind === "codes") return codesNode(store, allCodes(store) & ~node.mask);
  return bitsNode(store, notInPlace(ownBits(store, node), store.rowCount));
}

/** The intersection of nodes: masks ANDed, sets intersected (a posting list under a mask counted from its groups, no pass). */
export function andNodes(store: Store, nodes: Node[]): Node {
  const all = allCodes(store);
  let mask = all;
  const sets: SetNode[] = [];
  for (const node of nodes) {
    if (node.kind === "all") continue;
    if (node.kind === "codes") {
      mask &= node.mask;
      if (mask === 0) return { kind: "codes", mask: 0 };
      continue;
    }
    sets.push(node);
  }
  if (sets.length === 0) return codesNode(store, mask);
  let set: SetNode;
  if (sets.length === 1) {
    set = sets[0];
  } else {
    // the smallest known set's rows tested against the others when they are few, else bitmaps
    const bits = ownBits(store, sets[0]);
    for (let i = 1; i < sets.length; i++) andInPlace(bits, bitsOf(store, sets[i]));
    set = bitsNode(store, bits);
  }
  if ((mask & all) === all) return set;
  const single = singleCode(mask);
  const source = set.source;
  const groups = partitionCounts(store).length;
  if (source !== null && set.rows === null && (set.list !== null || set.shared)) {
    // One posting list under a partition mask: counted from its per-code counts, no pass. A
    // sparse list decodes just those groups later; a dense one stays a shared view, and walks
    // test the code (or walk that code's slice of a partitioned order).
    const node = bitsNode(store, set.bits);
    node.list = set.list;
    node.source = source;
    node.shared = set.shared;
    node.mask = set.mask & mask;
    node.exact = set.bits === null || (node.mask & all) === all;
    node.countByCode = new Uint32Array(groups);
    node.count = 0;
    for (let c = 0; c < groups; c++) {
      if ((node.mask >>> c) & 1) {
        node.countByCode[c] = source.index.groupCounts[source.k * groups + c];
        node.count += node.countByCode[c];
      }
    }
    return node;
  }
  if (set.bits === null) {
    // filter the exact row list by code: O(rows) instead of O(rowCount)
    return bitsNode(store, null, keepCodes(store, set.rows as Uint32Array, mask));
  }
  // one pass: AND with the codes' rows, counting as it goes
  const maps = codeBitmaps(store);
  const codeBits = single >= 0 ? maps[single] : maskBitmap(store, mask);
  const out = emptyBitmap(store.rowCount);
  const count = andInto(out, bitsOf(store, set), codeBits);
  const node = bitsNode(store, out);
  node.count = count;
  if (single >= 0) {
    node.countByCode = new Uint32Array(groups);
    node.countByCode[single] = count;
  }
  return node;
}

/** The union of nodes: masks ORed, sparse sets merged as rows, the rest as a bitmap. */
export function orNodes(store: Store, nodes: Node[]): Node {
  const merged = mergeSparse(store, nodes);
  if (merged !== null) return merged;
  const all = allCodes(store);
  let mask = 0;
  let bits: Bitmap | null = null;
  for (const node of nodes) {
    if (node.kind === "all") return ALL;
    if (node.kind === "codes") {
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
  if ((mask & all) === all) return ALL;
  if (bits === null) return codesNode(store, mask);
  if (mask !== 0) orInPlace(bits, maskBitmap(store, mask));
  return bitsNode(store, bits);
}

/**
 * The union of set nodes that are all row lists or sparse posting lists (nodes of no row aside)
 * holding together under 1/32 of the rows, as one sorted row list: a sort of their rows instead
 * of a bitmap over every row (allocated, filled, counted). Null otherwise.
 */
function mergeSparse(store: Store, nodes: Node[]): Node | null {
  let total = 0;
  for (const node of nodes) {
    if (node.kind === "codes" && node.mask === 0) continue;
    if (node.kind !== "bits" || node.bits !== null) return null;
    if (node.rows !== null) total += node.rows.length;
    else if (node.list !== null && node.count >= 0) total += node.count;
    else return null;
  }
  if (total * 32 > store.rowCount) return null;
  const rows = new Uint32Array(total);
  let at = 0;
  for (const node of nodes) {
    if (node.kind !== "bits") continue;
    const part = rowsOfNode(store, node);
    rows.set(part, at);
    at += part.length;
  }
  rows.subarray(0, at).sort();
  let k = 0;
  for (let i = 0; i < at; i++) if (k === 0 || rows[i] !== rows[k - 1]) rows[k++] = rows[i];
  return bitsNode(store, null, rows.subarray(0, k));
}

/** A node as a filter result: every row, a mask, or a match set (its count found, the rest lazily). */
export function resultOf(store: Store, node: Node): FilterResult {
  if (node.kind === "all") return node;
  if (node.kind === "codes") return (node.mask & allCodes(store)) === allCodes(store) ? { kind: "all" } : node;
  const count = nodeCount(store, node);
  const set: MatchSet = {
    count,
    countByCode: node.countByCode,
    mask: node.mask,
    bits: node.bits,
    bitsExact: node.exact,
    sharedBits: node.shared,
    rows: node.rows,
    list: node.list,
  };
  return { kind: "set", set };
}
