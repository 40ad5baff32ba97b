/**
 * Character trigram posting lists over a folded string column: the index that turns a
 * substring filter into one posting list (a needle of 3 characters) or an intersection of a
 * few. A trigram is 3 consecutive code points of a folded value, so a 3-letter needle in any
 * script (Cyrillic and Greek letters are 2 bytes in UTF-8, CJK 3) is exactly one list. Dense
 * lists are bitmaps and sparse ones LEB128 gaps (trigram-index.ts `TrigramIndex`).
 */
import { rowsOfBitmap } from "./bitmap.ts";
import type { TrigramIndex } from "./trigram-index.ts";

/**
 * The number of groups S of an index (the store's partition codes; 1 without a partition): each
 * list is counted, and a sparse one stored, per group. 1 for an index without lists.
 */
export function groupsOf(index: TrigramIndex): number {
  return index.keys.length === 0 ? 1 : index.groupCounts.length / index.keys.length;
}

/**
 * Code points up to this one are keyed exactly; higher ones (beyond the emoji planes: rare
 * CJK extensions, private use) all share this slot, so lists holding them are supersets that
 * a query verifies against the bytes.
 */
export const MAX_KEY_CODE_POINT = 0x1ffff;

/** Multipliers placing three 17-bit code points in one key below 2^51 (exact in a double). */
const FIRST = 2 ** 34;
const SECOND = 2 ** 17;

/**
 * The key of the trigram (c1, c2, c3): `c1 * 2^34 + c2 * 2^17 + c3`, each code point clamped
 * to {@link MAX_KEY_CODE_POINT}. An integer below 2^51.
 */
export function trigramKey(c1: number, c2: number, c3: number): number {
  const m = MAX_KEY_CODE_POINT;
  return (c1 < m ? c1 : m) * FIRST + (c2 < m ? c2 : m) * SECOND + (c3 < m ? c3 : m);
}

/** A needle's trigram keys (deduplicated, in needle order), and whether each key is exact. */
export interface NeedleTrigrams {
  keys: number[];
  /** The needle's length in code points (3 or more): only a 3-code-point needle is one list. */
  codePoints: number;
  /** False when a code point above {@link MAX_KEY_CODE_POINT} made a key shared. */
  exact: boolean;
}

/**
 * The trigram keys of a folded needle, or null when it has fewer than 3 code points (then
 * no list covers it and the query scans).
 */
export function needleTrigrams(needle: string): NeedleTrigrams | null {
  const cps: number[] = [];
  for (const ch of needle) cps.push(ch.codePointAt(0) as number);
  if (cps.length < 3) return null;
  const keys: number[] = [];
  let exact = true;
  for (let i = 0; i + 2 < cps.length; i++) {
    const key = trigramKey(cps[i], cps[i + 1], cps[i + 2]);
    if (!keys.includes(key)) keys.push(key);
  }
  for (const cp of cps) if (cp >= MAX_KEY_CODE_POINT) exact = false;
  return { keys, codePoints: cps.length, exact };
}

/**
 * True when a list of `count` rows out of `rowCount` is stored as a bitmap: when the bitmap
 * (rowCount / 8 bytes) is smaller than the list as 4-byte row numbers.
 */
export function isDense(count: number, rowCount: number): boolean {
  return count * 32 > rowCount;
}

/** Bytes of `x` as unsigned LEB128. */
function leb128Size(x: number): number {
  return x < 0x80 ? 1 : x < 0x4000 ? 2 : x < 0x200000 ? 3 : x < 0x10000000 ? 4 : 5;
}

/** All-ASCII trigrams index this table directly: `(c1 << 14) | (c2 << 7) | c3`. */
const ASCII_SPACE = 1 << 21;

/** Per process: list id + 1 of each all-ASCII trigram during a build; left zeroed after it. */
let asciiScratch: Int32Array | null = null;

/**
 * Open-addressing hash table from trigram key to list id, for trigrams with a non-ASCII code
 * point (the all-ASCII ones use a direct table).
 */
class KeyTable {
  keys = new Float64Array(1 << 12);
  /** List id + 1; 0 = empty slot. */
  ids = new Int32Array(1 << 12);
  size = 0;

