/**
 * The global search (docs/api.md "Global search"): every term, folded, must be contained in some
 * searchable column's folded output string. The planner (planner.ts `planSearch`) looked up each
 * term's lists in the search index (store/types.ts `SearchIndex`: one list per n-gram across the
 * columns that hold a value per row; for a search through some of them, an access role's, each
 * column's own lists, united per term) and the enum values that contain it, and ordered the terms
 * by their expected rows; this module runs that plan, pausing between pieces (bits/work.ts):
 *
 * 1. The terms no enum value holds ("pure" terms) are intersected through their lists, fewest
 *    rows first: from the smallest list's rows, each next list tested on them (a dense one bit by
 *    bit; a sparse one decoded and merged, unless checking the candidates costs less); or, when
 *    every list is dense, word by word over their bitmaps (with the terms whose enum values are
 *    partition codes: their list's word ORed with the codes' word).
 * 2. The candidates are then checked on their values for each term its lists do not decide
 *    exactly: a longer term's trigrams (a superset), a list left out, a term an enum value holds
 *    (unless evaluating that term over every row and intersecting costs less).
 *
 * A term of 1–3 code points is one list, so no term scans every row.
 */
import { type Bitmap, emptyBitmap, popcount32 } from "../bits/bitmap.ts";
import { bytesMatch } from "../bits/folded-match.ts";
import { denseBitmap, isDense, listGroups, mergeGroups } from "../bits/trigrams.ts";
import { PIECE, type Work } from "../bits/work.ts";
import { KINDS } from "../kinds/registry.ts";
import type { ColumnTest } from "../query/types.ts";
import { type Store, type TrigramIndex, allCodes, searchIndexColumns } from "../store/types.ts";
import { type Node, type RunContext, type SetNode, andNodes, bitsNode, codesNode, listNode, nodeCount, orNodes, rowsOfNode } from "./evaluate.ts";
import type { TermStep } from "./plan.ts";
import { intersectsList, isPureTerm, joinsWords } from "./planner.ts";
import { maskBits, rowsInMask } from "./row-set.ts";
import { intersectSorted } from "./text.ts";

const encoder = new TextEncoder();

/** One list of the search index, with the term it is of. */
interface TermList {
  term: TermStep;
  index: TrigramIndex;
  k: number;
  count: number;
  dense: boolean;
}

/** True when a folded needle could be part of a number's decimal form (digits, sign, point, exponent). */
function couldBeInNumber(needle: string): boolean {
  return /^[-+0-9.e]+$/.test(needle);
}

/**
 * Whether one row holds the term (docs/api.md "Global search"): an enum value of the row contains
 * it, or one of the row's values in the term's columns does (those the search index covers, or an
 * access role's of them). Exact: the rule the term's lists answer over every row.
 */
export function termTester(store: Store, term: TermStep): (row: number) => boolean {
  const codes = store.partition?.codes ?? null;
  const mask = term.codes;
  const ranked = term.ranked.map((r) => ({ ranks: r.column.rankByRow as Uint32Array, pass: r.pass }));
  const n = store.rowCount;
  // a term's one exact dense list answers its text part bit by bit
  const index = term.gramIndex;
  const bits = term.exact && term.lists.length === 1 && isDense(index.counts[term.lists[0]], n) ? denseBitmap(index, term.lists[0], n) : null;
  const texts: { folded: Uint8Array; offsets: Uint32Array }[] = [];
  let decimals: Float64Array | null = null;
  if (bits === null && (term.lists.length > 0 || term.unions.length > 0)) {
    for (const column of term.columns) {
      if (column.folded !== null && column.foldedOffsets !== null) texts.push({ folded: column.folded, offsets: column.foldedOffsets });
      else if (column.key && column.distinct !== null && couldBeInNumber(term.needle)) decimals = column.distinct;
    }
  }
  const needle = encoder.encode(term.needle);
  const needleText = term.needle;
  const keys = decimals;
  return (row) => {
    if (mask !== 0 && codes !== null && (mask >>> codes[row]) & 1) return true;
    for (const r of ranked) if (r.pass[r.ranks[row]] === 1) return true;
    if (bits !== null) return (bits[row >>> 5] & (1 << (row & 31))) !== 0;
    for (const t of texts) if (bytesMatch(t.folded, t.offsets[row], t.offsets[row + 1], "contains", needle)) return true;
    return keys !== null && String(keys[row]).includes(needleText);
  };
}

