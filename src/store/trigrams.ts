/**
 * Byte-level trigram posting lists over a folded string column: the index that turns a
 * substring filter into one posting list (a 3-byte needle) or an intersection of a few.
 */
import type { TrigramIndex } from "./types.ts";

/** Number of possible 3-byte keys (2^24). */
const KEY_SPACE = 1 << 24;

/** Scratch tables over the 2^24 key space, allocated once per process and left zeroed. */
let scratch: { counts: Uint32Array; lastRow: Uint32Array } | null = null;

/**
 * Builds the trigram index of `rowCount` folded strings packed as `bytes`/`offsets`
 * (value r is `bytes[offsets[r] .. offsets[r+1])`). Every distinct 3-byte sequence of a value
 * lists that row once; lists are ascending in row number. Uses two 64 MiB scratch tables,
 * kept for the next build; only the keys touched are visited, so small builds are cheap.
 * @throws RangeError when the postings exceed 2^32 entries.
 */
export function buildTrigramIndex(bytes: Uint8Array, offsets: Uint32Array, rowCount: number): TrigramIndex {
  scratch ??= { counts: new Uint32Array(KEY_SPACE), lastRow: new Uint32Array(KEY_SPACE) };
  const { counts, lastRow } = scratch;
  let touched = new Uint32Array(1024);
  let distinct = 0;
  let total = 0;
  for (let row = 0; row < rowCount; row++) {
    const start = offsets[row];
    const end = offsets[row + 1];
    // lastRow[key] = 1 + the last row that counted key, to count each row once per key.
    const mark = row + 1;
    for (let i = start; i + 2 < end; i++) {
      const key = (bytes[i] << 16) | (bytes[i + 1] << 8) | bytes[i + 2];
      if (lastRow[key] !== mark) {
        lastRow[key] = mark;
        if (counts[key]++ === 0) {
          if (distinct === touched.length) {
            const grown = new Uint32Array(touched.length * 2);
            grown.set(touched);
            touched = grown;
          }
          touched[distinct++] = key;
        }
        total++;
      }
    }
  }
  if (total > 0xffffffff) throw new RangeError("trigram postings exceed 2^32 entries");

  const keys = touched.slice(0, distinct).sort();
  const listOffsets = new Uint32Array(distinct + 1);
  // Reuse counts as each key's write cursor into postings.
  let cursor = 0;
  for (let k = 0; k < distinct; k++) {
    const key = keys[k];
    const c = counts[key];
    listOffsets[k] = cursor;
    counts[key] = cursor;
    cursor += c;
    lastRow[key] = 0;
  }
  listOffsets[distinct] = cursor;

  const postings = new Uint32Array(total);
  for (let row = 0; row < rowCount; row++) {
    const start = offsets[row];
    const end = offsets[row + 1];
    const mark = row + 1;
    for (let i = start; i + 2 < end; i++) {
      const key = (bytes[i] << 16) | (bytes[i + 1] << 8) | bytes[i + 2];
      if (lastRow[key] !== mark) {
        lastRow[key] = mark;
        postings[counts[key]++] = row;
      }
    }
  }
  // Leave the scratch tables zeroed for the next build.
  for (let k = 0; k < distinct; k++) {
    counts[keys[k]] = 0;
    lastRow[keys[k]] = 0;
  }
  return { keys, offsets: listOffsets, postings };
}

/**
 * The posting list of one trigram key: ascending row numbers, a view into `index.postings`;
 * empty when no row contains the key. Binary search over `index.keys`: O(log K).
 */
export function postingList(index: TrigramIndex, key: number): Uint32Array {
  const keys = index.keys;
  let lo = 0;
  let hi = keys.length - 1;
  while (lo <= hi) {
    const mid = (lo + hi) >>> 1;
    const k = keys[mid];
    if (k < key) lo = mid + 1;
    else if (k > key) hi = mid - 1;
    else return index.postings.subarray(index.offsets[mid], index.offsets[mid + 1]);
  }
  return index.postings.subarray(0, 0);
}