  /** Slot of `key` (its own or the empty one where it would go). */
  slot(c1: number, c2: number, c3: number, key: number): number {
    const mask = this.keys.length - 1;
    let h = Math.imul(c1, 0x9e3779b1) ^ Math.imul(c2 + 0x7f4a7c15, 0x85ebca77) ^ Math.imul(c3, 0xc2b2ae3d);
    h = (h ^ (h >>> 15)) & mask;
    const ids = this.ids;
    const keys = this.keys;
    while (ids[h] !== 0 && keys[h] !== key) h = (h + 1) & mask;
    return h;
  }

  /** Puts `id` at an empty slot found by {@link slot}; grows at half load. */
  insert(slot: number, key: number, id: number): void {
    this.keys[slot] = key;
    this.ids[slot] = id + 1;
    if (++this.size * 2 > this.keys.length) this.grow();
  }

  private grow(): void {
    const oldKeys = this.keys;
    const oldIds = this.ids;
    this.keys = new Float64Array(oldKeys.length * 2);
    this.ids = new Int32Array(oldIds.length * 2);
    for (let s = 0; s < oldKeys.length; s++) {
      if (oldIds[s] === 0) continue;
      const key = oldKeys[s];
      const c1 = Math.floor(key / FIRST);
      const c2 = Math.floor(key / SECOND) % SECOND;
      const c3 = key % SECOND;
      const slot = this.slot(c1, c2, c3, key);
      this.keys[slot] = key;
      this.ids[slot] = oldIds[s];
    }
  }
}

/** A copy of `a` with room for `capacity` elements. */
function grown<T extends Float64Array | Uint32Array>(a: T, capacity: number): T {
  const out = new (a.constructor as new (n: number) => T)(capacity);
  out.set(a);
  return out;
}

/** The bytes of one value per row, UTF-8: row r's value is `bytes[offsets[r] .. offsets[r+1])`; offsets of length rowCount + 1. */
export interface GramSource {
  bytes: Uint8Array;
  offsets: Uint32Array;
}

/**
 * The key of an n-gram (n = 1, 2 or 3 code points, each clamped to {@link MAX_KEY_CODE_POINT}):
 * the code point itself, `c1 * 2^17 + c2`, or {@link trigramKey}. Keys of one index all have the
 * same n.
 */
export function gramKey(cps: readonly number[]): number {
  const m = MAX_KEY_CODE_POINT;
  let key = 0;
  for (const cp of cps) key = key * SECOND + (cp < m ? cp : m);
  return key;
}

/**
 * Builds the trigram index of `rowCount` folded strings packed as valid UTF-8 in
 * `bytes`/`offsets` (value r is `bytes[offsets[r] .. offsets[r+1])`): {@link buildGramIndex} of
 * one source with n = 3.
 * @throws RangeError as {@link buildGramIndex}
 */
export function buildTrigramIndex(bytes: Uint8Array, offsets: Uint32Array, rowCount: number, groups: { codes: Uint8Array; count: number } | null = null): TrigramIndex {
  return buildGramIndex([{ bytes, offsets }], rowCount, 3, groups);
}

/**
 * Builds the n-gram index (n = 1, 2 or 3 code points; {@link gramKey}) of `rowCount` rows, each
 * row the values of every source at that row (valid UTF-8; an n-gram never spans two values):
 * every distinct n-gram of a row's values lists the row once. Each list's rows are counted per
 * group (the rows' partition codes), and a sparse list keeps the rows of each group apart (code
 * 0's rows, then code 1's…, each gap-encoded from 0), so that a filter on the partition column
 * combined with a needle is one group: counted without a pass and decoded without testing a row.
 *
 * Two passes over the bytes, decoding code points on the fly. The first gives each distinct
 * n-gram a list id (all-ASCII ones through a direct 2^21 table kept per process, the others
 * through a hash table) and counts its rows and the LEB128 bytes of its gaps per group code; the
 * second writes each row straight into its list: a bit of a dense list's bitmap, or the gap at
 * the cursor of its group. Nothing per posting is held in between, so memory is the output plus
 * some 40 bytes per distinct n-gram.
 * @param groups each row's group (partition code; length rowCount) and the number of groups S,
 *   or null for one group
 * @throws RangeError when the postings exceed 2^32 entries or the gaps 4 GiB.
 */