/** The rows of `rows` (ascending) that hold the term, checked one by one, a piece at a time; ascending. */
function* checkRows(store: Store, rows: Uint32Array, term: TermStep): Work<Uint32Array> {
  const test = termTester(store, term);
  const kept = new Uint32Array(rows.length);
  let k = 0;
  for (let from = 0; from < rows.length; from += PIECE) {
    const to = Math.min(rows.length, from + PIECE);
    for (let i = from; i < to; i++) if (test(rows[i])) kept[k++] = rows[i];
    yield;
  }
  return kept.subarray(0, k);
}

/**
 * Candidate rows by group (the store's partition codes, as a sparse list keeps them): group g is
 * `rows[starts[g] .. starts[g + 1])`, ascending. Rows of two lists can only meet within one
 * group, so lists intersect group by group, and the groups are merged into one ascending list
 * only once the candidates are few (bits/trigrams.ts `listGroups`).
 */
interface Grouped {
  rows: Uint32Array;
  starts: Uint32Array;
}

/** Keeps the candidates set in `bits`, in place, a piece at a time. */
function* keepInBits(c: Grouped, bits: Bitmap): Work<void> {
  const rows = c.rows;
  const starts = c.starts;
  let k = 0;
  for (let g = 0; g + 1 < starts.length; g++) {
    const from = starts[g];
    const to = starts[g + 1];
    starts[g] = k;
    for (let at = from; at < to; at += PIECE) {
      const end = Math.min(to, at + PIECE);
      for (let i = at; i < end; i++) {
        const row = rows[i];
        if (bits[row >>> 5] & (1 << (row & 31))) rows[k++] = row;
      }
      yield;
    }
  }
  starts[starts.length - 1] = k;
}

/** Keeps the candidates that are rows of `other` (grouped alike), in place, group by group. */
function keepInList(c: Grouped, other: Grouped): void {
  const rows = c.rows;
  const starts = c.starts;
  let k = 0;
  for (let g = 0; g + 1 < starts.length; g++) {
    const mine = rows.subarray(starts[g], starts[g + 1]);
    starts[g] = k;
    if (mine.length === 0 || other.starts[g + 1] === other.starts[g]) continue;
    const kept = intersectSorted(mine, other.rows.subarray(other.starts[g], other.starts[g + 1]));
    rows.set(kept, k);
    k += kept.length;
  }
  starts[starts.length - 1] = k;
}

/** Candidates left, in rows. */
function groupedCount(c: Grouped): number {
  return c.starts[c.starts.length - 1];
}

/**
 * The rows of the intersection of `lists` (fewest rows first, the first sparse), ascending: the
 * first list's rows, each next list tested on them — a dense one bit by bit, a sparse one merged
 * group by group unless checking the candidates costs less (planner.ts `intersectsList`; its
 * term is then added to `unchecked`).
 */
function* intersectLists(store: Store, lists: TermList[], unchecked: TermStep[]): Work<Uint32Array> {
  const n = store.rowCount;
  const c = listGroups(lists[0].index, lists[0].k);
  yield;
  for (let i = 1; i < lists.length && groupedCount(c) > 0; i++) {
    const l = lists[i];
    if (l.dense) yield* keepInBits(c, denseBitmap(l.index, l.k, n));
    else if (intersectsList(store, l.count, groupedCount(c))) {
      keepInList(c, listGroups(l.index, l.k));
      yield;
    } else if (!unchecked.includes(l.term)) unchecked.push(l.term);
  }
  return mergeGroups(c.rows.subarray(0, groupedCount(c)), c.starts);
}

/**
 * Words [from, to) of the AND of the `dense` bitmaps (at least one) and of each pair's OR
 * (`pairs` flattened: a0, b0, a1, b1…), written to `out` from index 0. One tight pass per bitmap
 * (about 0.75 ns a word): a generic loop over the bitmaps per word ran 6 ns a word.
 */
function andWords(dense: Bitmap[], pairs: Bitmap[], from: number, to: number, out: Uint32Array): void {
  const first = dense[0];
  if (dense.length === 1) for (let w = from; w < to; w++) out[w - from] = first[w];
  else {
    const second = dense[1];
    for (let w = from; w < to; w++) out[w - from] = first[w] & second[w];
  }
  for (let i = 2; i < dense.length; i++) {
    const a = dense[i];
    for (let w = from; w < to; w++) out[w - from] &= a[w];
  }
  for (let j = 0; j < pairs.length; j += 2) {
    const a = pairs[j];
    const b = pairs[j + 1];
    for (let w = from; w < to; w++) out[w - from] &= a[w] | b[w];
  }
}