export function buildGramIndex(sources: readonly GramSource[], rowCount: number, n: 1 | 2 | 3, groups: { codes: Uint8Array; count: number } | null = null): TrigramIndex {
  asciiScratch ??= new Int32Array(ASCII_SPACE);
  const ascii = asciiScratch;
  const codes = groups?.codes ?? new Uint8Array(rowCount);
  const GROUPS = groups?.count ?? 1;
  // the code points an n-gram's key is made of besides the last: 0 stands for "not part of it"
  const uses1 = n === 3;
  const uses2 = n >= 2;
  const table = new KeyTable();
  let capacity = 1024;
  // Per list id: its key, 1 + the last row counted (0: none yet).
  let listKeys = new Float64Array(capacity);
  let lastRow = new Uint32Array(capacity);
  // Per list id and group (at id * GROUPS + code): rows, gap bytes, 1 + the last row.
  let groupRows = new Uint32Array(capacity * GROUPS);
  let gapBytes = new Float64Array(capacity * GROUPS);
  let groupLast = new Uint32Array(capacity * GROUPS);
  let lists = 0;
  try {
    let total = 0;
    // Pass 1: list ids, counts and gap sizes. The decoding is repeated in pass 2 on purpose:
    // a shared callback would cost a call per code point, one loop run twice with a pass
    // flag made the 10M index step ~20% slower (17-19 s -> 21-22 s, same snapshot bytes), and
    // one decoder writing each row's list ids to a buffer both passes read made a 300k-row
    // build ~10% slower (the ids written and read again).
    for (let row = 0; row < rowCount; row++) {
      const mark = row + 1;
      const group = codes[row];
      for (let s = 0; s < sources.length; s++) {
        const bytes = sources[s].bytes;
        const end = sources[s].offsets[row + 1];
        let i = sources[s].offsets[row];
        // code points seen before the current one in this value (at most n - 1 kept)
        let have = 0;
        let c1 = 0;
        let c2 = 0;
        while (i < end) {
          const b = bytes[i];
          let c3: number;
          if (b < 0x80) {
            c3 = b;
            i++;
          } else if (b < 0xe0) {
            c3 = ((b & 0x1f) << 6) | (bytes[i + 1] & 0x3f);
            i += 2;
          } else if (b < 0xf0) {
            c3 = ((b & 0x0f) << 12) | ((bytes[i + 1] & 0x3f) << 6) | (bytes[i + 2] & 0x3f);
            i += 3;
          } else {
            c3 = ((b & 0x07) << 18) | ((bytes[i + 1] & 0x3f) << 12) | ((bytes[i + 2] & 0x3f) << 6) | (bytes[i + 3] & 0x3f);
            if (c3 > MAX_KEY_CODE_POINT) c3 = MAX_KEY_CODE_POINT;
            i += 4;
          }
          if (have >= n - 1) {
            const a1 = uses1 ? c1 : 0;
            const a2 = uses2 ? c2 : 0;
            let id: number;
            let a = -1;
            let slot = -1;
            if ((a1 | a2 | c3) < 0x80) {
              a = (a1 << 14) | (a2 << 7) | c3;
              id = ascii[a] - 1;
            } else {
              slot = table.slot(a1, a2, c3, a1 * FIRST + a2 * SECOND + c3);
              id = table.ids[slot] - 1;
            }
            if (id < 0) {
              id = lists;
              const key = a1 * FIRST + a2 * SECOND + c3;
              if (a >= 0) ascii[a] = id + 1;
              else table.insert(slot, key, id);
              if (lists === capacity) {
                capacity *= 2;
                listKeys = grown(listKeys, capacity);
                lastRow = grown(lastRow, capacity);
                groupRows = grown(groupRows, capacity * GROUPS);
                gapBytes = grown(gapBytes, capacity * GROUPS);
                groupLast = grown(groupLast, capacity * GROUPS);
              }
              listKeys[lists++] = key;
            }
            if (lastRow[id] !== mark) {
              lastRow[id] = mark;
              const g = id * GROUPS + group;
              const prev = groupLast[g];
              gapBytes[g] += leb128Size(prev === 0 ? row : row - prev + 1);
              groupLast[g] = mark;
              groupRows[g]++;
              total++;
            }
          }
          c1 = c2;
          c2 = c3;
          have++;
        }
      }
    }
    if (total > 0xffffffff) throw new RangeError("n-gram postings exceed 2^32 entries");

    // Lists in key order; each gets its place: a bitmap slot or runs of gap bytes.
    const order = new Uint32Array(lists);
    for (let id = 0; id < lists; id++) order[id] = id;
    order.sort((x, y) => listKeys[x] - listKeys[y]);
    const words = (rowCount + 31) >>> 5;
    const dense = new Uint8Array(lists);
    let denseLists = 0;
    let gapTotal = 0;
    for (let id = 0; id < lists; id++) {
      lastRow[id] = 0;
      let count = 0;
      for (let c = 0; c < GROUPS; c++) count += groupRows[id * GROUPS + c];
      if (isDense(count, rowCount)) {
        dense[id] = 1;
        denseLists++;
      } else for (let c = 0; c < GROUPS; c++) gapTotal += gapBytes[id * GROUPS + c];
    }
    if (gapTotal > 0xffffffff) throw new RangeError("n-gram gaps exceed 4 GiB");
    const keys = new Float64Array(lists);
    const listCounts = new Uint32Array(lists);
    const groupCounts = new Uint32Array(lists * GROUPS);
    const refs = new Uint32Array(lists * GROUPS);
    const bitmaps = new Uint32Array(denseLists * words);
    const gaps = new Uint8Array(gapTotal);
    // Per list id: its bitmap's first word; per list id and group: the group's next gap byte.
    const base = new Float64Array(lists);
    const cursor = new Float64Array(lists * GROUPS);
    let slots = 0;
    let at = 0;
    for (let k = 0; k < lists; k++) {
      const id = order[k];
      keys[k] = listKeys[id];
      if (dense[id] === 1) base[id] = slots++ * words;
      for (let c = 0; c < GROUPS; c++) {
        const g = id * GROUPS + c;
        listCounts[k] += groupRows[g];
        groupCounts[k * GROUPS + c] = groupRows[g];
        groupLast[g] = 0;
        if (dense[id] === 1) refs[k * GROUPS + c] = base[id];
        else {
          cursor[g] = at;
          refs[k * GROUPS + c] = at;
          at += gapBytes[g];
        }
      }
    }

    // Pass 2: each row into its lists.
    for (let row = 0; row < rowCount; row++) {
      const mark = row + 1;
      const group = codes[row];
      for (let s = 0; s < sources.length; s++) {
        const bytes = sources[s].bytes;
        const end = sources[s].offsets[row + 1];
        let i = sources[s].offsets[row];
        let have = 0;
        let c1 = 0;
        let c2 = 0;
        while (i < end) {
          const b = bytes[i];
          let c3: number;
          if (b < 0x80) {
            c3 = b;
            i++;
          } else if (b < 0xe0) {
            c3 = ((b & 0x1f) << 6) | (bytes[i + 1] & 0x3f);
            i += 2;
          } else if (b < 0xf0) {
            c3 = ((b & 0x0f) << 12) | ((bytes[i + 1] & 0x3f) << 6) | (bytes[i + 2] & 0x3f);
            i += 3;
          } else {
            c3 = ((b & 0x07) << 18) | ((bytes[i + 1] & 0x3f) << 12) | ((bytes[i + 2] & 0x3f) << 6) | (bytes[i + 3] & 0x3f);
            if (c3 > MAX_KEY_CODE_POINT) c3 = MAX_KEY_CODE_POINT;
            i += 4;
          }
          if (have >= n - 1) {
            const a1 = uses1 ? c1 : 0;
            const a2 = uses2 ? c2 : 0;
            const id = (a1 | a2 | c3) < 0x80 ? ascii[(a1 << 14) | (a2 << 7) | c3] - 1 : table.ids[table.slot(a1, a2, c3, a1 * FIRST + a2 * SECOND + c3)] - 1;
            if (lastRow[id] !== mark) {
              lastRow[id] = mark;
              if (dense[id] === 1) {
                bitmaps[base[id] + (row >>> 5)] |= 1 << (row & 31);
              } else {
                const g = id * GROUPS + group;
                const prev = groupLast[g];
                groupLast[g] = mark;
                let gap = prev === 0 ? row : row - prev + 1;
                let p = cursor[g];
                // inline LEB128: 7 bits a byte, continuation bit 0x80
                while (gap >= 0x80) {
                  gaps[p++] = (gap & 0x7f) | 0x80;
                  gap >>>= 7;
                }
                gaps[p++] = gap;
                cursor[g] = p;
              }
            }
          }
          c1 = c2;
          c2 = c3;
          have++;
        }
      }
    }
    return { keys, counts: listCounts, groupCounts, refs, bitmaps, gaps };
  } finally {
    // Leave the ASCII table zeroed for the next build.
    for (let id = 0; id < lists; id++) {
      const key = listKeys[id];
      const c1 = Math.floor(key / FIRST);
      const c2 = Math.floor(key / SECOND) % SECOND;
      const c3 = key % SECOND;
      if ((c1 | c2 | c3) < 0x80) ascii[(c1 << 14) | (c2 << 7) | c3] = 0;
    }
  }
}