/** A growing list of rows: `rows[0 .. k)`. */
interface RowList {
  rows: Uint32Array;
  k: number;
}

/**
 * Appends to `list` the rows set in `words` (the first `length`, word i being word `base + i` of
 * the bitmap); returns false, leaving the list partly appended, when it would pass `limit` rows
 * (the caller then keeps a bitmap instead).
 */
function appendRows(words: Uint32Array, length: number, base: number, list: RowList, limit: number): boolean {
  let rows = list.rows;
  let k = list.k;
  for (let i = 0; i < length; i++) {
    let x = words[i];
    while (x !== 0) {
      if (k >= rows.length) {
        if (k >= limit) return false;
        const grown = new Uint32Array(Math.min(limit, rows.length * 2));
        grown.set(rows);
        rows = grown;
        list.rows = rows;
      }
      // lowest set bit: its index is 31 - clz32(x & -x)
      const low = x & -x;
      rows[k++] = ((base + i) << 5) | (31 - Math.clz32(low));
      x ^= low;
    }
  }
  list.k = k;
  return true;
}

/** The words of one piece of a word-by-word AND ({@link wordsAnd}): one array for the process (a fresh one per search was 256 KiB of garbage each). */
const pieceWords = new Uint32Array(PIECE);

/**
 * The AND of dense bitmaps and of ORs of pairs, word by word, a piece of words at a time: the
 * rows as a list while they are few (at most 1/32 of the rows, the size at which a list and a
 * bitmap cost the same), else a bitmap, its rows counted as its words are written.
 */
function* wordsAnd(store: Store, dense: Bitmap[], pairs: Bitmap[]): Work<Node> {
  const n = store.rowCount;
  const words = (n + 31) >>> 5;
  // shared by every search: it is filled and read between two pauses, never held across one
  const piece = pieceWords;
  const limit = Math.floor(n / 32);
  let list: RowList | null = { rows: new Uint32Array(Math.min(limit, 1024)), k: 0 };
  let bits: Bitmap | null = null;
  // the bitmap's rows, counted word by word as the AND writes them (no second pass for the total)
  let count = 0;
  for (let from = 0; from < words; from += PIECE) {
    const to = Math.min(words, from + PIECE);
    andWords(dense, pairs, from, to, piece);
    if (list !== null && !appendRows(piece, to - from, from, list, limit)) {
      // too many for a list: the words so far again, as a bitmap
      bits = emptyBitmap(n);
      for (let w = 0; w < from; w += PIECE) andWords(dense, pairs, w, Math.min(from, w + PIECE), bits.subarray(w));
      for (let w = 0; w < from; w++) if (bits[w] !== 0) count += popcount32(bits[w]);
      list = null;
    }
    if (bits !== null) {
      bits.set(piece.subarray(0, to - from), from);
      for (let i = 0; i < to - from; i++) if (piece[i] !== 0) count += popcount32(piece[i]);
    }
    yield;
  }
  if (bits !== null || list === null) {
    const node = bitsNode(store, bits);
    node.count = count;
    return node;
  }
  const node = bitsNode(store, null, list.rows.slice(0, list.k));
  node.count = list.k;
  return node;
}

/** The lists of the pure terms, fewest rows first, each (index, list) once. */
function pureLists(store: Store, terms: TermStep[]): TermList[] {
  const out: TermList[] = [];
  for (const term of terms) {
    const index = term.gramIndex;
    for (const k of term.lists) {
      if (out.some((l) => l.index === index && l.k === k)) continue;
      out.push({ term, index, k, count: index.counts[k], dense: isDense(index.counts[k], store.rowCount) });
    }
  }
  return out.sort((a, b) => a.count - b.count);
}

/** Rows of a term's lists intersected, checked on their values when they are a superset; ascending. */
function* termListRows(store: Store, term: TermStep): Work<Uint32Array> {
  const lists = pureLists(store, [term]);
  const unchecked: TermStep[] = [];
  let rows: Uint32Array;
  if (lists[0].dense) {
    const node = yield* wordsAnd(
      store,
      lists.map((l) => denseBitmap(l.index, l.k, store.rowCount)),
      [],
    );
    rows = rowsOfNode(store, node as SetNode);
  } else rows = yield* intersectLists(store, lists, unchecked);
  return term.exact && unchecked.length === 0 ? rows : yield* checkRows(store, rows, { ...term, codes: 0, ranked: [] });
}