/** Index of `key` in `index.keys`, or -1: binary search, O(log K). */
export function findList(index: TrigramIndex, key: number): number {
  const keys = index.keys;
  let lo = 0;
  let hi = keys.length - 1;
  while (lo <= hi) {
    const mid = (lo + hi) >>> 1;
    const k = keys[mid];
    if (k < key) lo = mid + 1;
    else if (k > key) hi = mid - 1;
    else return mid;
  }
  return -1;
}

/**
 * The bitmap of dense list `k` (see {@link isDense}): a view into the index, ceil(rowCount/32)
 * words, every group's rows. Read-only: copy it before changing it.
 */
export function denseBitmap(index: TrigramIndex, k: number, rowCount: number): Uint32Array {
  const words = (rowCount + 31) >>> 5;
  const at = index.refs[k * groupsOf(index)];
  return index.bitmaps.subarray(at, at + words);
}

/**
 * Decodes `count` rows of one group of a sparse list, from its LEB128 gaps at byte `at` of
 * `gaps` (trigram-index.ts `gaps`: the first row, then each row minus the previous one), into
 * `out` from index `o`; O(count). {@link setListBits} has its own copy, inlined for speed.
 */
export function decodeRowsInto(gaps: Uint8Array, at: number, count: number, out: Uint32Array, o: number): void {
  let row = 0;
  for (let i = 0; i < count; i++) {
    // inline LEB128: 7 bits a byte, low first, continuation bit 0x80
    let b = gaps[at++];
    let gap = b & 0x7f;
    let shift = 7;
    while (b & 0x80) {
      b = gaps[at++];
      gap |= (b & 0x7f) << shift;
      shift += 7;
    }
    // >>> 0: a 5-byte gap sets bit 31, which | leaves as a sign
    row += gap >>> 0;
    out[o + i] = row;
  }
}

/** The first `limit` rows of group `c` of sparse list `k`, decoded from its gaps. */
function decodeGroup(index: TrigramIndex, k: number, c: number, limit: number): Uint32Array {
  const GROUPS = groupsOf(index);
  const rows = new Uint32Array(Math.min(index.groupCounts[k * GROUPS + c], limit));
  decodeRowsInto(index.gaps, index.refs[k * GROUPS + c], rows.length, rows, 0);
  return rows;
}

/**
 * Sets in `bits` (ceil(rowCount / 32) words) the rows of sparse list `k` whose group (partition
 * code) is in `mask`, decoding its groups straight into the bitmap: O(rows), nothing allocated.
 */
export function setListBits(index: TrigramIndex, k: number, mask: number, bits: Uint32Array): void {
  const gaps = index.gaps;
  const GROUPS = groupsOf(index);
  for (let c = 0; c < GROUPS; c++) {
    if (((mask >>> c) & 1) === 0) continue;
    const count = index.groupCounts[k * GROUPS + c];
    let at = index.refs[k * GROUPS + c];
    let row = 0;
    for (let i = 0; i < count; i++) {
      // {@link decodeRowsInto} inlined: a scratch list between the decoding and the bits cost ~10%
      let b = gaps[at++];
      let gap = b & 0x7f;
      let shift = 7;
      while (b & 0x80) {
        b = gaps[at++];
        gap |= (b & 0x7f) << shift;
        shift += 7;
      }
      row += gap >>> 0;
      bits[row >>> 5] |= 1 << (row & 31);
    }
  }
}

/**
 * Every row of sparse list `k`, group by group (partition code 0's rows ascending, then code
 * 1's…), without merging them: `rows` (length the list's count) and where each group's rows start
 * (`starts`, length S + 1, the last the count). Decoding is ~3 ns a row; merging the groups into
 * one ascending list would cost several times that (an unpredictable branch a row), so a caller
 * that narrows the rows first merges only what is left ({@link mergeGroups}).
 */