/** A term over every row: its lists' rows (of each column of its `unions`), and its enum values' rows, united. */
function* termNode(ctx: RunContext, term: TermStep): Work<Node> {
  const store = ctx.store;
  const parts: Node[] = [];
  const own = term.unions.map((u) => ({ ...term, gramIndex: u.index, lists: u.lists, columns: [u.column], unions: [] }));
  for (const t of term.lists.length > 0 ? [term, ...own] : own) {
    if (t.exact && t.lists.length === 1) parts.push(listNode(store, { index: t.gramIndex, k: t.lists[0] }));
    else parts.push(bitsNode(store, null, yield* termListRows(store, t)));
  }
  if (term.codes !== 0) parts.push(codesNode(store, term.codes));
  const contains: ColumnTest = { op: "text", type: "contains", value: term.term };
  for (const r of term.ranked) parts.push(bitsNode(store, yield* KINDS[r.column.spec.kind].evaluate(r.column, contains, store.rowCount)));
  if (parts.length === 0) return { kind: "codes", mask: 0 };
  return orNodes(store, parts);
}

/** The rows of any node, ascending: a set's, or every row of its partition codes. */
function rowsOfAny(store: Store, node: Node): Uint32Array {
  if (node.kind === "bits") return rowsOfNode(store, node);
  const mask = node.kind === "all" ? allCodes(store) : node.mask;
  const rows = new Uint32Array(rowsInMask(store, mask));
  const codes = store.partition?.codes;
  let k = 0;
  for (let row = 0; row < store.rowCount && k < rows.length; row++) if (codes === undefined || (mask >>> codes[row]) & 1) rows[k++] = row;
  return rows;
}

/**
 * Runs a search's terms (planner.ts `planSearch`; see the module comment), pausing between
 * pieces. With analyze, each term records the rows left once it was applied.
 */
export function* evaluateSearch(ctx: RunContext, terms: TermStep[]): Work<Node> {
  const store = ctx.store;
  const n = store.rowCount;
  if (terms.length === 0) return { kind: "all" };
  const started = ctx.analyze ? performance.now() : 0;
  const pure = terms.filter(isPureTerm);
  const checks: TermStep[] = [];
  let node: Node;
  if (pure.length > 0) {
    const lists = pureLists(store, pure);
    if (terms.length === 1 && pure[0].exact && lists.length === 1) {
      // one term, one list: its rows referenced as they are (counted per partition code for free)
      node = listNode(store, { index: lists[0].index, k: lists[0].k });
    } else if (lists[0].dense) {
      const joined = terms.filter((t) => joinsWords(store, t));
      const pairs: Bitmap[] = [];
      for (const t of joined) pairs.push(denseBitmap(t.gramIndex, t.lists[0], n), maskBits(store, t.codes));
      node = yield* wordsAnd(
        store,
        lists.map((l) => denseBitmap(l.index, l.k, n)),
        pairs,
      );
      for (const t of terms) if (!isPureTerm(t) && !joined.includes(t)) checks.push(t);
    } else {
      node = bitsNode(store, null, yield* intersectLists(store, lists, checks));
      for (const t of terms) if (!isPureTerm(t)) checks.push(t);
    }
    for (const t of pure) if (!t.exact && !checks.includes(t)) checks.push(t);
  } else {
    node = yield* termNode(ctx, terms[0]);
    checks.push(...terms.slice(1));
  }
  if (ctx.analyze) {
    const rows = nodeCount(store, node);
    const ms = performance.now() - started;
    for (const t of terms) {
      // a term's lists and enum values are read as they are: each gives its rows, in no time of its own
      for (const child of t.children) {
        child.rows = child.estimatedRows;
        child.ms = 0;
      }
      if (checks.includes(t)) continue;
      t.rows = rows;
      t.ms = ms;
    }
  }
  checks.sort((a, b) => terms.indexOf(a) - terms.indexOf(b));
  for (const term of checks) {
    const begun = ctx.analyze ? performance.now() : 0;
    const left = nodeCount(store, node);
    if (left > 0) {
      // the planner chose (planner.ts `planSearch`): evaluated over every row and ANDed in, or checked on the rows left
      if (term.strategy === "list") node = andNodes(store, [node, yield* termNode(ctx, term)]);
      else node = bitsNode(store, null, yield* checkRows(store, rowsOfAny(store, node), term));
    }
    if (ctx.analyze) {
      term.rows = nodeCount(store, node);
      term.ms = performance.now() - begun;
    }
  }
  // a search every term of which every row holds: every row (the planner drops such terms)
  return node.kind === "codes" && node.mask === allCodes(store) ? { kind: "all" } : node;
}