export function listGroups(index: TrigramIndex, k: number): { rows: Uint32Array; starts: Uint32Array } {
  const GROUPS = groupsOf(index);
  const rows = new Uint32Array(index.counts[k]);
  const starts = new Uint32Array(GROUPS + 1);
  let o = 0;
  for (let c = 0; c < GROUPS; c++) {
    starts[c] = o;
    const count = index.groupCounts[k * GROUPS + c];
    decodeRowsInto(index.gaps, index.refs[k * GROUPS + c], count, rows, o);
    o += count;
  }
  starts[GROUPS] = o;
  return { rows, starts };
}

/**
 * The rows of several groups (each ascending, back to back: group g is `rows[starts[g] ..
 * starts[g + 1])`, length S + 1), merged into one ascending list (rows of different groups are
 * distinct). O(rows · S).
 */
export function mergeGroups(rows: Uint32Array, starts: Uint32Array): Uint32Array {
  let merged: Uint32Array | null = null;
  for (let g = 0; g + 1 < starts.length; g++) {
    if (starts[g + 1] === starts[g]) continue;
    const group = rows.subarray(starts[g], starts[g + 1]);
    merged = merged === null ? group.slice() : mergeRows(merged, group, Number.POSITIVE_INFINITY);
  }
  return merged ?? new Uint32Array(0);
}

/** The first `limit` rows of the union of two ascending, disjoint row lists. */
function mergeRows(a: Uint32Array, b: Uint32Array, limit: number): Uint32Array {
  const out = new Uint32Array(Math.min(a.length + b.length, limit));
  let i = 0;
  let j = 0;
  for (let k = 0; k < out.length; k++) out[k] = j >= b.length || (i < a.length && a[i] < b[j]) ? a[i++] : b[j++];
  return out;
}

/**
 * The rows of list `k` whose group (partition code) is in `mask`, ascending, at most the first
 * `limit`. A sparse list decodes just the groups asked for (and of each at most `limit` rows),
 * merging them: O(rows returned · S). A dense list reads its bitmap, O(rowCount / 32 + rows);
 * it has no groups, so `mask` must then hold every group (-1, the default, does).
 * @throws RangeError for a mask of some groups on a dense list.
 */
export function listRows(index: TrigramIndex, k: number, rowCount: number, limit = Number.POSITIVE_INFINITY, mask = -1): Uint32Array {
  const GROUPS = groupsOf(index);
  const all = GROUPS >= 32 ? -1 : (1 << GROUPS) - 1;
  if ((mask & all) === all) mask = all;
  const total = index.counts[k];
  if (isDense(total, rowCount)) {
    if (mask !== all) throw new RangeError("a dense posting list has no groups");
    const rows = rowsOfBitmap(denseBitmap(index, k, rowCount), total);
    return limit < rows.length ? rows.slice(0, limit) : rows;
  }
  let rows: Uint32Array | null = null;
  for (let c = 0; c < GROUPS; c++) {
    if (((mask >>> c) & 1) === 0 || index.groupCounts[k * GROUPS + c] === 0) continue;
    const group = decodeGroup(index, k, c, limit);
    rows = rows === null ? group : mergeRows(rows, group, limit);
  }
  return rows ?? new Uint32Array(0);
}

/**
 * Every value's decimal form as JSON writes it (`String(x)` for a finite number), ASCII, back to
 * back: value r is `bytes[offsets[r] .. offsets[r+1])` — what a text filter or a search term on a
 * number key compares (docs/api.md "Filter model"; never folded further: digits, sign,
 * point and a lower-case exponent).
 * @param values finite numbers; length n
 * @returns offsets of length n + 1, in bytes
 */
export function decimalStrings(values: Float64Array): { bytes: Uint8Array; offsets: Uint32Array } {
  const n = values.length;
  const offsets = new Uint32Array(n + 1);
  let bytes = new Uint8Array(Math.max(64, n * 8));
  let at = 0;
  for (let row = 0; row < n; row++) {
    const text = String(values[row]);
    if (at + text.length > bytes.length) {
      const grownBytes = new Uint8Array(Math.max(bytes.length * 2, at + text.length));
      grownBytes.set(bytes.subarray(0, at));
      bytes = grownBytes;
    }
    for (let i = 0; i < text.length; i++) bytes[at++] = text.charCodeAt(i);
    offsets[row + 1] = at;
  }
  return { bytes: bytes.subarray(0, at), offsets };
}
